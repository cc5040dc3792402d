//===- BuilderState.h - The frontend's state while a kernel is built -*- C++ -*-===//
//
// Private to frontend/: the state a KernelBuilder holds (thread-local, so
// that Index and Scalar arithmetic can build operations) and the helpers
// that build scalar and index arithmetic, shared by Tessera.cpp (kernels and
// their statements) and Scalars.cpp (dimensions, indices and scalars).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_FRONTEND_INTERNAL_BUILDERSTATE_H
#define TESSERA_FRONTEND_INTERNAL_BUILDERSTATE_H

#include "frontend/Tessera.h"

#include "backends/common/Dialects.h"
#include "driver/Compiler.h"
#include "driver/SourceChecks.h"
#include "ir/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>
#include <optional>

namespace tessera {

namespace detail {

/// What a handle knows of the KernelBuilder that made it (Tessera.h): enough
/// to name the kernel and the handle in a diagnostic after the builder, its
/// MLIR context and the handle's IR are gone.
struct HandleOwner {
  /// The kernel's name.
  std::string kernel;
  /// False once the KernelBuilder is destroyed.
  bool alive = true;
  /// The names of the kernel's arguments and buffers, by number.
  std::vector<std::string> arguments;
  std::vector<std::string> buffers;
};

/// Everything a KernelBuilder holds; the current one is thread-local so that
/// Index and Scalar arithmetic can build operations.
struct BuilderState {
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<mlir::OpBuilder> builder;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string name;
  /// Shared with every handle this builder makes.
  HandleOwnerRef owner;
  tile::KernelOp kernel;

  struct Argument {
    std::string name;
    mlir::Type type;
    std::vector<Dim> shape;
    mlir::Location loc;
    /// A TensorAt view's value (made in the body); null for a kernel
    /// argument.
    mlir::Value view = nullptr;
  };
  std::vector<Argument> arguments;
  /// Dynamic dimension symbol -> dynamic dimension numbers.
  std::map<std::string, std::vector<int64_t>> symbols;
  std::vector<std::string> symbolOrder;
  /// Dynamic dimension number -> (tensor argument, axis).
  std::vector<std::pair<int, int>> dynamicDims;
  /// Dynamic dimension number -> promised divisibility.
  std::vector<int64_t> divisibility;
  int numDynamicDims = 0;
  /// Size argument name -> its argument number (KernelBuilder::SizeArg), and
  /// the names in declaration order: the grid's symbols after the tensor
  /// dimensions.
  std::map<std::string, int> sizeArgs;
  std::vector<std::string> sizeArgOrder;
  int bufferCount = 0;
  std::string errors;

  /// The state whose Launch body is being built on this thread, if any.
  static thread_local BuilderState *current;
  /// The state of the KernelBuilder created last on this thread and still
  /// alive: where misuse outside any Launch body is recorded.
  static thread_local BuilderState *latest;
  /// Misuse recorded while no KernelBuilder was alive on this thread; the
  /// next one created adopts it.
  static thread_local std::string orphanErrors;
  /// The states of this thread's live KernelBuilders, in creation order
  /// (`latest` is the last; builders may end in any order).
  static thread_local std::vector<BuilderState *> live;

  mlir::Location loc(const SourceLoc &where) {
    return mlir::FileLineColLoc::get(context.get(), where.file ? where.file : "<unknown>",
                                     where.line, 1);
  }
  /// The location of the innermost statement whose body is being built
  /// (Launch, Parallel, Pipelined): element reads and writes and scalar
  /// arithmetic have no SourceLoc of their own, so their diagnostics point
  /// at that statement's line.
  std::optional<mlir::Location> statement;
  mlir::Location here() { return statement ? *statement : b().getUnknownLoc(); }
  /// True while a named expression function (Select, Cast, Max, ...) builds
  /// its operations at the author's call (ExpressionAt).
  bool inExpression = false;
  /// Sets `statement` to `where` until the returned guard ends.
  auto enter(const SourceLoc &where) {
    std::optional<mlir::Location> saved = statement;
    statement = loc(where);
    return llvm::scope_exit([this, saved] { statement = saved; });
  }
  mlir::OpBuilder &b() { return *builder; }
  /// True while a Parallel body is being built.
  bool inParallel() {
    mlir::Block *block = b().getInsertionBlock();
    return block && mlir::isa_and_nonnull<tile::ParallelOp>(block->getParentOp());
  }

  static mlir::Value value(void *handle) { return mlir::Value::getFromOpaquePointer(handle); }
  /// Handles of this builder's values.
  Index index(mlir::Value v) { return Index(v.getAsOpaquePointer(), owner, Index::FromHandle()); }
  Scalar scalar(mlir::Value v) { return Scalar(v.getAsOpaquePointer(), owner); }
  Buffer buffer(mlir::Value v, std::string label) {
    owner->buffers.push_back(std::move(label));
    return Buffer(v.getAsOpaquePointer(), owner, int(owner->buffers.size()) - 1);
  }
  Tensor tensor(int argument) { return Tensor(owner, argument); }
  tessera::Var var(mlir::Value v) { return tessera::Var(v.getAsOpaquePointer(), owner); }
  tessera::ScalarVar scalarVar(mlir::Value v) {
    return tessera::ScalarVar(v.getAsOpaquePointer(), owner);
  }
  static const HandleOwner *ownerOf(const tessera::Var &v) { return v.owner_.get(); }
  static const HandleOwner *ownerOf(const tessera::ScalarVar &v) { return v.owner_.get(); }
  static void *handleOf(const tessera::Var &v) { return v.handle_; }
  static void *handleOf(const tessera::ScalarVar &v) { return v.handle_; }
  Scalar scalarArgument(int argument) {
    Scalar scalar(0.0);
    scalar.owner_ = owner;
    scalar.argument_ = argument;
    return scalar;
  }

  /// Whether this kernel takes `handle` (every handle in it): one of its
  /// own, or a constant, naming an argument the launched kernel has (one
  /// declared before Launch). Otherwise an error at `at` and false: the
  /// caller then builds nothing from the handle, whose IR may be another
  /// builder's (or freed) and whose argument number may name another
  /// kernel's argument.
  bool takes(const Index &i, mlir::Location at) {
    return belongs(i.owner_.get(), at, [] { return std::string("Index"); });
  }
  bool takes(const Scalar &x, mlir::Location at) {
    auto describe = [&] {
      return x.argument_ < 0 ? std::string("Scalar")
                             : "Scalar argument '" + x.owner_->arguments[x.argument_] + "'";
    };
    return belongs(x.owner_.get(), at, describe) &&
           (x.argument_ < 0 || launched(x.argument_, describe(), at));
  }
  bool takes(const Buffer &b, mlir::Location at) {
    return belongs(b.owner_.get(), at,
                   [&] { return "Buffer '" + b.owner_->buffers[b.number_] + "'"; });
  }
  bool takes(const Tensor &t, mlir::Location at) {
    // A failed TensorAt's tensor (-1): its error is already reported.
    if (t.argument_ < 0 && t.owner_.get() == owner.get() && !errors.empty())
      return false;
    auto describe = [&] { return "Tensor '" + t.owner_->arguments[t.argument_] + "'"; };
    return belongs(t.owner_.get(), at, describe) && launched(t.argument_, describe(), at);
  }
  bool takes(const TileRef &tile, mlir::Location at) {
    // A tile of a failed TensorAt's tensor: its error is already reported.
    if (tile.argument < 0 && tile.owner.get() == owner.get() && !errors.empty())
      return false;
    auto describe = [&] {
      // `argument` is a public field: the tensor's own unless changed.
      const std::vector<std::string> &names = tile.owner ? tile.owner->arguments : owner->arguments;
      bool named = tile.argument >= 0 && tile.argument < int(names.size());
      return "a tile of Tensor '" +
             (named ? names[tile.argument] : "#" + std::to_string(tile.argument)) + "'";
    };
    if (!belongs(tile.owner.get(), at, describe) || !launched(tile.argument, describe(), at))
      return false;
    if (!mlir::isa<tile::TileTensorType>(tensorValue(tile.argument).getType())) {
      error(describe() + " names a scalar argument, not a tensor", at);
      return false;
    }
    return takes(tile.offsets, at) && (!tile.until || takes(*tile.until, at));
  }
  bool takes(const std::vector<Index> &indices, mlir::Location at) {
    return llvm::all_of(indices, [&](const Index &i) { return takes(i, at); });
  }
  bool takes(const ElementRef &element, mlir::Location at) {
    return takes(element.buffer_, at) && takes(element.indices_, at);
  }
  /// Whether argument `number` (`what`) is one of the launched kernel's;
  /// otherwise an error at `at`.
  bool launched(int number, const std::string &what, mlir::Location at) {
    if (number >= 0 && unsigned(number) < arguments.size() && arguments[number].view)
      return visible(arguments[number].view, what, at);
    if (kernel && number >= 0 && unsigned(number) < kernel.getNumKernelArguments())
      return true;
    error(what + " is not among the arguments of kernel '" + name +
              "' (Launch takes the arguments declared before it)",
          at);
    return false;
  }
  /// Whether the TensorAt view `view` (`what`) may be used here: inside the
  /// body that made it. Otherwise an error at `at`.
  bool visible(mlir::Value view, const std::string &what, mlir::Location at) {
    mlir::Block *made = view.getParentBlock();
    for (mlir::Block *here = b().getInsertionBlock(); here;) {
      if (here == made)
        return true;
      mlir::Operation *parent = here->getParentOp();
      here = parent ? parent->getBlock() : nullptr;
    }
    error(what + " (a TensorAt view) is used outside the body that made it", at);
    return false;
  }
  /// The IR value of tensor `number`: a kernel argument, or a TensorAt view.
  mlir::Value tensorValue(int number) {
    return arguments[number].view ? arguments[number].view : kernel.getKernelArgument(number);
  }
  /// Whether a handle of `other` (null: a constant, or a tile of no tensor)
  /// belongs to this kernel; otherwise an error at `at` naming the handle
  /// (`describe`) and both kernels.
  template <typename Describe>
  bool belongs(const HandleOwner *other, mlir::Location at, Describe describe) {
    if (!other || other == owner.get())
      return true;
    std::string kernelName =
        (other->kernel == name ? "another KernelBuilder's kernel '" : "kernel '") + other->kernel +
        "'";
    error(describe() + " belongs to " + kernelName +
              (other->alive ? "" : " (whose KernelBuilder was destroyed)") + ", not '" + name +
              "': a handle is only valid in the KernelBuilder that made it",
          at);
    return false;
  }

  mlir::Value materialize(const Index &i) {
    if (i.handle())
      return value(i.handle());
    return mlir::arith::ConstantIndexOp::create(b(), here(), i.constant());
  }
  /// The IR value of a scalar, or null for a constant.
  mlir::Value resolve(const Scalar &s) {
    if (s.handle())
      return value(s.handle());
    if (s.argument() >= 0)
      return kernel.getKernelArgument(s.argument());
    return nullptr;
  }
  mlir::Value materialize(const Scalar &s, mlir::Type type) {
    if (mlir::Value v = resolve(s))
      return v;
    // FP8 and u8 constants: an f32 (i32) constant converted, inside a
    // Parallel body (arith has no such constants to compute with); a
    // constant outside one (Fill) is the type's own.
    if (tile::isStorageOnlyType(type) && inParallel()) {
      mlir::Type wide = mlir::isa<mlir::FloatType>(type) ? mlir::Type(b().getF32Type())
                                                        : mlir::Type(b().getI32Type());
      return tile::CastOp::create(b(), here(), type, materialize(s, wide),
                                  /*saturate=*/true);
    }
    if (type.isUnsignedInteger(8))  // tile.fill takes a ui8 buffer's bits as i8
      type = b().getI8Type();
    if (mlir::isa<mlir::FloatType>(type))
      return mlir::arith::ConstantOp::create(b(), here(), b().getFloatAttr(type, s.constant()));
    // An integer constant from a double: NaN, infinities and values past
    // int64 have no integer value (the cast would be undefined).
    double constant = s.constant();
    if (!(constant >= -0x1p63 && constant < 0x1p63)) {
      error("the constant " + std::to_string(constant) + " has no value of type " +
            stringify(type));
      constant = 0;
    }
    return mlir::arith::ConstantOp::create(b(), here(),
                                           b().getIntegerAttr(type, int64_t(constant)));
  }
  /// Whether statement `what` may open a body here: at most
  /// kMaxStatementNesting bodies (If, Serial, Unroll, Parallel, Pipelined)
  /// nest, as deeper IR would exhaust the stack of the passes and the
  /// parser. Otherwise an error at `at` (once a kernel) and false: the
  /// statement and its body are not built.
  static constexpr int kMaxStatementNesting = 64;
  bool nestable(const char *what, mlir::Location at) {
    int depth = 0;
    for (mlir::Operation *op = b().getInsertionBlock()->getParentOp();
         op && !mlir::isa<tile::KernelOp>(op); op = op->getParentOp())
      ++depth;
    if (depth < kMaxStatementNesting)
      return true;
    if (!nestingReported)
      error(std::string(what) + " nested " + std::to_string(depth + 1) +
                " bodies deep, more than the " + std::to_string(kMaxStatementNesting) +
                " Tessera compiles",
            at);
    nestingReported = true;
    return false;
  }
  bool nestingReported = false;
  /// Records an author's error at the current statement's line (Build
  /// reports it).
  void error(const std::string &message) { error(message, here()); }
  /// Records an author's error at `at`.
  void error(const std::string &message, mlir::Location at) {
    std::string where;
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(at))
      where = file.getFilename().str() + ":" + std::to_string(file.getLine()) + ": ";
    errors += where + "tessera: " + message + "\n";
  }
  static std::string stringify(mlir::Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  }
};

} // namespace detail

namespace detail {

/// While it lives, the operations and errors of a named expression function
/// (Select, Cast, Max, Exp, ...) take the location of the author's call,
/// `where`, instead of the enclosing statement's: an error names the line of
/// the expression that is wrong. The outermost one wins, so a function that
/// calls another keeps the author's line. Operators (+, <, &, ...) cannot
/// take a location: their errors name the operator and the statement.
class ExpressionAt {
public:
  explicit ExpressionAt(const SourceLoc &where) : state_(BuilderState::current) {
    if (!state_ || state_->inExpression) {
      state_ = nullptr;
      return;
    }
    saved_ = state_->statement;
    state_->statement = state_->loc(where);
    state_->inExpression = true;
  }
  ~ExpressionAt() {
    if (!state_)
      return;
    state_->statement = saved_;
    state_->inExpression = false;
  }
  ExpressionAt(const ExpressionAt &) = delete;
  ExpressionAt &operator=(const ExpressionAt &) = delete;

private:
  BuilderState *state_;
  std::optional<mlir::Location> saved_;
};

/// Records `message` against the innermost kernel being built on this thread:
/// the one whose Launch body runs, else the KernelBuilder created last (its
/// Build reports it), else the next KernelBuilder created on this thread.
void recordMisuse(const std::string &message);

/// The state of the Launch body being built, or null (after recording an
/// error that names `what`) when Index or Scalar arithmetic runs outside
/// KernelBuilder::Launch's body: there is no kernel to build it into. Also
/// null (after an error, BuilderState::takes) when one of `handles`, the
/// operation's operands, belongs to another KernelBuilder.
template <typename... Handles>
inline BuilderState *state(const char *what, const Handles &...handles) {
  BuilderState *s = BuilderState::current;
  if (!s) {
    recordMisuse(std::string("tessera: ") + what +
                 " is only valid inside KernelBuilder::Launch's body");
    return nullptr;
  }
  return (s->takes(handles, s->here()) && ...) ? s : nullptr;
}

inline mlir::Type toMlirType(mlir::MLIRContext *ctx, DType dtype) {
  mlir::Builder b(ctx);
  switch (dtype) {
  case DType::kF16:
    return b.getF16Type();
  case DType::kBF16:
    return b.getBF16Type();
  case DType::kF32:
    return b.getF32Type();
  case DType::kF64:
    return b.getF64Type();
  case DType::kI8:
    return b.getI8Type();
  case DType::kI32:
    return b.getI32Type();
  case DType::kI64:
    return b.getI64Type();
  case DType::kF8E4M3:
    return b.getType<mlir::Float8E4M3FNType>();
  case DType::kF8E5M2:
    return b.getType<mlir::Float8E5M2Type>();
  case DType::kU8:
    return b.getIntegerType(8, /*isSigned=*/false);
  }
  return b.getF32Type();
}

/// True for a compile-time constant scalar.
inline bool isConstant(const Scalar &x) { return !x.handle() && x.argument() < 0; }

/// The i1 value of a boolean scalar (a comparison, or a constant), or null
/// after an error naming `what`.
inline mlir::Value booleanValue(BuilderState &s, const Scalar &x, const char *what) {
  mlir::Value v = s.resolve(x);
  if (!v)
    return s.materialize(Scalar(x.constant() != 0 ? 1.0 : 0.0), s.b().getI1Type());
  if (v.getType().isInteger(1))
    return v;
  s.error(std::string(what) + " takes a boolean (a comparison), not a scalar of type " +
          BuilderState::stringify(v.getType()));
  return nullptr;
}

/// Combines two scalars with a float or an integer operation; scalars of
/// two types are an error (the author casts one), and the result then 0.
template <typename FloatOp, typename IntOp>
inline Scalar binary(const Scalar &a, const Scalar &b, const char *what) {
  BuilderState *s = state(what, a, b);
  if (!s)
    return Scalar(0.0);
  mlir::Value known = s->resolve(a) ? s->resolve(a) : s->resolve(b);
  mlir::Type type = known.getType();
  if (s->resolve(a) && s->resolve(b) && s->resolve(b).getType() != type) {
    s->error(std::string(what) + " of scalars of types " + BuilderState::stringify(type) +
             " and " + BuilderState::stringify(s->resolve(b).getType()) + "; Cast one");
    return Scalar(0.0);
  }
  mlir::Value x = s->materialize(a, type), y = s->materialize(b, type);
  mlir::Location loc = s->here();
  if (mlir::isa<mlir::FloatType>(type))
    return s->scalar(FloatOp::create(s->b(), loc, x, y));
  return s->scalar(IntOp::create(s->b(), loc, x, y));
}

template <typename Op> Index indexBinary(const Index &a, const Index &b, const char *what) {
  BuilderState *s = state(what, a, b);
  if (!s)
    return Index(int64_t(0));
  return s->index(Op::create(s->b(), s->here(), s->materialize(a), s->materialize(b)));
}

template <typename Op> Scalar unary(const Scalar &x, const char *what) {
  BuilderState *s = state(what, x);
  if (!s)
    return Scalar(0.0);
  mlir::Value v = s->materialize(x, s->b().getF32Type());
  return s->scalar(Op::create(s->b(), s->here(), v));
}

} // namespace detail
} // namespace tessera

#endif // TESSERA_FRONTEND_INTERNAL_BUILDERSTATE_H
