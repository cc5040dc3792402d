//===- Tessera.cpp - The kernel-writing C++ API ---------------------------===//
//
// This file implements the frontend: it builds tile dialect IR behind the
// opaque handles of Tessera.h, with MLIR locations at the author's lines, and
// hands finished kernels to the compiler driver.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

#include <algorithm>

namespace tessera {

namespace detail {

thread_local BuilderState *BuilderState::current = nullptr;
thread_local BuilderState *BuilderState::latest = nullptr;
thread_local std::vector<BuilderState *> BuilderState::live;
thread_local std::string BuilderState::orphanErrors;

void recordMisuse(const std::string &message) {
  if (BuilderState *s = BuilderState::current ? BuilderState::current : BuilderState::latest)
    s->errors += message + "\n";
  else
    BuilderState::orphanErrors += message + "\n";
}

} // namespace detail

using namespace detail;

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

struct Kernel::Impl {
  absl::Status status;
  std::string name;
  std::string text;
};

Kernel::Kernel() : impl_(std::make_unique<Impl>()) {
  // A Kernel holds something only once KernelBuilder::Build fills it.
  impl_->status = absl::FailedPreconditionError(
      "tessera: this Kernel was default-constructed; KernelBuilder::Build makes kernels");
}
Kernel::~Kernel() = default;
Kernel::Kernel(Kernel &&) = default;
Kernel &Kernel::operator=(Kernel &&) = default;

namespace {

/// What every call on a moved-from Kernel (whose Impl went to the Kernel it
/// was moved to) reports. Never destroyed: status() returns a reference.
const absl::Status &movedFromStatus() {
  static const absl::Status *status = new absl::Status(absl::FailedPreconditionError(
      "tessera: this Kernel was moved from; use the Kernel it was moved to"));
  return *status;
}

} // namespace

const absl::Status &Kernel::status() const { return impl_ ? impl_->status : movedFromStatus(); }
const std::string &Kernel::name() const {
  static const std::string *none = new std::string;
  return impl_ ? impl_->name : *none;
}
std::string Kernel::ToString() const { return impl_ ? impl_->text : std::string(); }

namespace {

/// "file:line:col: error: message" for a diagnostic, plus its notes; with
/// `labelRemarks`, remarks read "file:line:col: remark: message".
void formatDiagnostic(mlir::Diagnostic &diag, std::string &out, bool labelRemarks = false) {
  llvm::raw_string_ostream os(out);
  auto printLocation = [&](mlir::Location loc) {
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
      os << file.getFilename().getValue() << ":" << file.getLine() << ":" << file.getColumn();
    else
      os << loc;
  };
  printLocation(diag.getLocation());
  bool remark = labelRemarks && diag.getSeverity() == mlir::DiagnosticSeverity::Remark;
  os << ": " << (diag.getSeverity() == mlir::DiagnosticSeverity::Error ? "error: " : "")
     << (remark ? "remark: " : "") << diag << "\n";
  for (mlir::Diagnostic &note : diag.getNotes()) {
    printLocation(note.getLocation());
    os << ": note: " << note << "\n";
  }
}

/// Parses the kernel's text in a fresh context and compiles it, collecting
/// diagnostics into the returned status.
/// With `remarks`, each remark (why an atom, strategy or schedule was not
/// used) is also appended there on its own.
absl::StatusOr<compiler::CompiledModule> compileText(const std::string &text,
                                                     const CompileOptions &options,
                                                     std::vector<compiler::Stage> keep = {},
                                                     std::vector<std::string> *remarks = nullptr) {
  mlir::DialectRegistry registry;
  registerTesseraDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    formatDiagnostic(diag, diagnostics);
    if (remarks && diag.getSeverity() == mlir::DiagnosticSeverity::Remark) {
      std::string remark;
      formatDiagnostic(diag, remark, /*labelRemarks=*/true);
      if (!remark.empty() && remark.back() == '\n')
        remark.pop_back();
      remarks->push_back(std::move(remark));
    }
    return mlir::success();
  });
  // KernelBuilder bounds what it builds; this guards the parser all the
  // same (its recursion is what deep IR would overflow).
  if (std::optional<compiler::UnsafeSource> unsafe = compiler::findUnsafeSource(text))
    return absl::InvalidArgumentError("the kernel's IR cannot be parsed safely: " +
                                      unsafe->message);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return absl::InvalidArgumentError("cannot parse the kernel's IR: " + diagnostics);
  compiler::CompileOptions compileOptions;
  compileOptions.target = options.target;
  compileOptions.assemble = options.assemble;
  compileOptions.fastMath = options.fastMath;
  compileOptions.optLevel = options.optLevel;
  compileOptions.ptxasPath = options.ptxasPath;
  if (!options.libdevicePath.empty())
    compileOptions.libdevicePath = options.libdevicePath;
  compileOptions.keepStages = std::move(keep);
  auto compiled = compiler::compileModule(*module, compileOptions);
  if (mlir::failed(compiled))
    return absl::InvalidArgumentError(diagnostics.empty() ? "compilation failed" : diagnostics);
  return std::move(*compiled);
}

} // namespace

absl::StatusOr<std::string> Kernel::GetKernelSource(Stage stage,
                                                    const CompileOptions &options) const {
  if (!status().ok())
    return status();
  static constexpr compiler::Stage kStages[] = {
      compiler::Stage::Tile, compiler::Stage::Gpu, compiler::Stage::Lowered,
      compiler::Stage::LLVM, compiler::Stage::PTX, compiler::Stage::Cubin};
  compiler::Stage wanted = kStages[static_cast<int>(stage)];
  CompileOptions withCubin = options;
  withCubin.assemble |= wanted == compiler::Stage::Cubin;
  auto compiled = compileText(impl_->text, withCubin, {wanted});
  if (!compiled.ok())
    return compiled.status();
  return compiled->getStage(wanted);
}

absl::StatusOr<std::vector<std::string>> Kernel::GetRemarks(const CompileOptions &options) const {
  if (!status().ok())
    return status();
  std::vector<std::string> remarks;
  auto compiled = compileText(impl_->text, options, {}, &remarks);
  if (!compiled.ok())
    return compiled.status();
  return remarks;
}

absl::StatusOr<runtime::CompiledKernel> Kernel::Compile(const CompileOptions &options) const {
  if (!status().ok())
    return status();
  auto compiled = compileText(impl_->text, options);
  if (!compiled.ok())
    return compiled.status();
  for (runtime::CompiledKernel &kernel : compiled->kernels)
    if (kernel.entry() == impl_->name)
      return std::move(kernel);
  return absl::InternalError("kernel '" + impl_->name + "' missing from its compiled module");
}

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

KernelBuilder::KernelBuilder(std::string name, SourceLoc loc)
    : state_(std::make_unique<BuilderState>()) {
  mlir::DialectRegistry registry;
  registerTesseraDialects(registry);
  state_->context = std::make_unique<mlir::MLIRContext>(registry);
  state_->context->getOrLoadDialect<tile::TileDialect>();
  state_->context->printOpOnDiagnostic(false);
  state_->builder = std::make_unique<mlir::OpBuilder>(state_->context.get());
  // The module takes the builder's line: what the compiler reports about
  // the module as a whole (no ptxas, a failed code generation) names it.
  state_->module = mlir::ModuleOp::create(state_->loc(loc));
  state_->name = std::move(name);
  state_->owner = std::make_shared<HandleOwner>();
  state_->owner->kernel = state_->name;
  state_->errors = std::move(BuilderState::orphanErrors);
  BuilderState::orphanErrors.clear();
  if (!tile::isKernelName(state_->name))
    state_->error("kernel name '" + state_->name + "' " + tile::kKernelNameRule, state_->loc(loc));
  BuilderState::live.push_back(state_.get());
  BuilderState::latest = state_.get();
}

KernelBuilder::~KernelBuilder() {
  // The handles outlive the builder: they now report their use as an error.
  state_->owner->alive = false;
  if (BuilderState::current == state_.get())
    BuilderState::current = nullptr;
  // Builders may end in any order: `latest` is the newest still alive.
  llvm::erase(BuilderState::live, state_.get());
  BuilderState::latest = BuilderState::live.empty() ? nullptr : BuilderState::live.back();
}

namespace {

/// TypeT::get(args), checked: a type the dialect rejects (a dimension not
/// positive, too many elements, no dimensions) is an error at the author's
/// line, reported by Build, and null.
template <typename TypeT, typename... Args>
TypeT checkedType(BuilderState &s, const SourceLoc &loc, Args &&...args) {
  mlir::MLIRContext *ctx = s.context.get();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &diag) {
    formatDiagnostic(diag, diagnostics);
    return mlir::success();
  });
  TypeT type = TypeT::getChecked([&] { return mlir::emitError(s.loc(loc)); }, ctx,
                                 std::forward<Args>(args)...);
  s.errors += diagnostics;
  return type;
}

/// A buffer type; a rejected shape gets a one-element stand-in so that the
/// body still builds (Build reports the error).
tile::BufferType bufferType(BuilderState &s, llvm::ArrayRef<int64_t> shape, DType dtype,
                            tile::MemoryScope scope, const SourceLoc &loc) {
  mlir::Type elementType = toMlirType(s.context.get(), dtype);
  if (auto type = checkedType<tile::BufferType>(s, loc, shape, elementType, scope))
    return type;
  return tile::BufferType::get(s.context.get(), {1}, elementType, scope);
}

} // namespace

tessera::Tensor KernelBuilder::Tensor(const std::string &name, std::vector<Dim> shape,
                                      DType dtype, SourceLoc loc) {
  llvm::SmallVector<int64_t> dims;
  for (const Dim &dim : shape) {
    if (dim.isStatic()) {
      dims.push_back(dim.size());
      continue;
    }
    if (dim.name().empty()) {
      // Dim(-4): a negative static size, not a dynamic dimension.
      state_->error("tensor '" + name + "' has dimension " + std::to_string(dim.size()) +
                        "; sizes are positive, or Dim::Dynamic(name)",
                    state_->loc(loc));
      dims.push_back(1);
      continue;
    }
    if (state_->sizeArgs.count(dim.name())) {
      state_->error("tensor '" + name + "' has dimension '" + dim.name() +
                        "', which is a size argument (SizeArg); a tensor's dimensions are "
                        "Dim::Dynamic",
                    state_->loc(loc));
      dims.push_back(1);
      continue;
    }
    dims.push_back(mlir::ShapedType::kDynamic);
    auto &uses = state_->symbols[dim.name()];
    if (uses.empty())
      state_->symbolOrder.push_back(dim.name());
    uses.push_back(state_->numDynamicDims++);
    state_->dynamicDims.push_back({int(state_->arguments.size()), int(&dim - shape.data())});
    state_->divisibility.push_back(dim.divisibility());
  }
  mlir::Type elementType = toMlirType(state_->context.get(), dtype);
  auto type = checkedType<tile::TileTensorType>(*state_, loc, llvm::ArrayRef<int64_t>(dims),
                                                elementType);
  if (!type)  // reported by Build; a stand-in keeps the body buildable
    type = tile::TileTensorType::get(state_->context.get(),
                                     llvm::SmallVector<int64_t>(std::max<size_t>(1, dims.size()), 1),
                                     elementType);
  state_->arguments.push_back({name, type, shape, state_->loc(loc)});
  state_->owner->arguments.push_back(name);
  return state_->tensor(int(state_->arguments.size()) - 1);
}

Scalar KernelBuilder::ScalarArg(const std::string &name, DType dtype, SourceLoc loc) {
  mlir::Type type = toMlirType(state_->context.get(), dtype);
  state_->arguments.push_back({name, type, {}, state_->loc(loc)});
  state_->owner->arguments.push_back(name);
  // The value exists once Launch creates the kernel; the scalar names the
  // argument and resolves to it inside the body.
  return state_->scalarArgument(int(state_->arguments.size()) - 1);
}

Dim KernelBuilder::SizeArg(const std::string &name, SourceLoc loc) {
  if (state_->symbols.count(name) || state_->sizeArgs.count(name)) {
    state_->error(
        "size argument '" + name + "' has the name of " +
            (state_->symbols.count(name) ? "a tensor dimension" : "another size argument"),
        state_->loc(loc));
    return Dim::Dynamic(name);
  }
  ScalarArg(name, i32, loc);
  state_->sizeArgs[name] = int(state_->arguments.size()) - 1;
  state_->sizeArgOrder.push_back(name);
  return Dim::Dynamic(name);
}

namespace {

/// The grid symbol of dimension `name`: its first tensor dimension, or a
/// size argument after all of them; none when neither has the name.
std::optional<int64_t> gridSymbol(const BuilderState &s, const std::string &name) {
  if (auto it = s.symbols.find(name); it != s.symbols.end())
    return it->second.front();
  auto it = llvm::find(s.sizeArgOrder, name);
  if (it == s.sizeArgOrder.end())
    return std::nullopt;
  return s.numDynamicDims + (it - s.sizeArgOrder.begin());
}

/// Builds the kernel of a Launch whose body takes `indices` block indices.
void launchImpl(BuilderState &s, const std::vector<GridExtent> &grid, int threads, size_t indices,
                const std::function<void(llvm::ArrayRef<Index>)> &body, const SourceLoc &where) {
  if (s.kernel) {
    auto first = mlir::dyn_cast<mlir::FileLineColLoc>(s.kernel.getLoc());
    s.error("Launch is called a second time; kernel '" + s.name + "' has one Launch" +
                (first ? ", at " + first.getFilename().str() + ":" + std::to_string(first.getLine())
                       : std::string()),
            s.loc(where));
    return;
  }
  if (grid.size() != indices) {
    s.error("Launch with a body of " + std::to_string(indices) + " block indices needs " +
                std::to_string(indices) + " grid extents, not " + std::to_string(grid.size()),
            s.loc(where));
    return;
  }
  mlir::MLIRContext *ctx = s.context.get();
  mlir::OpBuilder &b = s.b();
  llvm::SmallVector<mlir::Type> inputs;
  llvm::SmallVector<mlir::Attribute> names;
  for (const auto &arg : s.arguments) {
    inputs.push_back(arg.type);
    names.push_back(b.getStringAttr(arg.name));
  }
  llvm::SmallVector<mlir::AffineExpr> extents;
  for (const GridExtent &extent : grid) {
    if (extent.divisor() < 1) {
      s.error("grid extent CeilDiv by a tile of " + std::to_string(extent.divisor()) +
                  "; tiles must be positive",
              s.loc(where));
      extents.push_back(mlir::getAffineConstantExpr(1, ctx));
      continue;
    }
    if (!extent.dim()) {
      extents.push_back(mlir::getAffineConstantExpr(extent.constant(), ctx));
      continue;
    }
    std::optional<int64_t> symbol = gridSymbol(s, extent.dim()->name());
    if (!symbol) {
      s.error("grid extent uses dimension '" + extent.dim()->name() +
                  "', which no tensor argument has and no size argument is",
              s.loc(where));
      extents.push_back(mlir::getAffineConstantExpr(1, ctx));
      continue;
    }
    mlir::AffineExpr sym = mlir::getAffineSymbolExpr(*symbol, ctx);
    extents.push_back(extent.divisor() == 1 ? sym : sym.ceilDiv(extent.divisor()));
  }
  auto map = mlir::AffineMap::get(0, s.numDynamicDims + int(s.sizeArgOrder.size()), extents, ctx);
  b.setInsertionPointToEnd(s.module->getBody());
  s.kernel = tile::KernelOp::create(b, s.loc(where), s.name, b.getFunctionType(inputs, {}), map,
                                    threads);
  s.kernel.setArgNamesAttr(b.getArrayAttr(names));
  llvm::SmallVector<mlir::NamedAttribute> groups;
  for (const std::string &symbol : s.symbolOrder)
    groups.push_back(b.getNamedAttr(symbol, b.getDenseI64ArrayAttr(s.symbols[symbol])));
  if (!groups.empty())
    s.kernel.setDimGroupsAttr(b.getDictionaryAttr(groups));
  if (llvm::any_of(s.divisibility, [](int64_t d) { return d > 1; }))
    s.kernel.setDimDivisibilityAttr(b.getDenseI64ArrayAttr(s.divisibility));
  if (!s.sizeArgOrder.empty()) {
    llvm::SmallVector<int64_t> sizeArgs;
    for (const std::string &name : s.sizeArgOrder)
      sizeArgs.push_back(s.sizeArgs.at(name));
    s.kernel.setSizeArgsAttr(b.getDenseI64ArrayAttr(sizeArgs));
  }
  b.setInsertionPoint(s.kernel.getBodyBlock().getTerminator());
  llvm::SmallVector<Index> blockIndices;
  for (mlir::BlockArgument arg : s.kernel.getBlockIndices())
    blockIndices.push_back(s.index(arg));
  BuilderState *previous = BuilderState::current;
  BuilderState::current = &s;
  {
    auto statement = s.enter(where);
    body(blockIndices);
  }
  BuilderState::current = previous;
}

} // namespace

void KernelBuilder::Launch(std::vector<GridExtent> grid, int threads,
                           std::function<void(Index)> body, SourceLoc loc) {
  launchImpl(
      *state_, grid, threads, 1, [&](llvm::ArrayRef<Index> ids) { body(ids[0]); }, loc);
}
void KernelBuilder::Launch(std::vector<GridExtent> grid, int threads,
                           std::function<void(Index, Index)> body, SourceLoc loc) {
  launchImpl(
      *state_, grid, threads, 2, [&](llvm::ArrayRef<Index> ids) { body(ids[0], ids[1]); }, loc);
}
void KernelBuilder::Launch(std::vector<GridExtent> grid, int threads,
                           std::function<void(Index, Index, Index)> body, SourceLoc loc) {
  launchImpl(
      *state_, grid, threads, 3, [&](llvm::ArrayRef<Index> ids) { body(ids[0], ids[1], ids[2]); },
      loc);
}

namespace {

/// Whether statement `what` may build here: inside this builder's Launch
/// body, with buffers this builder allocated there. Otherwise an error naming
/// it and the author's line (Build reports it) and false: nothing is built.
bool ready(BuilderState &s, const char *what, const SourceLoc &loc,
           std::initializer_list<const Buffer *> buffers = {}) {
  if (BuilderState::current != &s) {
    s.error(std::string(what) + " is only valid inside KernelBuilder::Launch's body", s.loc(loc));
    return false;
  }
  for (const Buffer *buffer : buffers)
    if (!s.takes(*buffer, s.loc(loc)))
      return false;
  for (const Buffer *buffer : buffers)
    if (!buffer->handle()) {
      s.error(std::string(what) + " uses a buffer that was not allocated inside Launch's body",
              s.loc(loc));
      return false;
    }
  return true;
}

} // namespace

Buffer KernelBuilder::AllocShared(std::vector<int64_t> shape, DType dtype,
                                  const std::string &name, SourceLoc loc) {
  if (!ready(*state_, "AllocShared", loc))
    return Buffer(nullptr);
  auto type = bufferType(*state_, shape, dtype, tile::MemoryScope::shared, loc);
  std::string label = name.empty() ? "shared" + std::to_string(state_->bufferCount++) : name;
  auto op = tile::AllocSharedOp::create(state_->b(), state_->loc(loc), type,
                                        state_->b().getStringAttr(label), nullptr, nullptr,
                                        nullptr);
  return state_->buffer(op.getResult(), label);
}

Buffer KernelBuilder::AllocFragment(std::vector<int64_t> shape, DType dtype,
                                    const std::string &name, SourceLoc loc) {
  if (!ready(*state_, "AllocFragment", loc))
    return Buffer(nullptr);
  auto type = bufferType(*state_, shape, dtype, tile::MemoryScope::fragment, loc);
  std::string label = name.empty() ? "fragment" + std::to_string(state_->bufferCount++) : name;
  auto op = tile::AllocFragmentOp::create(state_->b(), state_->loc(loc), type,
                                          state_->b().getStringAttr(label), nullptr, nullptr,
                                          nullptr);
  return state_->buffer(op.getResult(), label);
}

namespace {

/// tile.copy's tensor_dims for a slice (TileRef::Along), else null.
mlir::DenseI64ArrayAttr sliceDims(BuilderState &s, const TileRef &tile) {
  return tile.dims.empty() ? nullptr : s.b().getDenseI64ArrayAttr(tile.dims);
}

/// tile.copy's `until` for a bounded tile (TileRef::Until), else null.
mlir::Value untilValue(BuilderState &s, const TileRef &tile) {
  return tile.until ? s.materialize(*tile.until) : mlir::Value();
}

/// tile.copy's `until_axis` when the bound is not on the first axis (the
/// verifier checks it is one of the tile's).
void setUntilAxis(tile::CopyOp copy, const TileRef &tile) {
  if (tile.until && tile.untilAxis != 0)
    copy.setUntilAxis(tile.untilAxis);
}

/// tile.copy of `tensorTile` into `buffer` (`intoTensor` false) or of
/// `buffer` into it (true; with `atomic`, an atomic add); `what` names the
/// call in errors.
void copyWithTile(BuilderState &s, const char *what, const TileRef &tensorTile,
                  const Buffer &buffer, bool intoTensor, bool atomic, const SourceLoc &loc) {
  if (!ready(s, what, loc, {&buffer}) || !s.takes(tensorTile, s.loc(loc)))
    return;
  llvm::SmallVector<mlir::Value> offsets;
  for (const Index &i : tensorTile.offsets)
    offsets.push_back(s.materialize(i));
  mlir::Value tensor = s.tensorValue(tensorTile.argument);
  mlir::Value bufferValue = BuilderState::value(buffer.handle());
  mlir::ValueRange none;
  auto copy =
      intoTensor
          ? tile::CopyOp::create(s.b(), s.loc(loc), bufferValue, none, tensor, offsets,
                                 untilValue(s, tensorTile), nullptr, sliceDims(s, tensorTile))
          : tile::CopyOp::create(s.b(), s.loc(loc), tensor, offsets, bufferValue, none,
                                 untilValue(s, tensorTile), nullptr, sliceDims(s, tensorTile));
  setUntilAxis(copy, tensorTile);
  if (atomic)
    copy.setAtomicAdd(true);
}

} // namespace

void KernelBuilder::Copy(const TileRef &src, const Buffer &dst, SourceLoc loc) {
  copyWithTile(*state_, "Copy", src, dst, /*intoTensor=*/false, /*atomic=*/false, loc);
}

void KernelBuilder::Copy(const Buffer &src, const TileRef &dst, SourceLoc loc) {
  copyWithTile(*state_, "Copy", dst, src, /*intoTensor=*/true, /*atomic=*/false, loc);
}

void KernelBuilder::AtomicAdd(const Buffer &src, const TileRef &dst, SourceLoc loc) {
  copyWithTile(*state_, "AtomicAdd", dst, src, /*intoTensor=*/true, /*atomic=*/true, loc);
}

void KernelBuilder::Copy(const Buffer &src, const Buffer &dst, SourceLoc loc) {
  if (!ready(*state_, "Copy", loc, {&src, &dst}))
    return;
  BuilderState &s = *state_;
  tile::CopyOp::create(s.b(), s.loc(loc), BuilderState::value(src.handle()), mlir::ValueRange{},
                       BuilderState::value(dst.handle()), mlir::ValueRange{}, mlir::Value(),
                       nullptr, nullptr);
}

void KernelBuilder::Fill(const Buffer &buffer, double value, SourceLoc loc) {
  if (!ready(*state_, "Fill", loc, {&buffer}))
    return;
  BuilderState &s = *state_;
  mlir::Value b = BuilderState::value(buffer.handle());
  mlir::Type type = mlir::cast<tile::BufferType>(b.getType()).getElementType();
  tile::FillOp::create(s.b(), s.loc(loc), b, s.materialize(Scalar(value), type));
}

namespace {

/// The kernel a schedule call (`what`) applies to: it is called inside
/// Launch's body; otherwise an error and null.
tile::KernelOp scheduledKernel(BuilderState &s, const char *what, const SourceLoc &loc) {
  if (!s.kernel)
    s.error(std::string(what) + " is called inside Launch's body", s.loc(loc));
  return s.kernel;
}

} // namespace

void KernelBuilder::PingPong(SourceLoc loc) {
  if (tile::KernelOp kernel = scheduledKernel(*state_, "PingPong", loc))
    kernel.setPingpong(true);
}

void KernelBuilder::Persistent(SourceLoc loc) {
  if (tile::KernelOp kernel = scheduledKernel(*state_, "Persistent", loc))
    kernel.setPersistent(true);
}

void KernelBuilder::StreamK(SourceLoc loc) {
  if (tile::KernelOp kernel = scheduledKernel(*state_, "StreamK", loc)) {
    kernel.setPersistent(true);
    kernel.setStreamK(true);
  }
}

void KernelBuilder::EdgeLoop(SourceLoc loc) {
  if (tile::KernelOp kernel = scheduledKernel(*state_, "EdgeLoop", loc))
    kernel.setEdgeLoop(true);
}

void KernelBuilder::Multicast(int64_t blocks, SourceLoc loc) {
  if (tile::KernelOp kernel = scheduledKernel(*state_, "Multicast", loc)) {
    kernel.setMulticast(true);
    if (blocks != 2)
      kernel.setMulticastBlocksAttr(state_->b().getI64IntegerAttr(blocks));
  }
}

void KernelBuilder::Clear(const Buffer &buffer, SourceLoc loc) {
  if (!ready(*state_, "Clear", loc, {&buffer}))
    return;
  BuilderState &s = *state_;
  tile::ClearOp::create(s.b(), s.loc(loc), BuilderState::value(buffer.handle()));
}

namespace {

void parallelImpl(BuilderState &s, const std::vector<int64_t> &extents,
                  const std::function<void(llvm::ArrayRef<Index>)> &body,
                  const SourceLoc &where) {
  if (!ready(s, "Parallel", where) || !s.nestable("Parallel", s.loc(where)))
    return;
  auto loop = tile::ParallelOp::create(s.b(), s.loc(where), extents);
  mlir::OpBuilder::InsertionGuard guard(s.b());
  s.b().setInsertionPoint(loop.getBodyBlock().getTerminator());
  llvm::SmallVector<Index> ivs;
  for (mlir::BlockArgument iv : loop.getInductionVars())
    ivs.push_back(s.index(iv));
  auto statement = s.enter(where);
  body(ivs);
}

} // namespace

void KernelBuilder::Parallel(std::vector<int64_t> extents, std::function<void(Index)> body,
                             SourceLoc loc) {
  if (extents.size() != 1) {
    state_->error("Parallel with a one-index body needs one extent, not " +
                      std::to_string(extents.size()),
                  state_->loc(loc));
    return;
  }
  parallelImpl(*state_, extents, [&](llvm::ArrayRef<Index> ivs) { body(ivs[0]); }, loc);
}

void KernelBuilder::Parallel(std::vector<int64_t> extents, std::function<void(Index, Index)> body,
                             SourceLoc loc) {
  if (extents.size() != 2) {
    state_->error("Parallel with a two-index body needs two extents, not " +
                      std::to_string(extents.size()),
                  state_->loc(loc));
    return;
  }
  parallelImpl(*state_, extents, [&](llvm::ArrayRef<Index> ivs) { body(ivs[0], ivs[1]); }, loc);
}

void KernelBuilder::Gemm(const Buffer &a, const Buffer &b, const Buffer &c, bool transposeA,
                         bool transposeB, const std::string &atom, SourceLoc loc) {
  Gemm(a, b, c, Precision::kIEEE, transposeA, transposeB, atom, loc);
}

void KernelBuilder::Gemm(const Buffer &a, const Buffer &b, const Buffer &c, Precision precision,
                         bool transposeA, bool transposeB, const std::string &atom,
                         SourceLoc loc) {
  if (!ready(*state_, "Gemm", loc, {&a, &b, &c}))
    return;
  BuilderState &s = *state_;
  tile::PrecisionAttr precisionAttr;
  if (precision == Precision::kTF32)
    precisionAttr = tile::PrecisionAttr::get(s.context.get(), tile::Precision::tf32);
  tile::GemmOp::create(s.b(), s.loc(loc), BuilderState::value(a.handle()),
                       BuilderState::value(b.handle()), BuilderState::value(c.handle()),
                       transposeA, transposeB,
                       atom.empty() ? nullptr : s.b().getStringAttr(atom), precisionAttr);
}

namespace {

void reduceImpl(BuilderState &s, tile::ReduceKind kind, const Buffer &src, const Buffer &dst,
                bool clear, const SourceLoc &where) {
  if (!ready(s, "Reduce", where, {&src, &dst}))
    return;
  tile::ReduceOp::create(s.b(), s.loc(where), kind, BuilderState::value(src.handle()),
                         BuilderState::value(dst.handle()), clear, mlir::Value());
}

} // namespace

void KernelBuilder::ReduceMax(const Buffer &src, const Buffer &dst, bool clear, SourceLoc loc) {
  reduceImpl(*state_, tile::ReduceKind::max, src, dst, clear, loc);
}
void KernelBuilder::ReduceMin(const Buffer &src, const Buffer &dst, bool clear, SourceLoc loc) {
  reduceImpl(*state_, tile::ReduceKind::min, src, dst, clear, loc);
}
void KernelBuilder::ReduceSum(const Buffer &src, const Buffer &dst, bool clear, SourceLoc loc) {
  reduceImpl(*state_, tile::ReduceKind::sum, src, dst, clear, loc);
}
void KernelBuilder::ReduceAbsSum(const Buffer &src, const Buffer &dst, bool clear,
                                 SourceLoc loc) {
  reduceImpl(*state_, tile::ReduceKind::abssum, src, dst, clear, loc);
}

void KernelBuilder::Pipelined(const Index &count, int stages, std::function<void(Index)> body,
                              SourceLoc loc) {
  if (!ready(*state_, "Pipelined", loc) || !state_->takes(count, state_->loc(loc)) ||
      !state_->nestable("Pipelined", state_->loc(loc)))
    return;
  BuilderState &s = *state_;
  auto loop = tile::PipelinedOp::create(s.b(), s.loc(loc), s.materialize(count), stages);
  mlir::OpBuilder::InsertionGuard guard(s.b());
  s.b().setInsertionPoint(loop.getBodyBlock().getTerminator());
  auto statement = s.enter(loc);
  body(s.index(loop.getInductionVar()));
}

void KernelBuilder::Pipelined(int64_t count, int stages, std::function<void(Index)> body,
                              SourceLoc loc) {
  Pipelined(Index(count), stages, std::move(body), loc);
}

void KernelBuilder::Pipelined(const GridExtent &count, int stages,
                              std::function<void(Index)> body, SourceLoc loc) {
  if (!ready(*state_, "Pipelined", loc))
    return;
  BuilderState &s = *state_;
  if (count.divisor() < 1) {
    s.error("Pipelined count CeilDiv by a tile of " + std::to_string(count.divisor()) +
                "; tiles must be positive",
            s.loc(loc));
    return;
  }
  if (!count.dim()) {
    Pipelined(Index(count.constant()), stages, std::move(body), loc);
    return;
  }
  if (auto size = s.sizeArgs.find(count.dim()->name()); size != s.sizeArgs.end()) {
    // A negative size runs no iteration (the runtime refuses one only where
    // it sizes the grid).
    Index extent = Max(ToIndex(s.scalarArgument(size->second), loc), Index(0));
    Pipelined(count.divisor() == 1 ? extent : CeilDiv(extent, Index(count.divisor())), stages,
              std::move(body), loc);
    return;
  }
  auto it = s.symbols.find(count.dim()->name());
  if (it == s.symbols.end()) {
    s.error("Pipelined count uses dimension '" + count.dim()->name() +
                "', which no tensor argument has and no size argument is",
            s.loc(loc));
    return;
  }
  auto [argument, axis] = s.dynamicDims[it->second.front()];
  mlir::Location where = s.loc(loc);
  // The dimension's first tensor may be one declared after Launch.
  if (!s.launched(argument, "Tensor '" + s.arguments[argument].name + "'", where))
    return;
  mlir::Value extent = tile::DimOp::create(s.b(), where, s.kernel.getKernelArgument(argument),
                                           static_cast<int64_t>(axis));
  if (count.divisor() != 1) {
    mlir::Value d = mlir::arith::ConstantIndexOp::create(s.b(), where, count.divisor());
    extent = mlir::arith::CeilDivUIOp::create(s.b(), where, extent, d);
  }
  Pipelined(s.index(extent), stages, std::move(body), loc);
}

Kernel KernelBuilder::Build() {
  Kernel kernel;
  kernel.impl_->status = absl::OkStatus();
  kernel.impl_->name = state_->name;
  if (!state_->kernel) {
    // At the builder's line (the module's), after any other error.
    state_->error("kernel '" + state_->name +
                      "' was never launched; KernelBuilder::Launch builds its body",
                  state_->module->getLoc());
    kernel.impl_->status = absl::FailedPreconditionError(state_->errors);
    return kernel;
  }
  if (!state_->errors.empty()) {
    kernel.impl_->status = absl::InvalidArgumentError(state_->errors);
    return kernel;
  }
  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(state_->context.get(), [&](mlir::Diagnostic &diag) {
      formatDiagnostic(diag, diagnostics);
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(*state_->module))) {
      kernel.impl_->status = absl::InvalidArgumentError(diagnostics);
      return kernel;
    }
  }
  llvm::raw_string_ostream os(kernel.impl_->text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  state_->module->print(os, flags);
  return kernel;
}

} // namespace tessera
