//===- Compiler.cpp - Tile module to PTX, every stage printable ----------===//
//
// This file implements the compiler driver: tile passes, the backend's tail,
// LLVM IR, PTX (in process) and optionally a cubin through ptxas, with the
// text of each stage kept and each kernel described for the runtime.
//
//===----------------------------------------------------------------------===//

#include "driver/Compiler.h"
#include "driver/Preconditions.h"

#include "contract/Backend.h"
#include "backends/common/NVVMLowering.h"
#include "ir/TileDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Pass.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

namespace tessera::compiler {

void registerTesseraPasses() {
  registerTilePasses();
  registerConvertToNVVMPass();
}

using tile::KernelOp;
using tile::TileTensorType;

std::optional<Stage> parseStage(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Stage>>(name)
      .Case("tile", Stage::Tile)
      .Case("gpu", Stage::Gpu)
      .Case("lowered", Stage::Lowered)
      .Case("llvm", Stage::LLVM)
      .Case("ptx", Stage::PTX)
      .Case("cubin", Stage::Cubin)
      .Default(std::nullopt);
}

llvm::StringRef stageNames() { return "tile|gpu|lowered|llvm|ptx|cubin"; }

const std::string &CompiledModule::getStage(Stage stage) const {
  switch (stage) {
  case Stage::Tile:
    return tile;
  case Stage::Gpu:
    return gpu;
  case Stage::Lowered:
    return lowered;
  case Stage::LLVM:
    return llvm;
  case Stage::PTX:
    return ptx;
  case Stage::Cubin:
    return cubin;
  }
  return ptx;
}

namespace {

std::string printOp(mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

runtime::DType toDType(mlir::Type type) {
  if (type.isF16())
    return runtime::DTYPE_F16;
  if (type.isBF16())
    return runtime::DTYPE_BF16;
  if (type.isF32())
    return runtime::DTYPE_F32;
  if (type.isF64())
    return runtime::DTYPE_F64;
  if (type.isUnsignedInteger(8))
    return runtime::DTYPE_U8;
  if (type.isInteger(8))
    return runtime::DTYPE_I8;
  if (llvm::isa<mlir::Float8E4M3FNType>(type))
    return runtime::DTYPE_F8E4M3;
  if (llvm::isa<mlir::Float8E5M2Type>(type))
    return runtime::DTYPE_F8E5M2;
  if (type.isInteger(32))
    return runtime::DTYPE_I32;
  if (type.isInteger(64) || type.isIndex())
    return runtime::DTYPE_I64;
  return runtime::DTYPE_UNSPECIFIED;
}

void toExpr(mlir::AffineExpr expr, KernelOp kernel, runtime::Expr *out) {
  if (auto cst = llvm::dyn_cast<mlir::AffineConstantExpr>(expr)) {
    out->set_op(runtime::Expr::OP_CONSTANT);
    out->set_value(cst.getValue());
    return;
  }
  if (auto sym = llvm::dyn_cast<mlir::AffineSymbolExpr>(expr)) {
    // The symbols after the tensor dimensions are the size arguments, which
    // the runtime reads as params.
    int64_t position = sym.getPosition(), dims = kernel.getNumDynamicDims();
    out->set_op(position < dims ? runtime::Expr::OP_SYMBOL : runtime::Expr::OP_PARAM);
    out->set_value(position < dims ? position : (*kernel.getSizeArgs())[position - dims]);
    return;
  }
  auto bin = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
  switch (bin.getKind()) {
  case mlir::AffineExprKind::Add:
    out->set_op(runtime::Expr::OP_ADD);
    break;
  case mlir::AffineExprKind::Mul:
    out->set_op(runtime::Expr::OP_MUL);
    break;
  case mlir::AffineExprKind::Mod:
    out->set_op(runtime::Expr::OP_MOD);
    break;
  case mlir::AffineExprKind::FloorDiv:
    out->set_op(runtime::Expr::OP_FLOOR_DIV);
    break;
  case mlir::AffineExprKind::CeilDiv:
    out->set_op(runtime::Expr::OP_CEIL_DIV);
    break;
  default:
    break;
  }
  toExpr(bin.getLHS(), kernel, out->mutable_lhs());
  toExpr(bin.getRHS(), kernel, out->mutable_rhs());
}

/// Describes `kernel` for the runtime (everything but the code).
runtime::CompiledKernel describeKernel(KernelOp kernel, const std::string &target,
                                       int64_t tensorAlignment) {
  runtime::CompiledKernel desc;
  desc.set_target(target);
  desc.set_entry(kernel.getSymName().str());
  for (auto [i, input] : llvm::enumerate(kernel.getFunctionType().getInputs())) {
    runtime::Param *param = desc.add_params();
    param->set_name(kernel.getArgumentName(i));
    if (auto tensor = llvm::dyn_cast<TileTensorType>(input)) {
      param->set_kind(runtime::Param::KIND_TENSOR);
      param->set_dtype(toDType(tensor.getElementType()));
      for (int64_t dim : tensor.getShape())
        param->add_shape(mlir::ShapedType::isDynamic(dim) ? -1 : dim);
      param->set_alignment(tensorAlignment);
    } else {
      param->set_kind(runtime::Param::KIND_SCALAR);
      param->set_dtype(toDType(input));
    }
  }
  for (mlir::AffineExpr extent : kernel.getGrid().getResults())
    toExpr(extent, kernel, desc.add_grid());
  desc.set_block_threads(kernel.getThreads());
  if (auto bytes = kernel->getAttrOfType<mlir::IntegerAttr>(kSharedMemoryBytesAttr))
    desc.set_shared_memory_bytes(bytes.getInt());
  if (auto divisibility = kernel.getDimDivisibility())
    for (int64_t d : *divisibility)
      desc.add_dim_divisibility(d);
  if (auto groups = kernel.getDimGroups()) {
    for (mlir::NamedAttribute group : *groups) {
      runtime::DimGroup *out = desc.add_dim_groups();
      out->set_name(group.getName().str());
      for (int64_t dim : llvm::cast<mlir::DenseI64ArrayAttr>(group.getValue()).asArrayRef())
        out->add_dims(dim);
    }
  }
  return desc;
}

mlir::LogicalResult runPasses(mlir::ModuleOp module, bool verifyEach,
                              llvm::function_ref<void(mlir::OpPassManager &)> build) {
  mlir::PassManager pm(module.getContext(), mlir::ModuleOp::getOperationName());
  pm.enableVerifier(verifyEach);
  // `--time-passes` (LLVM's flag) times the MLIR passes too, one report per
  // phase, to stderr.
  if (llvm::TimePassesIsEnabled)
    pm.enableTiming();
  build(pm);
  return pm.run(module);
}

} // namespace

std::string findPtxas(llvm::StringRef target, llvm::StringRef explicitPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
  std::optional<ComputeCapability> cc = ComputeCapability::parse(target);
  bool legacy = cc && cc->value() < 75;
  std::vector<std::string> candidates;
  // tools/setup.sh installs CUDA 12.9's ptxas (which still knows sm_60 and
  // sm_70) from the nvidia-cuda-nvcc-cu12 wheel here.
  candidates.push_back("/opt/tessera/cuda12/bin/ptxas");
  if (!legacy) {
    if (const char *home = std::getenv("CUDA_HOME"))
      candidates.push_back(std::string(home) + "/bin/ptxas");
    candidates.push_back("/usr/local/cuda/bin/ptxas");
  }
  for (const std::string &candidate : candidates)
    if (llvm::sys::fs::can_execute(candidate))
      return candidate;
  return "";
}

mlir::FailureOr<std::string> assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx,
                                         llvm::StringRef arch, std::string &log) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  if (llvm::sys::fs::createTemporaryFile("tessera", "ptx", ptxPath) ||
      llvm::sys::fs::createTemporaryFile("tessera", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("tessera", "log", logPath)) {
    log = "cannot create temporary files for ptxas";
    return mlir::failure();
  }
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(ptxPath);
    llvm::sys::fs::remove(cubinPath);
    llvm::sys::fs::remove(logPath);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    if (ec) {
      log = "cannot write " + ptxPath.str().str() + ": " + ec.message();
      return mlir::failure();
    }
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, archFlag, "-v", "-o", cubinPath, ptxPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath),
                                                llvm::StringRef(logPath)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &error);
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().str();
  if (rc != 0) {
    log = (ptxas + " " + archFlag + " failed (exit " + llvm::Twine(rc) + ")" +
           (error.empty() ? "" : ": " + error) + ":\n" + log)
              .str();
    return mlir::failure();
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath);
  if (!cubin) {
    log = "ptxas wrote no cubin";
    return mlir::failure();
  }
  return (*cubin)->getBuffer().str();
}

void parsePtxasLog(llvm::StringRef log, llvm::StringRef entry, int &registers,
                   int64_t &spillBytes) {
  bool inEntry = false;
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  for (llvm::StringRef line : lines) {
    if (line.contains("Compiling entry function"))
      inEntry = line.contains(("'" + entry + "'").str());
    if (!inEntry)
      continue;
    llvm::SmallVector<llvm::StringRef> m;
    if (regs.match(line, &m))
      m[1].getAsInteger(10, registers);
    if (spills.match(line, &m)) {
      int64_t stores = 0, loads = 0;
      m[1].getAsInteger(10, stores);
      m[2].getAsInteger(10, loads);
      spillBytes = stores + loads;
    }
  }
}

/// Copies what tile-lower-to-gpu changed about each kernel's launch (see
/// kLoweredBlockThreadsAttr and its kin) into the kernels' descriptions.
static void recordLoweredLaunches(mlir::ModuleOp module,
                                  std::vector<runtime::CompiledKernel> &kernels) {
  module.walk([&](mlir::Operation *op) {
    auto name = op->getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    if (!name)
      return;
    for (runtime::CompiledKernel &kernel : kernels) {
      if (kernel.entry() != name.getValue())
        continue;
      if (auto threads = op->getAttrOfType<mlir::IntegerAttr>(kLoweredBlockThreadsAttr))
        kernel.set_block_threads(threads.getInt());
      if (auto bytes = op->getAttrOfType<mlir::IntegerAttr>(kLoweredSharedBytesAttr))
        kernel.set_shared_memory_bytes(bytes.getInt());
      if (op->hasAttr(kLoweredPersistentAttr))
        kernel.set_persistent(true);
      if (auto cluster = op->getAttrOfType<mlir::IntegerAttr>(kLoweredClusterXAttr))
        kernel.set_cluster_x(cluster.getInt());
      if (auto cluster = op->getAttrOfType<mlir::IntegerAttr>(kLoweredClusterYAttr))
        kernel.set_cluster_y(cluster.getInt());
      if (auto bytes = op->getAttrOfType<mlir::IntegerAttr>(kLoweredStreamKSlotBytesAttr))
        kernel.set_stream_k_slot_bytes(bytes.getInt());
      if (op->hasAttr(kLoweredWaitsForPriorKernelsAttr))
        kernel.set_waits_for_prior_kernels(true);
      if (auto tiles = op->getAttrOfType<mlir::IntegerAttr>(kLoweredTilesPerBlockAttr);
          tiles && kernel.grid_size() > 1) {
        runtime::Expr rows = kernel.grid(1);
        runtime::Expr *grid = kernel.mutable_grid(1);
        grid->Clear();
        grid->set_op(runtime::Expr::OP_CEIL_DIV);
        *grid->mutable_lhs() = rows;
        grid->mutable_rhs()->set_op(runtime::Expr::OP_CONSTANT);
        grid->mutable_rhs()->set_value(tiles.getInt());
      }
      if (auto maps = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kTensorMapsAttr)) {
        llvm::ArrayRef<int64_t> values = maps.asArrayRef();
        // [param, swizzle bytes, rank, box...] per map.
        for (size_t i = 0; i + 2 < values.size(); i += 3 + values[i + 2]) {
          runtime::TensorMap *map = kernel.add_tensor_maps();
          map->set_param(static_cast<int32_t>(values[i]));
          map->set_swizzle_bytes(static_cast<int32_t>(values[i + 1]));
          for (int64_t d = 0; d < values[i + 2] && i + 3 + d < values.size(); ++d)
            map->add_box(values[i + 3 + d]);
        }
      }
    }
  });

}

/// Gives every kernel of `result` the module's PTX (and cubin, registers
/// and spills where ptxas ran) and its compile time.
static void recordCompiledCode(CompiledModule &result) {
  for (runtime::CompiledKernel &kernel : result.kernels) {
    kernel.set_ptx(result.ptx);
    kernel.set_compile_micros(int64_t(result.compileMillis * 1000));
    if (!result.cubin.empty()) {
      kernel.set_cubin(result.cubin);
      int registers = 0;
      int64_t spills = 0;
      parsePtxasLog(result.ptxasLog, kernel.entry(), registers, spills);
      kernel.set_registers(registers);
      kernel.set_spill_bytes(spills);
    }
  }
}

mlir::FailureOr<CompiledModule> compileModule(mlir::ModuleOp module,
                                              const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  mlir::MLIRContext *ctx = module.getContext();
  if (options.optLevel < 0 || options.optLevel > 3)
    return module.emitError() << "the LLVM optimization level must be 0, 1, 2 or 3, got "
                              << options.optLevel;
  if (!options.target.empty()) {
    if (mlir::failed(tile::TargetAttr::verify([&] { return module.emitError(); }, options.target)))
      return mlir::failure();
    module->setAttr(tile::TileDialect::kTargetAttrName, tile::TargetAttr::get(ctx, options.target));
  }
  if (!options.fastMath)
    module->setAttr(kExactMathAttr, mlir::UnitAttr::get(ctx));
  const char *verifyEachEnv = std::getenv("TESSERA_VERIFY_EACH");
  const bool verifyEach =
      options.verifyEachPass || (verifyEachEnv && llvm::StringRef(verifyEachEnv) == "1");
  // The passes assume valid tile IR (the parser and KernelBuilder verify
  // theirs; a module built by hand may not be).
  if (mlir::failed(mlir::verify(module)))
    return mlir::failure();
  for (tile::KernelOp kernel : module.getOps<tile::KernelOp>()) {
    int64_t operations = 0;
    kernel.getBody().walk(
        [&](mlir::Operation *op) { operations += !op->hasTrait<mlir::OpTrait::IsTerminator>(); });
    if (operations > kMaxKernelOperations)
      return kernel.emitError() << "kernel '" << kernel.getSymName() << "' holds " << operations
                                << " operations, more than the " << kMaxKernelOperations
                                << " Tessera compiles in one kernel; split it";
  }
  ComputeCapability cc;
  const Backend *backend = getBackendFor(module, &cc);
  if (!backend)
    return mlir::failure();
  const TargetCapabilities &caps = backend->getCapabilities(cc);

  CompiledModule result;
  result.target = cc.str();
  auto phaseStart = start;
  auto phase = [&](const char *name) {
    auto now = std::chrono::steady_clock::now();
    result.phaseMillis.emplace_back(
        name, std::chrono::duration<double, std::milli>(now - phaseStart).count());
    phaseStart = now;
  };
  if (mlir::failed(runPasses(module, verifyEach, [](mlir::OpPassManager &pm) {
        pm.addPass(createTileLayoutInference());
        pm.addPass(createTilePlanPipelines());
        pm.addPass(createTilePlanSharedMemory());
      })))
    return mlir::failure();
  phase("tile passes");
  auto keep = [&](Stage stage) { return llvm::is_contained(options.keepStages, stage); };
  if (keep(Stage::Tile))
    result.tile = printOp(module);
  bool described = true;
  module.walk([&](KernelOp kernel) {
    result.kernels.push_back(describeKernel(kernel, result.target, caps.globalVectorBytes));
    described &= mlir::succeeded(describePreconditions(kernel, result.kernels.back()));
  });
  if (!described)
    return mlir::failure();
  if (result.kernels.empty()) {
    // A module the parser made around an empty file has no line: point at
    // the file's first.
    mlir::Location loc = module.getLoc();
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc); file && file.getLine() == 0)
      loc = mlir::FileLineColLoc::get(file.getFilename(), 1, 1);
    mlir::emitError(loc) << "the module holds no tile.kernel";
    return mlir::failure();
  }

  if (mlir::failed(runPasses(module, verifyEach, [](mlir::OpPassManager &pm) {
        pm.addPass(createTileLowerToGPU());
        addLoweredCleanup(pm);
      })))
    return mlir::failure();
  phase("lower to gpu");
  if (keep(Stage::Gpu))
    result.gpu = printOp(module);
  recordLoweredLaunches(module, result.kernels);

  if (mlir::failed(runPasses(module, verifyEach, [&](mlir::OpPassManager &pm) {
        backend->buildLoweringTail(pm, cc);
      })))
    return mlir::failure();
  if (!verifyEach && mlir::failed(mlir::verify(module))) {
    module.emitError() << "internal error: the lowered module does not verify; "
                          "TESSERA_VERIFY_EACH=1 (tessera-compile --verify-each) names the "
                          "pass that broke it";
    return mlir::failure();
  }
  phase("lowering tail");
  if (keep(Stage::Lowered))
    result.lowered = printOp(module);

  PtxOptions ptxOptions;
  ptxOptions.chip = cc.str();
  ptxOptions.features = caps.ptxFeature;
  ptxOptions.libdevicePath = options.libdevicePath;
  ptxOptions.optLevel = options.optLevel;
  ptxOptions.llvmPipeline = options.llvmPipeline;
  ptxOptions.contractFloatOps = options.fastMath;
  ptxOptions.verifyLLVMIR = verifyEach;
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToOptimizedLLVMIR(module, llvmContext, ptxOptions);
  if (mlir::failed(llvmModule))
    return mlir::failure();
  phase("LLVM IR + opt");
  if (keep(Stage::LLVM)) {
    llvm::raw_string_ostream os(result.llvm);
    (*llvmModule)->print(os, nullptr);
  }
  std::string error;
  auto ptx = emitPtx(**llvmModule, ptxOptions, error);
  if (mlir::failed(ptx)) {
    module.emitError() << "PTX emission failed: " << error;
    return mlir::failure();
  }
  result.ptx = std::move(*ptx);
  phase("PTX codegen");
  result.compileMillis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  if (options.assemble) {
    std::string ptxas = findPtxas(result.target, options.ptxasPath);
    if (ptxas.empty()) {
      module.emitError() << "no ptxas that assembles for " << result.target
                         << " was found; run tools/setup.sh (it installs CUDA 12's ptxas for "
                            "sm_60/sm_70), or name one: CompileOptions::ptxasPath in the C++ "
                            "API, --ptxas=PATH in tessera-compile";
      return mlir::failure();
    }
    auto cubin = assemblePtx(ptxas, result.ptx, result.target, result.ptxasLog);
    if (mlir::failed(cubin)) {
      module.emitError() << result.ptxasLog;
      return mlir::failure();
    }
    result.cubin = std::move(*cubin);
  }
  recordCompiledCode(result);
  return result;
}

} // namespace tessera::compiler
