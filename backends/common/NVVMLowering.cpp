//===- NVVMLowering.cpp - The common tail: gpu level to PTX --------------===//
//
// This file implements the lowering shared by the backends: upstream MLIR
// conversions to the LLVM and NVVM dialects, translation of the gpu.module to
// LLVM IR, optional linking of libdevice, the LLVM passes and PTX
// emission through the NVPTX target, all in process.
//
//===----------------------------------------------------------------------===//

#include "backends/common/NVVMLowering.h"

#include <cstdlib>

#include "mlir/Conversion/ArithCommon/AttrToLLVMConverter.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <mutex>

namespace tessera {

namespace {

/// memref.load and memref.store on a memref of static shape and identity
/// layout (shared-memory views, per-thread arrays at computed indices): the
/// element's address is the descriptor's aligned pointer plus the row-major
/// linear index, computed as upstream's lowering computes it (no-wrap
/// multiplies by the strides but those of 1, no-wrap adds, an inbounds nuw
/// GEP), with strides from the static shape instead of upstream's analysis
/// of the layout map, twice per access (13 M of the fused sm_80 GEMM's 752 M
/// compile instructions; the same PTX for every bundled kernel). Other
/// memrefs fall through to upstream's patterns.
template <typename Op>
class StaticMemRefAccess : public mlir::ConvertOpToLLVMPattern<Op> {
public:
  StaticMemRefAccess(const mlir::LLVMTypeConverter &converter)
      : mlir::ConvertOpToLLVMPattern<Op>(converter, /*benefit=*/20) {}

  mlir::LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                      mlir::ConversionPatternRewriter &rewriter) const override {
    mlir::MemRefType type = op.getMemRefType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return mlir::failure();
    mlir::Type element = this->getTypeConverter()->convertType(type.getElementType());
    if (!element)
      return mlir::failure();
    mlir::Location loc = op.getLoc();
    mlir::MemRefDescriptor descriptor(adaptor.getMemref());
    mlir::Value address = descriptor.alignedPtr(rewriter, loc);
    auto flags = mlir::LLVM::IntegerOverflowFlags::nsw | mlir::LLVM::IntegerOverflowFlags::nuw;
    mlir::Type indexType = this->getTypeConverter()->getIndexType();
    llvm::ArrayRef<int64_t> shape = type.getShape();
    mlir::ValueRange indices = adaptor.getIndices();
    mlir::Value linear;
    llvm::SmallVector<int64_t> strides = mlir::computeSuffixProduct(shape);
    for (size_t d = 0; d < indices.size(); ++d) {
      mlir::Value term = indices[d];
      if (strides[d] != 1) {
        mlir::Value strideValue = mlir::LLVM::ConstantOp::create(
            rewriter, loc, indexType, rewriter.getIndexAttr(strides[d]));
        term = mlir::LLVM::MulOp::create(rewriter, loc, term, strideValue, flags);
      }
      linear = linear ? mlir::LLVM::AddOp::create(rewriter, loc, linear, term, flags).getResult()
                      : term;
    }
    if (linear)
      address = mlir::LLVM::GEPOp::create(
          rewriter, loc, descriptor.getElementPtrType(), element, address, linear,
          mlir::LLVM::GEPNoWrapFlags::inbounds | mlir::LLVM::GEPNoWrapFlags::nuw);
    if constexpr (std::is_same_v<Op, mlir::memref::LoadOp>)
      rewriter.replaceOpWithNewOp<mlir::LLVM::LoadOp>(op, element, address,
                                                      op.getAlignment().value_or(0),
                                                      /*isVolatile=*/false, op.getNontemporal());
    else
      rewriter.replaceOpWithNewOp<mlir::LLVM::StoreOp>(op, adaptor.getValue(), address,
                                                       op.getAlignment().value_or(0),
                                                       /*isVolatile=*/false, op.getNontemporal());
    return mlir::success();
  }
};

/// Per-thread arrays (the tile lowering's register fragments, carried values
/// and partial sums): memref.alloca of static shape and identity layout whose
/// every use loads or stores one element at constant indices. Each becomes an
/// llvm.alloca of an LLVM array and each access an inbounds GEP to its
/// row-major element and an llvm.load/llvm.store: no memref descriptor built
/// and unpacked around each access, no conversion driver (about 12 thousand
/// instructions for each of the fused sm_80 GEMM's 1,313 accesses), and an
/// alloca the kernel pipeline's first SROA promotes to SSA values (the
/// descriptor path's `alloca float, i64 N` waits for instcombine). 629.9 ->
/// 601.6 M compile instructions for that GEMM. Other allocas are left to the
/// conversion's patterns.
void lowerRegisterArrays(mlir::gpu::GPUModuleOp module, const mlir::LLVMTypeConverter &converter) {
  auto constantIndices = [](mlir::ValueRange indices) {
    return llvm::all_of(indices, [](mlir::Value index) {
      return mlir::getConstantIntValue(index).has_value();
    });
  };
  llvm::SmallVector<mlir::memref::AllocaOp> arrays;
  module.walk([&](mlir::memref::AllocaOp alloca) {
    mlir::MemRefType type = alloca.getType();
    mlir::Type element = type.getElementType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() || type.getMemorySpace() ||
        !element.isIntOrFloat() || converter.convertType(element) != element)
      return;
    for (mlir::Operation *user : alloca->getUsers()) {
      if (auto load = llvm::dyn_cast<mlir::memref::LoadOp>(user)) {
        if (!constantIndices(load.getIndices()))
          return;
      } else if (auto store = llvm::dyn_cast<mlir::memref::StoreOp>(user)) {
        if (store.getMemRef() != alloca.getResult() || !constantIndices(store.getIndices()))
          return;
      } else {
        return;
      }
    }
    arrays.push_back(alloca);
  });
  if (arrays.empty())
    return;
  mlir::MLIRContext *ctx = module.getContext();
  mlir::IRRewriter rewriter(ctx);
  mlir::Type i64 = rewriter.getI64Type();
  auto pointer = mlir::LLVM::LLVMPointerType::get(ctx);
  // One constant per value and block, at the block's start (it dominates
  // whatever the block's alloca dominates).
  llvm::DenseMap<std::pair<mlir::Block *, int64_t>, mlir::Value> constants;
  auto constant = [&](mlir::Block *block, int64_t value) {
    mlir::Value &slot = constants[{block, value}];
    if (!slot) {
      mlir::OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(block);
      slot = mlir::LLVM::ConstantOp::create(rewriter, module.getLoc(), i64,
                                            rewriter.getIndexAttr(value));
    }
    return slot;
  };
  auto flags = mlir::LLVM::GEPNoWrapFlags::inbounds | mlir::LLVM::GEPNoWrapFlags::nuw;
  for (mlir::memref::AllocaOp alloca : arrays) {
    mlir::MemRefType type = alloca.getType();
    mlir::Type element = type.getElementType();
    mlir::Block *block = alloca->getBlock();
    llvm::SmallVector<int64_t> strides = mlir::computeSuffixProduct(type.getShape());
    rewriter.setInsertionPoint(alloca);
    auto arrayType = mlir::LLVM::LLVMArrayType::get(element, type.getNumElements());
    mlir::Value array = mlir::LLVM::AllocaOp::create(
        rewriter, alloca.getLoc(), pointer, arrayType, constant(block, 1),
        alloca.getAlignment().value_or(0));
    // The address of one element (rank 0: the array itself).
    auto address = [&](mlir::Location loc, mlir::ValueRange indices) {
      if (indices.empty())
        return array;
      llvm::SmallVector<int64_t> offsets = llvm::map_to_vector(
          indices, [](mlir::Value index) { return *mlir::getConstantIntValue(index); });
      int64_t linear = mlir::linearize(offsets, strides);
      return mlir::LLVM::GEPOp::create(rewriter, loc, pointer, arrayType, array,
                                       mlir::ValueRange{constant(block, 0), constant(block, linear)},
                                       flags)
          .getResult();
    };
    for (mlir::Operation *user : llvm::make_early_inc_range(alloca->getUsers())) {
      rewriter.setInsertionPoint(user);
      if (auto load = llvm::dyn_cast<mlir::memref::LoadOp>(user)) {
        rewriter.replaceOpWithNewOp<mlir::LLVM::LoadOp>(
            load, element, address(load.getLoc(), load.getIndices()),
            load.getAlignment().value_or(0), /*isVolatile=*/false, load.getNontemporal());
      } else {
        auto store = llvm::cast<mlir::memref::StoreOp>(user);
        rewriter.replaceOpWithNewOp<mlir::LLVM::StoreOp>(
            store, store.getValue(), address(store.getLoc(), store.getIndices()),
            store.getAlignment().value_or(0), /*isVolatile=*/false, store.getNontemporal());
      }
    }
    rewriter.eraseOp(alloca);
  }
}

/// Scalar floating-point arithmetic whose types the LLVM dialect already
/// has (f16, bf16, f32, f64): arith.addf/subf/mulf/divf/negf with their
/// fast-math flags, arith.select, and arith.extf/truncf without flags or a
/// rounding mode become their LLVM dialect op here, as upstream's
/// arith-to-llvm patterns would make them, outside the conversion driver
/// (about 10 thousand instructions an op there; the fused GEMM's epilogue
/// has about 1,500). Index and integer arithmetic, vectors and every other
/// op are left to the conversion.
void lowerScalarFloatArithmetic(mlir::gpu::GPUModuleOp module,
                                const mlir::LLVMTypeConverter &converter) {
  auto legal = [&](mlir::Type type) {
    return llvm::isa<mlir::FloatType>(type) && converter.convertType(type) == type;
  };
  llvm::SmallVector<mlir::Operation *> ops;
  module.walk([&](mlir::Operation *op) {
    if (!llvm::isa<mlir::arith::AddFOp, mlir::arith::SubFOp, mlir::arith::MulFOp,
                   mlir::arith::DivFOp, mlir::arith::NegFOp, mlir::arith::SelectOp,
                   mlir::arith::ExtFOp, mlir::arith::TruncFOp>(op))
      return;
    if (!llvm::all_of(op->getResultTypes(), legal) ||
        !llvm::all_of(op->getOperands(), [&](mlir::Value v) {
          return legal(v.getType()) || v.getType().isInteger(1);
        }) || !op->getDiscardableAttrDictionary().empty())
      return;
    if (auto ext = llvm::dyn_cast<mlir::arith::ExtFOp>(op);
        ext && ext.getFastmath() != mlir::arith::FastMathFlags::none)
      return;
    if (auto trunc = llvm::dyn_cast<mlir::arith::TruncFOp>(op);
        trunc && (trunc.getRoundingmode() || trunc.getFastmath() != mlir::arith::FastMathFlags::none))
      return;
    ops.push_back(op);
  });
  mlir::IRRewriter rewriter(module.getContext());
  auto flags = [](auto op) { return mlir::arith::convertArithFastMathFlagsToLLVM(op.getFastmath()); };
  for (mlir::Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    mlir::Location loc = op->getLoc();
    mlir::Value result;
    if (auto add = llvm::dyn_cast<mlir::arith::AddFOp>(op))
      result = mlir::LLVM::FAddOp::create(rewriter, loc, add.getLhs(), add.getRhs(), flags(add));
    else if (auto sub = llvm::dyn_cast<mlir::arith::SubFOp>(op))
      result = mlir::LLVM::FSubOp::create(rewriter, loc, sub.getLhs(), sub.getRhs(), flags(sub));
    else if (auto mul = llvm::dyn_cast<mlir::arith::MulFOp>(op))
      result = mlir::LLVM::FMulOp::create(rewriter, loc, mul.getLhs(), mul.getRhs(), flags(mul));
    else if (auto div = llvm::dyn_cast<mlir::arith::DivFOp>(op))
      result = mlir::LLVM::FDivOp::create(rewriter, loc, div.getLhs(), div.getRhs(), flags(div));
    else if (auto neg = llvm::dyn_cast<mlir::arith::NegFOp>(op))
      result = mlir::LLVM::FNegOp::create(rewriter, loc, neg.getOperand(), flags(neg));
    else if (auto select = llvm::dyn_cast<mlir::arith::SelectOp>(op))
      result = mlir::LLVM::SelectOp::create(rewriter, loc, select.getCondition(),
                                            select.getTrueValue(), select.getFalseValue());
    else if (auto ext = llvm::dyn_cast<mlir::arith::ExtFOp>(op))
      result = mlir::LLVM::FPExtOp::create(rewriter, loc, ext.getType(), ext.getIn());
    else if (auto trunc = llvm::dyn_cast<mlir::arith::TruncFOp>(op))
      result = mlir::LLVM::FPTruncOp::create(rewriter, loc, trunc.getType(), trunc.getIn());
    rewriter.replaceOp(op, result);
  }
}

/// Upstream's convert-gpu-to-nvvm (64-bit indices) without its greedy first
/// step (see runOnOperation). The conversion is upstream's: the GPU-to-NVVM
/// patterns at a higher benefit, every loaded dialect's ConvertToLLVM
/// patterns but math's (the NVVM patterns lower math to libdevice), and
/// upstream's legality.
class ConvertToNVVM
    : public mlir::PassWrapper<ConvertToNVVM, mlir::OperationPass<mlir::gpu::GPUModuleOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertToNVVM)
  llvm::StringRef getArgument() const final { return "tessera-convert-to-nvvm"; }
  llvm::StringRef getDescription() const final {
    return "Converts a gpu.module's kernels to the LLVM and NVVM dialects";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
  }
  void runOnOperation() override {
    mlir::gpu::GPUModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    // Upstream's pass starts with a greedy rewrite over the module: GPU
    // in-dialect patterns, folding of every operation and region
    // simplification. Of its patterns the tile lowering needs one, the
    // split of 64-bit shuffles (an f64 tile.reduce) into two 32-bit ones,
    // applied here to those shuffles alone; of the rest only the merging of
    // identical blocks (e.g. the two arms of a bounds check after scf-to-cf)
    // changes what reaches LLVM. The PTX of every bundled kernel is the
    // same, and the driver's other work is about 5% of the fused sm_80
    // GEMM's compile instructions.
    llvm::SmallVector<mlir::Operation *> wideShuffles;
    module.walk([&](mlir::gpu::ShuffleOp shuffle) {
      mlir::Type type = shuffle.getValue().getType();
      if (type.isIntOrFloat() && type.getIntOrFloatBitWidth() == 64)
        wideShuffles.push_back(shuffle);
    });
    if (!wideShuffles.empty()) {
      mlir::RewritePatternSet split(ctx);
      mlir::populateGpuShufflePatterns(split);
      (void)mlir::applyOpPatternsGreedily(wideShuffles, std::move(split));
    }
    mlir::IRRewriter rewriter(ctx);
    (void)mlir::simplifyRegions(rewriter, module->getRegions(), /*mergeBlocks=*/true);
    mlir::LowerToLLVMOptions options(
        ctx, mlir::DataLayout(llvm::cast<mlir::DataLayoutOpInterface>(module.getOperation())));
    options.overrideIndexBitwidth(64);
    mlir::LLVMTypeConverter converter(ctx, options);
    mlir::configureGpuToNVVMTypeConverter(converter);
    lowerRegisterArrays(module, converter);
    lowerScalarFloatArithmetic(module, converter);
    mlir::RewritePatternSet patterns(ctx);
    mlir::LLVMConversionTarget target(*ctx);
    mlir::populateGpuToNVVMConversionPatterns(converter, patterns, /*benefit=*/10);
    patterns.add<StaticMemRefAccess<mlir::memref::LoadOp>, StaticMemRefAccess<mlir::memref::StoreOp>>(
        converter);
    for (mlir::Dialect *dialect : ctx->getLoadedDialects()) {
      if (llvm::isa<mlir::math::MathDialect>(dialect))
        continue;
      if (auto *iface = llvm::dyn_cast<mlir::ConvertToLLVMPatternInterface>(dialect))
        iface->populateConvertToLLVMConversionPatterns(target, converter, patterns);
    }
    mlir::configureGpuToNVVMConversionLegality(target);
    // One-shot conversion: patterns are not rolled back, so the driver keeps
    // no undo log (the lowering's patterns never fail halfway).
    mlir::ConversionConfig config;
    config.allowPatternRollback = false;
    // No folding attempt before each op's patterns: the lowering's IR
    // reaches LLVM's passes, which fold the same things (the same PTX for
    // every bundled kernel; 5 M fewer compile instructions for the fused
    // sm_80 GEMM).
    config.foldingMode = mlir::DialectConversionFoldingMode::Never;
    if (mlir::failed(mlir::applyPartialConversion(module, target, std::move(patterns), config)))
      signalPassFailure();
  }
};

/// Upstream's convert-scf-to-cf: its patterns, applied once to each SCF
/// op by a plain rewriter instead of the dialect conversion driver. The
/// driver's rewriter moves the ops behind a split point one at a time, with
/// bookkeeping for each, so lowering the kernels' scf.if chains (a bounds
/// check around each guarded access) was quadratic in the length of their
/// block; a plain split moves them as a list. Ops are visited outer first,
/// as the driver visits them, so the blocks come out in the same order (the
/// same PTX for every bundled kernel). SCF ops that a pattern creates
/// (scf.parallel and scf.forall lower through scf.for) are left to the
/// upstream conversion afterwards.
class SCFToControlFlow
    : public mlir::PassWrapper<SCFToControlFlow, mlir::OperationPass<mlir::ModuleOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SCFToControlFlow)
  llvm::StringRef getArgument() const final { return "tessera-scf-to-cf"; }
  llvm::StringRef getDescription() const final {
    return "Lowers SCF ops to control-flow branches with upstream's patterns";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::cf::ControlFlowDialect>();
  }
  void runOnOperation() override {
    mlir::MLIRContext *ctx = &getContext();
    mlir::RewritePatternSet patterns(ctx);
    mlir::populateSCFToControlFlowConversionPatterns(patterns);
    mlir::FrozenRewritePatternSet frozen(std::move(patterns));
    auto isStructured = [](mlir::Operation *op) {
      return llvm::isa<mlir::scf::ForallOp, mlir::scf::ForOp, mlir::scf::IfOp,
                       mlir::scf::IndexSwitchOp, mlir::scf::ParallelOp, mlir::scf::WhileOp,
                       mlir::scf::ExecuteRegionOp>(op);
    };
    llvm::SmallVector<mlir::Operation *> ops;
    getOperation().walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
      if (isStructured(op))
        ops.push_back(op);
    });
    mlir::PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    mlir::PatternRewriter rewriter(ctx);
    for (mlir::Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (mlir::failed(applicator.matchAndRewrite(op, rewriter))) {
        op->emitOpError() << "could not be lowered to control flow";
        return signalPassFailure();
      }
    }
    bool left = false;
    getOperation().walk([&](mlir::Operation *op) { left |= isStructured(op); });
    if (!left)
      return;
    mlir::ConversionTarget target(*ctx);
    target.addIllegalOp<mlir::scf::ForallOp, mlir::scf::ForOp, mlir::scf::IfOp,
                        mlir::scf::IndexSwitchOp, mlir::scf::ParallelOp, mlir::scf::WhileOp,
                        mlir::scf::ExecuteRegionOp>();
    target.markUnknownOpDynamicallyLegal([](mlir::Operation *) { return true; });
    if (mlir::failed(mlir::applyPartialConversion(getOperation(), target, frozen)))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<mlir::Pass> createConvertToNVVMPass() { return std::make_unique<ConvertToNVVM>(); }

void registerConvertToNVVMPass() {
  mlir::PassRegistration<ConvertToNVVM>();
  mlir::PassRegistration<SCFToControlFlow>();
}

void addCommonNVVMLowering(mlir::OpPassManager &pm, const ComputeCapability &) {
  pm.addPass(std::make_unique<SCFToControlFlow>());
  pm.nest<mlir::gpu::GPUModuleOp>().addPass(createConvertToNVVMPass());
  // No canonicalize/CSE here: LLVM's passes do the same work and the PTX of
  // every example and conformance case is identical without them.
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
}

/// Initializes the NVPTX target once per process.
static void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Codegen's loop strength reduction is off (as `-disable-lsr`, unless
    // the command line set that option itself): ptxas reduces the loops'
    // address arithmetic again, and codegen of the sm_80 GEMM takes about
    // 14 ms less. On the H200 (interleaved A/B): the sm_80 build's default
    // GEMM within 2.5% either way (slower at the square sizes, faster at 3000 x 5000 x
    // 4000), its 256 x 128 variant 15% faster (no spills); the sm_90a
    // GEMMs the same within noise.
    // It is LLVM's process-wide option; a process that embeds Tessera and
    // runs its own NVPTX codegen shares it.
    auto &registered = llvm::cl::getRegisteredOptions();
    auto lsr = registered.find("disable-lsr");
    if (lsr != registered.end() && lsr->second->getNumOccurrences() == 0)
      (void)lsr->second->addOccurrence(0, "disable-lsr", "true");
    // Pointers into shared, constant and local memory are 32 bits (as
    // `-nvptx-short-ptr`, unless the command line set it): those windows
    // are below 4 GiB, so addresses into them need no 64-bit arithmetic,
    // and the typed NVVM ops that take a shared pointer (mbarriers,
    // tcgen05.alloc and .commit) get the 32-bit operands inline PTX gives.
    auto shortPointers = registered.find("nvptx-short-ptr");
    if (shortPointers != registered.end() && shortPointers->second->getNumOccurrences() == 0)
      (void)shortPointers->second->addOccurrence(0, "nvptx-short-ptr", "true");
  });
}

static std::unique_ptr<llvm::TargetMachine> createTargetMachine(const PtxOptions &options,
                                                                std::string &error) {
  initializeNVPTX();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::CodeGenOptLevel level =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                              : llvm::CodeGenOptLevel::Default;
  llvm::TargetOptions targetOptions;
  if (options.contractFloatOps)
    targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, options.chip, options.features, targetOptions, std::nullopt,
      std::nullopt, level));
}

/// Links libdevice into `module` when it declares __nv_* math functions.
static mlir::LogicalResult linkLibdevice(mlir::ModuleOp where, llvm::Module &module,
                                         const PtxOptions &options) {
  bool needed = false;
  for (llvm::Function &fn : module)
    if (fn.isDeclaration() && fn.getName().starts_with("__nv_"))
      needed = true;
  if (!needed)
    return mlir::success();
  if (options.libdevicePath.empty())
    return where.emitError() << "the kernel calls libdevice math functions, but no libdevice "
                                "path is set (CompileOptions::libdevicePath in the C++ API, "
                                "--libdevice=PATH in tessera-compile)";
  auto buffer = llvm::MemoryBuffer::getFile(options.libdevicePath);
  if (!buffer)
    return where.emitError() << "cannot read libdevice at '" << options.libdevicePath
                             << "': " << buffer.getError().message();
  // Lazily: only the functions the kernel calls (and theirs) are read from
  // the bitcode when the linker asks for them, not all of libdevice.
  auto libdevice = llvm::getOwningLazyBitcodeModule(std::move(*buffer), module.getContext());
  if (!libdevice)
    return where.emitError() << "cannot parse libdevice at '" << options.libdevicePath
                             << "': " << llvm::toString(libdevice.takeError());
  (*libdevice)->setTargetTriple(module.getTargetTriple());
  (*libdevice)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*libdevice),
                                llvm::Linker::Flags::LinkOnlyNeeded))
    return where.emitError() << "linking libdevice failed";
  // Keep only the kernels visible; libdevice's helpers become internal.
  llvm::internalizeModule(module, [](const llvm::GlobalValue &gv) {
    if (auto *fn = llvm::dyn_cast<llvm::Function>(&gv))
      return fn->getCallingConv() == llvm::CallingConv::PTX_Kernel;
    return false;
  });
  return mlir::success();
}

/// LLVM's passes at optLevel 2 (see translateToOptimizedLLVMIR);
/// PtxOptions::llvmPipeline (tessera-compile --llvm-pipeline) replaces them,
/// to time other pipelines.
/// SROA runs again after instcombine: per-thread arrays arrive as `alloca
/// [N x float]` (lowerRegisterArrays) and the first SROA promotes them, but
/// an alloca accessed at a computed index arrives as `alloca float, i64 N`
/// (memref.alloca's lowering), which SROA skips until instcombine rewrites
/// it; promoted there, the later passes and codegen work on SSA values.
constexpr llvm::StringLiteral kKernelPipeline =
    "always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,sroa,"
    "loop-mssa(licm),gvn,infer-alignment,load-store-vectorizer,adce,simplifycfg)";

mlir::FailureOr<std::unique_ptr<llvm::Module>> translateToOptimizedLLVMIR(
    mlir::ModuleOp module, llvm::LLVMContext &context, const PtxOptions &options) {
  mlir::gpu::GPUModuleOp gpuModule;
  module.walk([&](mlir::gpu::GPUModuleOp op) { gpuModule = op; });
  if (!gpuModule) {
    module.emitError() << "no gpu.module to translate; run the lowering pipeline first";
    return mlir::failure();
  }
  // Tensor-map params: by value (128 bytes) and __grid_constant__, so their
  // address is the param itself (cvta.param) as cp.async.bulk.tensor needs.
  llvm::StringMap<llvm::SmallVector<int64_t>> tensorMapArgs;
  gpuModule.walk([&](mlir::Operation *op) {
    auto name = op->getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    if (auto args = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kTensorMapArgsAttr); args && name)
      tensorMapArgs[name.getValue()].assign(args.asArrayRef().begin(), args.asArrayRef().end());
  });
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(gpuModule, context, gpuModule.getName(),
                                    /*disableVerification=*/!options.verifyLLVMIR);
  if (!llvmModule) {
    gpuModule.emitError() << "translation to LLVM IR failed";
    return mlir::failure();
  }
  for (auto &[name, args] : tensorMapArgs) {
    llvm::Function *function = llvmModule->getFunction(name);
    if (!function)
      continue;
    for (int64_t index : args) {
      llvm::Argument *arg = function->getArg(index);
      arg->addAttr(llvm::Attribute::getWithByValType(
          context, llvm::ArrayType::get(llvm::Type::getInt8Ty(context), 128)));
      arg->addAttr(llvm::Attribute::get(context, "nvvm.grid_constant"));
    }
  }
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(options, error);
  if (!machine) {
    module.emitError() << "cannot create the NVPTX target machine: " << error;
    return mlir::failure();
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  // gpu.dynamic_shared_memory becomes a zero-sized shared array with a
  // definition, which PTX allots as a (1-byte) static variable in front of
  // the dynamic region. Declared extern, it names the dynamic region itself
  // (`.extern .shared .b8 name[]`), so a kernel may use all of it.
  for (llvm::GlobalVariable &global : llvmModule->globals()) {
    auto *array = llvm::dyn_cast<llvm::ArrayType>(global.getValueType());
    if (global.getAddressSpace() == 3 && array && array->getNumElements() == 0 &&
        global.hasInitializer()) {
      global.setInitializer(nullptr);
      global.setLinkage(llvm::GlobalValue::ExternalLinkage);
      // Swizzled buffers are planned on 1024-byte boundaries of the region;
      // wgmma and TMA apply the swizzle from absolute address bits.
      global.setAlignment(llvm::Align(1024));
    }
  }
  if (mlir::failed(linkLibdevice(module, *llvmModule, options)))
    return mlir::failure();

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // `--time-passes` (LLVM's flag) times these passes too, as it times
  // codegen's legacy passes and the MLIR passes (one report each, stderr).
  llvm::PassInstrumentationCallbacks callbacks;
  std::optional<llvm::TimePassesHandler> timePasses;
  if (llvm::TimePassesIsEnabled) {
    timePasses.emplace(/*Enabled=*/true);
    timePasses->registerCallbacks(callbacks);
  }
  llvm::PassBuilder builder(machine.get(), llvm::PipelineTuningOptions(), std::nullopt,
                            &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes;
  if (options.optLevel == 2) {
    // The kernel pipeline: what lowered tile kernels need before ptxas (which
    // schedules, unrolls and allocates registers itself): inlining of
    // libdevice, scalar cleanups, CSE of the index arithmetic, loop-invariant
    // code motion, vectorized shared-memory accesses and dead code removal,
    // in about half of O3's time (InstCombine alone ran eight times there).
    // Against O3 on the H200: the same speed on sm_90a, 4% slower on
    // sm_80's mma.sync GEMM.
    llvm::StringRef pipeline = options.llvmPipeline.empty()
                                   ? llvm::StringRef(kKernelPipeline)
                                   : llvm::StringRef(options.llvmPipeline);
    if (llvm::Error parse = builder.parsePassPipeline(passes, pipeline)) {
      module.emitError() << "bad kernel pass pipeline: " << llvm::toString(std::move(parse));
      return mlir::failure();
    }
  } else {
    llvm::OptimizationLevel level = options.optLevel >= 3   ? llvm::OptimizationLevel::O3
                                    : options.optLevel == 1 ? llvm::OptimizationLevel::O1
                                                            : llvm::OptimizationLevel::O0;
    passes = level == llvm::OptimizationLevel::O0 ? builder.buildO0DefaultPipeline(level)
                                                  : builder.buildPerModuleDefaultPipeline(level);
  }
  passes.run(*llvmModule, mam);
  if (timePasses)
    timePasses->print();
  return llvmModule;
}

mlir::FailureOr<std::string> emitPtx(llvm::Module &module, const PtxOptions &options,
                               std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(options, error);
  if (!machine)
    return mlir::failure();
  std::string ptx;
  {
    llvm::raw_string_ostream os(ptx);
    llvm::buffer_ostream pstream(os);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, pstream, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile)) {
      error = "the NVPTX target cannot emit assembly";
      return mlir::failure();
    }
    codegen.run(module);
  }
  return ptx;
}

} // namespace tessera
