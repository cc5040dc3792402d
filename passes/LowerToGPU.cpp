//===- LowerToGPU.cpp - Lower tile kernels to gpu.func kernels ------------===//
//
// This file implements tile-lower-to-gpu. Each tile.kernel becomes a
// gpu.func kernel in its own gpu.module:
//  - a tensor argument becomes a global pointer and one i64 per dynamic
//    dimension; element addresses are computed with llvm.getelementptr;
//  - a fragment becomes a per-thread array indexed by constants (LLVM's SROA
//    turns it into registers), laid out by its #tile.distribution;
//  - a shared buffer becomes a memref.view of the dynamic shared memory at its
//    planned offset;
//  - copies move each thread's `vector` contiguous elements with one aligned
//    vector access when the offsets' divisibility proves alignment and the
//    vector lies inside the tensor, and element by element (guarded) at tails;
//  - tile.parallel bodies are cloned once per element a thread owns.
// Barriers are placed around every operation that touches shared memory.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

namespace tessera {
#define GEN_PASS_DEF_TILELOWERTOGPU
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

/// Global address space of NVPTX (PTX ISA §5.1, .global).
constexpr unsigned kGlobalAddressSpace = 1;
/// The name of the gpu.module holding a tile module's kernels.
constexpr llvm::StringLiteral kGpuModuleName = "tessera_kernels";
/// The largest divisor the divisibility analysis tracks.
constexpr int64_t kMaxDivisor = 1 << 20;

/// The largest power of two known to divide `value` (at most kMaxDivisor),
/// from constants, products and sums of the kernel's index arithmetic.
int64_t knownDivisor(Value value) {
  if (auto cst = value.getDefiningOp<arith::ConstantIndexOp>()) {
    int64_t v = std::abs(cst.value());
    return v == 0 ? kMaxDivisor : std::min<int64_t>(v & -v, kMaxDivisor);
  }
  if (auto mul = value.getDefiningOp<arith::MulIOp>())
    return std::min(kMaxDivisor, knownDivisor(mul.getLhs()) * knownDivisor(mul.getRhs()));
  if (auto add = value.getDefiningOp<arith::AddIOp>())
    return std::min(knownDivisor(add.getLhs()), knownDivisor(add.getRhs()));
  if (auto sub = value.getDefiningOp<arith::SubIOp>())
    return std::min(knownDivisor(sub.getLhs()), knownDivisor(sub.getRhs()));
  if (auto shl = value.getDefiningOp<arith::ShLIOp>())
    if (auto amount = shl.getRhs().getDefiningOp<arith::ConstantIndexOp>())
      return std::min(kMaxDivisor, knownDivisor(shl.getLhs()) << amount.value());
  return 1;
}

/// Emits one PTX instruction as inline assembly (the raw form of an atom,
/// as CuTe's arch/ headers hold it) and returns its results.
static SmallVector<Value> emitPtx(OpBuilder &b, Location loc, StringRef text,
                                  StringRef constraints, ValueRange operands,
                                  ArrayRef<Type> resultTypes, bool sideEffects) {
  MLIRContext *ctx = b.getContext();
  Type resultType;
  if (resultTypes.size() == 1)
    resultType = resultTypes.front();
  else if (!resultTypes.empty())
    resultType = LLVM::LLVMStructType::getLiteral(ctx, resultTypes);
  auto op = LLVM::InlineAsmOp::create(
      b, loc, resultType, operands, b.getStringAttr(text), b.getStringAttr(constraints),
      sideEffects ? b.getUnitAttr() : nullptr, nullptr,
      LLVM::TailCallKindAttr::get(ctx, LLVM::tailcallkind::TailCallKind::None),
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), nullptr);
  SmallVector<Value> results;
  if (resultTypes.size() == 1)
    results.push_back(op.getResult(0));
  else
    for (size_t i = 0; i < resultTypes.size(); ++i)
      results.push_back(
          LLVM::ExtractValueOp::create(b, loc, op.getResult(0), ArrayRef<int64_t>{int64_t(i)}));
  return results;
}

/// A lowered tensor argument.
struct TensorInfo {
  TileTensorType type;
  Value ptr;
  /// One index value per dimension (constants for static dimensions).
  SmallVector<Value> dims;
  /// A known divisor of each dimension: the size when static, the promised
  /// divisibility (checked by the runtime at launch) when dynamic.
  SmallVector<int64_t> divisors;
};

/// A lowered buffer.
struct BufferInfo {
  BufferType type;
  /// memref<slots x elt> for fragments; memref<shape x elt, workgroup> for shared.
  Value memref;
  DistributionAttr distribution;
  /// Set instead of `distribution` for MMA accumulator fragments.
  MmaLayoutAttr mma;
  /// Fragments every thread holds whole (reduction results).
  bool replicated = false;
  /// Shared buffers: 16-byte chunks XOR-swizzled by row, wide rows in
  /// panels (see SharedSwizzle); rowBytes 0 when plain row-major.
  SharedSwizzle swizzle;
  /// Shared buffers of a pipelined loop: copies kept (a leading memref
  /// dimension) and the one the code being emitted uses.
  int64_t stages = 1;
  Value stage;
};

/// The elements one thread handles in one chunk of a distributed tile.
struct Chunk {
  /// Row-major coordinates of the chunk's first element in the tile.
  SmallVector<Value> coords;
  /// The first register slot of the chunk (fragments only).
  int64_t firstSlot;
  /// Contiguous elements along the last dimension, in consecutive slots.
  int64_t vector = 1;
};

class KernelLowering {
public:
  KernelLowering(KernelOp kernel, const Backend &backend, const ComputeCapability &cc)
      : kernel_(kernel), backend_(backend), cc_(cc), caps_(backend.getCapabilities(cc)),
        loc_(kernel.getLoc()), b_(kernel.getContext()) {
    auto module = kernel->getParentOfType<ModuleOp>();
    fastMath_ = !(module && module->hasAttr(kExactMathAttr));
  }

  LogicalResult run();

private:
  // Helpers building index arithmetic.
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b_, loc_, v); }
  Value add(Value x, Value y) { return b_.createOrFold<arith::AddIOp>(loc_, x, y); }
  Value mul(Value x, Value y) { return b_.createOrFold<arith::MulIOp>(loc_, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::slt, x, y);
  }
  Value le(Value x, Value y) {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sle, x, y);
  }
  Value andi(Value x, Value y) { return x ? arith::AndIOp::create(b_, loc_, x, y) : y; }
  Value convert(Value value, Type to);
  void barrier();
  /// The alignment a vector access of `bytes` may claim: tensor base pointers
  /// are only known to be aligned to the target's widest global access, so a
  /// wider vector (a converting copy into a narrower fragment) claims that.
  int64_t vectorAlignment(int64_t bytes) const {
    return std::min(bytes, caps_.globalVectorBytes);
  }

  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation &op);
  LogicalResult lowerCopy(CopyOp copy);
  /// A store of an m16n8-layout fragment to a 16-bit tensor whose rows hold
  /// multiples of four atom tiles: the four lanes of a quad transpose their
  /// pairs with three shuffles so that each stores 8 consecutive elements
  /// (16 bytes) instead of 2, and a warp's stores fill whole 32-byte
  /// sectors. (The same transpose serves loads; see kTransposedFragmentLoads.)
  bool lowerMmaFragmentCopy(CopyOp copy);
  LogicalResult lowerFill(Value buffer, Value value);
  LogicalResult lowerParallel(ParallelOp loop);
  LogicalResult lowerPipelined(PipelinedOp loop);
  LogicalResult lowerPipelinedInOrder(PipelinedOp loop, Value count);
  /// True when `copy` (tensor -> staged swizzled shared buffer) can be one
  /// bulk tensor copy (TMA) per panel: rank 2, no conversion, a row pitch
  /// the tensor's divisibility proves a multiple of 16 bytes, boxes of at
  /// most 256 rows and columns.
  bool canUseBulkTensorCopy(CopyOp copy);
  /// Lowers a pipelined loop's body for iteration `k` on stage `stage` of
  /// its staged buffers (the copies in `ahead` were issued earlier).
  /// `inFlight` >= 0: the body's async MMA keeps that many groups in flight
  /// (the loop fenced the proxies); -1: no async MMA.
  LogicalResult lowerStagedBody(PipelinedOp loop, const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                Value k, Value stage, int64_t inFlight);
  /// Warp specialization (the sm90 strategy, chosen by capabilities): a
  /// producer warpgroup issues the loop's copies as bulk tensor copies that
  /// complete on per-stage "full" mbarriers; the kernel's own threads (the
  /// consumers) wait on them, run the body, and release each stage on its
  /// "empty" mbarrier once the MMAs reading it are done. No block barrier
  /// per iteration.
  LogicalResult lowerPipelinedSpecialized(PipelinedOp loop, Value count,
                                          const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                          int64_t stages);
  /// A tensor -> shared copy issued ahead with cp.async (zero-filled when
  /// `valid` is false or past the tensor).
  void lowerAsyncCopy(CopyOp copy, Value valid);
  LogicalResult lowerGemm(GemmOp gemm);
  LogicalResult lowerGemmSimt(GemmOp gemm);

  /// Calls `body` once per chunk this thread owns in a tile of `shape`
  /// spread as `dist`, guarding chunks past the tile's end.
  void forEachChunk(ArrayRef<int64_t> shape, DistributionAttr dist,
                    llvm::function_ref<void(const Chunk &)> body);
  /// Calls `body` once per chunk of a fragment layout (a distribution or an
  /// MMA accumulator layout) that this thread owns.
  void forEachOwned(ArrayRef<int64_t> shape, DistributionAttr dist, MmaLayoutAttr mma,
                    llvm::function_ref<void(const Chunk &)> body);
  /// The tensor coordinates of a chunk of a tile whose origin is `offsets`.
  SmallVector<Value> tensorCoords(ArrayRef<Value> offsets, const Chunk &chunk) {
    SmallVector<Value> coords;
    for (auto [off, coord] : llvm::zip(offsets, chunk.coords))
      coords.push_back(add(off, coord));
    return coords;
  }
  /// The memref indices of a shared buffer element, swizzle applied.
  SmallVector<Value> sharedIndices(const BufferInfo &info, ArrayRef<Value> coords);
  /// The shared-window byte address (i64) of a shared buffer element.
  Value sharedAddress(const BufferInfo &info, ArrayRef<Value> coords);
  /// A gemm's A, B and C buffers, checking that C has the atom's
  /// accumulator layout (layoutM x layoutN tiles).
  struct GemmBuffers {
    const BufferInfo *a, *b, *c;
  };
  FailureOr<GemmBuffers> getGemmBuffers(GemmOp gemm, const MmaAtom &atom, int64_t layoutM,
                                        int64_t layoutN);
  LogicalResult lowerGemmMma(GemmOp gemm, const MmaAtom &atom);
  /// mma.sync.aligned.m8n8k4 (Volta): each quadpair of a warp computes one
  /// 8 x 8 block of a 16 x 16 warp step; operands are 8-byte shared loads.
  LogicalResult lowerGemmQuadpair(GemmOp gemm, const MmaAtom &atom);
  /// The accumulator layout of m8n8k4 with f32 accumulators (PTX ISA
  /// §9.7.14.5.1): quadpair q = (lane / 4) mod 4 holds the 8 x 8 block at
  /// (8 (q mod 2), 8 (q / 2)) of each 16 x 16 step; register i of lane l is
  /// row (l & 1) + (i & 2) + 4 (l >= 16), column (i & 4) + (l & 2) + (i & 1).
  void forEachQuadpairOwned(ArrayRef<int64_t> shape, MmaLayoutAttr mma,
                            llvm::function_ref<void(const Chunk &)> body);
  /// wgmma.mma_async with A and B read from swizzled shared buffers through
  /// matrix descriptors (PTX ISA §9.7.15.5.1.2).
  LogicalResult lowerGemmWgmma(GemmOp gemm, const MmaAtom &atom);
  /// The 64-bit wgmma matrix descriptor of the operand tile of `buffer`
  /// starting at (row, col) (`row` a multiple of 8); `mnMajor` when the
  /// buffer's rows run along M or N.
  Value wgmmaDescriptor(const BufferInfo &buffer, Value row, Value col, bool mnMajor);
  /// An empty instruction that reads and rewrites the first `regs` slots of
  /// a fragment, so LLVM orders every other access to them around it (what
  /// CUTLASS's warpgroup_fence_operand does): accumulators of an async MMA
  /// are neither read before its wait nor written after its fence.
  void fenceRegisters(Value fragment, int64_t regs);
  SmallVector<Value> fenceValues(ArrayRef<Value> values);
  LogicalResult lowerReduce(ReduceOp reduce);
  /// The row-major slot of `indices` in a replicated fragment: a constant
  /// when the indices are, else a value.
  OpFoldResult replicatedSlot(const BufferInfo &info, ArrayRef<Value> indices);
  /// Reads / writes a replicated fragment element; a dynamic index selects
  /// among the slots so the fragment stays in registers.
  Value loadReplicated(const BufferInfo &info, ArrayRef<Value> indices);
  void storeReplicated(const BufferInfo &info, ArrayRef<Value> indices, Value value);
  /// A distribution for cooperative copies of a tile through shared memory.
  DistributionAttr copyDistribution(BufferType tile, Type globalElementType);
  /// True when every vector of `vector` elements the copy touches in `tensor`
  /// at `offsets` (tile-level values) is aligned to its size.
  bool isVectorAligned(const TensorInfo &tensor, OperandRange offsets, int64_t vector);
  /// Element address in a tensor, and the in-bounds predicates of a vector
  /// of `vector` elements at global coordinates `coords`.
  Value elementAddress(const TensorInfo &tensor, ArrayRef<Value> coords);
  void boundsPredicates(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                        Value &rowsInBounds, Value &fullVector);

  SmallVector<Value> loadGlobal(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                                bool aligned);
  void storeGlobal(const TensorInfo &tensor, ArrayRef<Value> coords, ArrayRef<Value> values,
                   bool aligned);

  KernelOp kernel_;
  const Backend &backend_;
  ComputeCapability cc_;
  const TargetCapabilities &caps_;
  Location loc_;
  OpBuilder b_;
  IRMapping map_;
  DenseMap<Value, TensorInfo> tensors_;
  DenseMap<Value, BufferInfo> buffers_;
  Value threadId_;
  Value sharedBase_;

  Block *entry_ = nullptr;
  bool lastWasBarrier_ = false;
  /// Set while lowering the body of a pipelined loop whose gemm reads shared
  /// memory through the async proxy: the loop fences the proxies before its
  /// barrier, and the gemm keeps this many MMA groups in flight.
  bool inAsyncMmaPipeline_ = false;
  int64_t asyncMmaInFlight_ = 0;
  /// Accumulators of async MMAs a pipelined loop leaves in flight, with
  /// their register counts: fenced after the loop's final wait.
  SmallVector<std::pair<Value, int64_t>> asyncAccumulators_;
  /// Nonzero once a warp-specialized loop split the block: the consumers'
  /// thread count, which barriers then synchronize.
  int64_t consumerThreads_ = 0;
  /// Approximate tanh/exp (CompileOptions::fastMath).
  bool fastMath_ = true;
  gpu::GPUFuncOp func_;
};

Value KernelLowering::convert(Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from), toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() == toFloat.getWidth()) // f16 <-> bf16
      value = arith::ExtFOp::create(b_, loc_, b_.getF32Type(), value);
    if (cast<FloatType>(value.getType()).getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b_, loc_, to, value);
    return arith::TruncFOp::create(b_, loc_, to, value);
  }
  llvm_unreachable("copy verifier admits only float conversions");
}

void KernelLowering::barrier() {
  if (lastWasBarrier_)
    return;
  // After a warp-specialized loop only the consumers run on: a named
  // barrier over their count (the producers have exited).
  if (consumerThreads_)
    emitPtx(b_, loc_, "bar.sync 1, " + std::to_string(consumerThreads_) + ";", "", {}, {},
            /*sideEffects=*/true);
  else
    gpu::BarrierOp::create(b_, loc_);
  lastWasBarrier_ = true;
}

LogicalResult KernelLowering::run() {
  MLIRContext *ctx = kernel_.getContext();
  auto module = kernel_->getParentOfType<ModuleOp>();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));

  // Parameters: a pointer and the dynamic dimensions per tensor, scalars as is.
  auto ptrType = LLVM::LLVMPointerType::get(ctx, kGlobalAddressSpace);
  SmallVector<Type> paramTypes;
  for (Type input : kernel_.getFunctionType().getInputs()) {
    if (auto tensor = dyn_cast<TileTensorType>(input)) {
      paramTypes.push_back(ptrType);
      paramTypes.append(tensor.getNumDynamicDims(), b_.getI64Type());
    } else {
      paramTypes.push_back(input.isIndex() ? b_.getI64Type() : input);
    }
  }

  // All kernels of a module go into one gpu.module: one PTX module.
  gpu::GPUModuleOp gpuModule;
  module.walk([&](gpu::GPUModuleOp op) { gpuModule = op; });
  if (!gpuModule) {
    b_.setInsertionPointToEnd(module.getBody());
    gpuModule = gpu::GPUModuleOp::create(b_, loc_, kGpuModuleName);
  }
  b_.setInsertionPointToEnd(gpuModule.getBody());
  auto func = gpu::GPUFuncOp::create(b_, loc_, kernel_.getSymName(),
                                     b_.getFunctionType(paramTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  func.setKnownBlockSizeAttr(
      b_.getDenseI32ArrayAttr({int32_t(kernel_.getThreads()), 1, 1}));
  func_ = func;
  entry_ = &func.getBody().front();
  b_.setInsertionPointToStart(entry_);

  unsigned param = 0;
  int64_t dynamicDim = 0;
  for (unsigned i = 0, e = kernel_.getNumKernelArguments(); i < e; ++i) {
    BlockArgument arg = kernel_.getKernelArgument(i);
    if (auto tensor = dyn_cast<TileTensorType>(arg.getType())) {
      func.setArgAttr(param, LLVM::LLVMDialect::getAlignAttrName(),
                      b_.getI64IntegerAttr(caps_.globalVectorBytes));
      TensorInfo info{tensor, entry_->getArgument(param++), {}, {}};
      for (int64_t dim : tensor.getShape()) {
        info.divisors.push_back(ShapedType::isDynamic(dim)
                                    ? kernel_.getDynamicDimDivisibility(dynamicDim++)
                                    : dim);
        if (ShapedType::isDynamic(dim))
          info.dims.push_back(arith::IndexCastOp::create(b_, loc_, b_.getIndexType(),
                                                         entry_->getArgument(param++)));
        else
          info.dims.push_back(cst(dim));
      }
      tensors_[arg] = info;
    } else if (arg.getType().isIndex()) {
      map_.map(arg, arith::IndexCastOp::create(b_, loc_, b_.getIndexType(),
                                               entry_->getArgument(param++)));
    } else {
      map_.map(arg, entry_->getArgument(param++));
    }
  }
  static constexpr gpu::Dimension kDims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                             gpu::Dimension::z};
  for (auto [i, blockIndex] : llvm::enumerate(kernel_.getBlockIndices()))
    map_.map(blockIndex, gpu::BlockIdOp::create(b_, loc_, kDims[i]));
  threadId_ = gpu::ThreadIdOp::create(b_, loc_, gpu::Dimension::x);
  if (kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr) &&
      kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr).getInt() > 0) {
    auto addressSpace = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    sharedBase_ = gpu::DynamicSharedMemoryOp::create(
        b_, loc_, MemRefType::get({ShapedType::kDynamic}, b_.getI8Type(), nullptr, addressSpace));
  }

  if (failed(lowerBlock(kernel_.getBodyBlock())))
    return failure();
  gpu::ReturnOp::create(b_, loc_);
  kernel_.erase();
  return success();
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(lowerOp(op)))
      return failure();
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation &op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<DimOp>([&](DimOp dim) {
        map_.map(dim.getResult(), tensors_[dim.getTensor()].dims[dim.getIndex()]);
        return success();
      })
      .Case<AllocFragmentOp>([&](AllocFragmentOp alloc) -> LogicalResult {
        auto type = cast<BufferType>(alloc.getType());
        DistributionAttr dist = alloc.getDistributionAttr();
        MmaLayoutAttr mma = alloc.getMmaLayoutAttr();
        if (!dist && !mma)
          return alloc.emitOpError() << "has no distribution; run tile-layout-inference first";
        if (dist && dist.getThreads() != kernel_.getThreads() &&
            !(alloc.getReplicated() && dist.getThreads() == 1))
          return alloc.emitOpError() << "is distributed over " << dist.getThreads()
                                     << " threads but the kernel has " << kernel_.getThreads();
        int64_t slots = 0;
        if (mma) {
          if (type.getRank() != 2 || mma.getWarpsM() * mma.getWarpsN() * 32 != kernel_.getThreads())
            return alloc.emitOpError() << "has an MMA layout that does not fit the kernel";
          slots = type.getShape()[0] / mma.getWarpsM() * type.getShape()[1] / mma.getWarpsN() / 32;
        } else {
          slots = dist.slotsPerThread(type.getNumElements());
        }
        OpBuilder::InsertionGuard guard(b_);
        b_.setInsertionPointToStart(entry_);
        auto memrefType = MemRefType::get({slots}, type.getElementType());
        BufferInfo info{type, memref::AllocaOp::create(b_, loc_, memrefType), dist};
        info.mma = mma;
        info.replicated = alloc.getReplicated();
        buffers_[alloc.getResult()] = info;
        return success();
      })
      .Case<AllocSharedOp>([&](AllocSharedOp alloc) -> LogicalResult {
        auto type = cast<BufferType>(alloc.getType());
        if (!alloc.getOffset() || !sharedBase_)
          return alloc.emitOpError() << "has no offset; run tile-plan-shared-memory first";
        OpBuilder::InsertionGuard guard(b_);
        b_.setInsertionPointAfter(sharedBase_.getDefiningOp());
        auto addressSpace =
            gpu::AddressSpaceAttr::get(b_.getContext(), gpu::AddressSpace::Workgroup);
        int64_t stages = alloc.getStages().value_or(1);
        SharedSwizzle swizzle = alloc.getSwizzled() ? getSharedSwizzle(type) : SharedSwizzle{};
        SmallVector<int64_t> shape(type.getShape());
        if (swizzle.panels > 1) // [panel][row][column in the panel]
          shape = {swizzle.panels, shape[0], shape[1] / swizzle.panels};
        if (stages > 1)
          shape.insert(shape.begin(), stages);
        auto memrefType = MemRefType::get(shape, type.getElementType(), nullptr, addressSpace);
        Value view = memref::ViewOp::create(b_, loc_, memrefType, sharedBase_,
                                            cst(*alloc.getOffset()), ValueRange{});
        BufferInfo info{type, view, {}};
        info.stages = stages;
        info.stage = stages > 1 ? cst(0) : Value();
        info.swizzle = swizzle;
        buffers_[alloc.getResult()] = info;
        return success();
      })
      .Case<CopyOp>([&](CopyOp copy) { return lowerCopy(copy); })
      .Case<FillOp>([&](FillOp fill) {
        return lowerFill(fill.getBuffer(), map_.lookupOrDefault(fill.getValue()));
      })
      .Case<ClearOp>([&](ClearOp clear) {
        Type type = cast<BufferType>(clear.getBuffer().getType()).getElementType();
        Value zero = arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(type));
        return lowerFill(clear.getBuffer(), zero);
      })
      .Case<ParallelOp>([&](ParallelOp loop) { return lowerParallel(loop); })
      .Case<PipelinedOp>([&](PipelinedOp loop) { return lowerPipelined(loop); })
      .Case<GemmOp>([&](GemmOp gemm) { return lowerGemm(gemm); })
      .Case<ReduceOp>([&](ReduceOp reduce) { return lowerReduce(reduce); })
      .Case<LoadOp, StoreOp>([&](Operation *access) -> LogicalResult {
        return access->emitOpError()
               << "outside tile.parallel is not supported; read and write buffer elements "
                  "inside a tile.parallel body";
      })
      .Default([&](Operation *other) -> LogicalResult {
        if (other->getNumRegions() != 0 || isa<TileDialect>(other->getDialect()))
          return other->emitOpError() << "is not supported in a tile.kernel body yet";
        b_.clone(*other, map_);
        lastWasBarrier_ = false;
        return success();
      });
}

void KernelLowering::forEachChunk(ArrayRef<int64_t> shape, DistributionAttr dist,
                                  llvm::function_ref<void(const Chunk &)> body) {
  int64_t numElements = std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                        std::multiplies<int64_t>());
  int64_t threads = dist.getThreads(), vector = dist.getVector();
  int64_t chunks = llvm::divideCeil(numElements, threads * vector);
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  // A replicated layout (one "thread") is iterated whole by every thread.
  Value thread = threads == 1 ? cst(0) : threadId_;
  for (int64_t c = 0; c < chunks; ++c) {
    Value first = mul(add(cst(c * threads), thread), cst(vector));
    Chunk chunk;
    chunk.firstSlot = c * vector;
    chunk.vector = vector;
    for (auto [extent, stride] : llvm::zip(shape, strides)) {
      Value coord = b_.createOrFold<arith::DivUIOp>(loc_, first, cst(stride));
      chunk.coords.push_back(stride * extent == numElements
                                 ? coord
                                 : b_.createOrFold<arith::RemUIOp>(loc_, coord, cst(extent)));
    }
    if ((c + 1) * threads * vector <= numElements) {
      body(chunk);
      continue;
    }
    // The last chunk overhangs the tile for some threads.
    auto guard = scf::IfOp::create(b_, loc_, lt(first, cst(numElements)), /*withElse=*/false);
    OpBuilder::InsertionGuard insertion(b_);
    b_.setInsertionPointToStart(guard.thenBlock());
    body(chunk);
  }
}

void KernelLowering::forEachOwned(ArrayRef<int64_t> shape, DistributionAttr dist,
                                  MmaLayoutAttr mma,
                                  llvm::function_ref<void(const Chunk &)> body) {
  if (!mma) {
    forEachChunk(shape, dist, body);
    return;
  }
  if (mma.getM() == 8 && mma.getN() == 8) {
    forEachQuadpairOwned(shape, mma, body);
    return;
  }
  // The m16n8 accumulator layout (PTX ISA §9.7.14.5.8, "Matrix fragments
  // for mma.m16n8k16 with floating point type"): lane = 4 g + t holds rows
  // g and g + 8, columns 2t and 2t + 1 of each atom tile.
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / mma.getM(), nt = tn / mma.getN();
  Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
  Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
  Value rowBase = add(mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tm)),
                      arith::DivUIOp::create(b_, loc_, lane, cst(4)));
  Value colBase = add(mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tn)),
                      mul(arith::RemUIOp::create(b_, loc_, lane, cst(4)), cst(2)));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t ni = 0; ni < nt; ++ni)
      for (int64_t h = 0; h < 2; ++h) {
        Chunk chunk;
        chunk.coords = {add(rowBase, cst(mi * mma.getM() + 8 * h)),
                        add(colBase, cst(ni * mma.getN()))};
        chunk.firstSlot = ((mi * nt + ni) * 2 + h) * 2;
        chunk.vector = 2;
        body(chunk);
      }
}

void KernelLowering::forEachQuadpairOwned(ArrayRef<int64_t> shape, MmaLayoutAttr mma,
                                          llvm::function_ref<void(const Chunk &)> body) {
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 16;
  Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
  Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
  Value quadpair = arith::RemUIOp::create(b_, loc_, arith::DivUIOp::create(b_, loc_, lane, cst(4)),
                                          cst(4));
  Value high = arith::DivUIOp::create(b_, loc_, lane, cst(16));
  Value rowBase = add(
      add(mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tm)),
          mul(arith::RemUIOp::create(b_, loc_, quadpair, cst(2)), cst(8))),
      add(arith::AndIOp::create(b_, loc_, lane, cst(1)), mul(high, cst(4))));
  Value colBase = add(
      add(mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tn)),
          mul(arith::DivUIOp::create(b_, loc_, quadpair, cst(2)), cst(8))),
      arith::AndIOp::create(b_, loc_, lane, cst(2)));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t ni = 0; ni < nt; ++ni)
      for (int64_t i = 0; i < 8; i += 2) {
        Chunk chunk;
        chunk.coords = {add(rowBase, cst(mi * 16 + (i & 2))),
                        add(colBase, cst(ni * 16 + (i & 4)))};
        chunk.firstSlot = (mi * nt + ni) * 8 + i;
        chunk.vector = 2;
        body(chunk);
      }
}

SmallVector<Value> KernelLowering::sharedIndices(const BufferInfo &info, ArrayRef<Value> coords) {
  SmallVector<Value> indices(coords.begin(), coords.end());
  const SharedSwizzle &swizzle = info.swizzle;
  if (swizzle.rowBytes != 0) {
    // Chunk c of row r of a panel is stored at chunk c ^ ((r / L) mod C),
    // with C chunks per row and L = 128 / rowBytes rows per 128-byte line:
    // the eight rows an ldmatrix (or a wgmma core matrix) reads hit eight
    // distinct 16-byte bank groups.
    int64_t perChunk = 16 / getElementBytes(info.type.getElementType());
    int64_t chunks = swizzle.rowBytes / 16;
    int64_t panelColumns = swizzle.rowBytes / getElementBytes(info.type.getElementType());
    Value row = coords[0], col = coords[1];
    Value panel, inPanel = col;
    if (swizzle.panels > 1) {
      panel = arith::DivUIOp::create(b_, loc_, col, cst(panelColumns));
      inPanel = arith::RemUIOp::create(b_, loc_, col, cst(panelColumns));
    }
    Value phase = arith::RemUIOp::create(
        b_, loc_, arith::DivUIOp::create(b_, loc_, row, cst(128 / swizzle.rowBytes)), cst(chunks));
    Value chunk = arith::DivUIOp::create(b_, loc_, inPanel, cst(perChunk));
    Value within = arith::RemUIOp::create(b_, loc_, inPanel, cst(perChunk));
    Value swizzled = arith::XOrIOp::create(b_, loc_, chunk, phase);
    indices = {row, add(mul(swizzled, cst(perChunk)), within)};
    if (panel)
      indices.insert(indices.begin(), panel);
  }
  if (info.stages > 1)
    indices.insert(indices.begin(), info.stage);
  return indices;
}

Value KernelLowering::sharedAddress(const BufferInfo &info, ArrayRef<Value> coords) {
  SmallVector<Value> indices = sharedIndices(info, coords);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, info.memref);
  Value linear = indices[0];
  ArrayRef<int64_t> shape = cast<MemRefType>(info.memref.getType()).getShape();
  for (size_t i = 1; i < indices.size(); ++i)
    linear = add(mul(linear, cst(shape[i])), indices[i]);
  Value bytes = add(base, mul(linear, cst(getElementBytes(info.type.getElementType()))));
  return arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), bytes);
}

DistributionAttr KernelLowering::copyDistribution(BufferType tile, Type globalElementType) {
  int64_t vector = std::max<int64_t>(1, caps_.globalVectorBytes / getElementBytes(globalElementType));
  int64_t threads = kernel_.getThreads();
  while (vector > 1 &&
         (tile.getShape().back() % vector != 0 || tile.getNumElements() < threads * vector))
    vector /= 2;
  return DistributionAttr::get(b_.getContext(), threads, vector);
}

bool KernelLowering::isVectorAligned(const TensorInfo &tensor, OperandRange offsets,
                                     int64_t vector) {
  if (vector == 1)
    return true;
  if (knownDivisor(offsets.back()) % vector != 0)
    return false;
  // Every row stride must be a multiple of the vector: static and divisible,
  // or dynamic with a promised divisibility (checked by the runtime).
  int64_t stride = 1;
  for (size_t i = tensor.divisors.size() - 1; i > 0; --i) {
    stride *= tensor.divisors[i];
    if (stride % vector != 0)
      return false;
  }
  return true;
}

Value KernelLowering::elementAddress(const TensorInfo &tensor, ArrayRef<Value> coords) {
  Value linear = coords.front();
  for (size_t k = 1; k < coords.size(); ++k)
    linear = add(mul(linear, tensor.dims[k]), coords[k]);
  Value index = arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), linear);
  return LLVM::GEPOp::create(b_, loc_, tensor.ptr.getType(), tensor.type.getElementType(),
                             tensor.ptr, ValueRange{index}, LLVM::GEPNoWrapFlags::inbounds);
}

void KernelLowering::boundsPredicates(const TensorInfo &tensor, ArrayRef<Value> coords,
                                      int64_t vector, Value &rowsInBounds, Value &fullVector) {
  rowsInBounds = nullptr;
  for (size_t k = 0; k + 1 < coords.size(); ++k)
    rowsInBounds = andi(rowsInBounds, lt(coords[k], tensor.dims[k]));
  fullVector = andi(rowsInBounds, le(add(coords.back(), cst(vector)), tensor.dims.back()));
}

SmallVector<Value> KernelLowering::loadGlobal(const TensorInfo &tensor, ArrayRef<Value> coords,
                                              int64_t vector, bool aligned) {
  Type eltType = tensor.type.getElementType();
  int64_t eltBytes = getElementBytes(eltType);
  Value rows, full;
  boundsPredicates(tensor, coords, vector, rows, full);
  Value zero = arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(eltType));
  auto loadScalars = [&](OpBuilder &b, Location loc) {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
    SmallVector<Value> values;
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords.begin(), coords.end());
      at.back() = add(at.back(), cst(v));
      Value inBounds = andi(rows, lt(at.back(), tensor.dims.back()));
      auto guarded = scf::IfOp::create(
          b_, loc_, inBounds,
          [&](OpBuilder &tb, Location l) {
            OpBuilder::InsertionGuard g(b_);
            b_.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
            Value x = LLVM::LoadOp::create(b_, l, eltType, elementAddress(tensor, at), eltBytes);
            scf::YieldOp::create(b_, l, x);
          },
          [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, zero); });
      values.push_back(guarded.getResult(0));
    }
    return values;
  };
  if (!aligned || vector == 1) {
    return loadScalars(b_, loc_);
  }
  auto vecType = VectorType::get({vector}, eltType);
  auto ifOp = scf::IfOp::create(
      b_, loc_, full,
      [&](OpBuilder &tb, Location l) {
        OpBuilder::InsertionGuard g(b_);
        b_.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
        Value vec = LLVM::LoadOp::create(b_, l, vecType, elementAddress(tensor, coords),
                                         vectorAlignment(vector * eltBytes));
        scf::YieldOp::create(b_, l, vec);
      },
      [&](OpBuilder &eb, Location l) {
        OpBuilder::InsertionGuard g(b_);
        b_.setInsertionPoint(eb.getInsertionBlock(), eb.getInsertionPoint());
        SmallVector<Value> scalars = loadScalars(eb, l);
        Value vec = LLVM::PoisonOp::create(b_, l, vecType);
        for (int64_t v = 0; v < vector; ++v)
          vec = LLVM::InsertElementOp::create(
              b_, l, vec, scalars[v], arith::ConstantIntOp::create(b_, l, b_.getI32Type(), v));
        scf::YieldOp::create(b_, l, vec);
      });
  SmallVector<Value> values;
  for (int64_t v = 0; v < vector; ++v)
    values.push_back(LLVM::ExtractElementOp::create(
        b_, loc_, ifOp.getResult(0), arith::ConstantIntOp::create(b_, loc_, b_.getI32Type(), v)));
  return values;
}

void KernelLowering::storeGlobal(const TensorInfo &tensor, ArrayRef<Value> coords,
                                 ArrayRef<Value> values, bool aligned) {
  Type eltType = tensor.type.getElementType();
  int64_t eltBytes = getElementBytes(eltType);
  int64_t vector = values.size();
  Value rows, full;
  boundsPredicates(tensor, coords, vector, rows, full);
  auto storeScalars = [&]() {
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords.begin(), coords.end());
      at.back() = add(at.back(), cst(v));
      Value inBounds = andi(rows, lt(at.back(), tensor.dims.back()));
      auto guarded = scf::IfOp::create(b_, loc_, inBounds, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToStart(guarded.thenBlock());
      LLVM::StoreOp::create(b_, loc_, values[v], elementAddress(tensor, at), eltBytes);
    }
  };
  if (!aligned || vector == 1) {
    storeScalars();
    return;
  }
  // When the row length is a multiple of the vector, an aligned vector is
  // wholly inside the tensor or wholly past its end: no scalar tail.
  bool wholeVectors = tensor.divisors.back() % vector == 0;
  auto ifOp = scf::IfOp::create(b_, loc_, full, /*withElse=*/!wholeVectors);
  {
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(ifOp.thenBlock());
    auto vecType = VectorType::get({vector}, eltType);
    Value vec = LLVM::PoisonOp::create(b_, loc_, vecType);
    for (int64_t v = 0; v < vector; ++v)
      vec = LLVM::InsertElementOp::create(
          b_, loc_, vec, values[v], arith::ConstantIntOp::create(b_, loc_, b_.getI32Type(), v));
    LLVM::StoreOp::create(b_, loc_, vec, elementAddress(tensor, coords),
                          vectorAlignment(vector * eltBytes));
    if (wholeVectors)
      return;
    b_.setInsertionPointToStart(ifOp.elseBlock());
    storeScalars();
  }
}

/// Whether tensor -> MMA fragment copies also use the quad transpose.
constexpr bool kTransposedFragmentLoads = false;

bool KernelLowering::lowerMmaFragmentCopy(CopyOp copy) {
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstBuffer = dyn_cast<BufferType>(copy.getDst().getType());
  auto srcTensor = dyn_cast<TileTensorType>(copy.getSrc().getType());
  auto dstTensor = dyn_cast<TileTensorType>(copy.getDst().getType());
  bool store = srcBuffer && srcBuffer.isFragment() && dstTensor;
  // Loads keep the generic path: measured on the H200 (RESULTS.md run 15),
  // a guarded 16-byte load per lane followed by the shuffles serializes the
  // loads' latency and was slower than many 4-byte loads in flight.
  bool load = kTransposedFragmentLoads && srcTensor && dstBuffer && dstBuffer.isFragment();
  if (!store && !load)
    return false;
  TileTensorType tensorType = store ? dstTensor : srcTensor;
  Value fragment = store ? copy.getSrc() : copy.getDst();
  if (getElementBytes(tensorType.getElementType()) != 2)
    return false;
  const BufferInfo &frag = buffers_[fragment];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  if (!mma || mma.getM() != 16 || mma.getN() != 8)
    return false;
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  if (nt % 4 != 0)
    return false;
  const TensorInfo &tensor = tensors_[store ? copy.getDst() : copy.getSrc()];
  Type elt = tensorType.getElementType();
  Type i32 = b_.getI32Type();
  auto pairType = VectorType::get({2}, elt);
  bool aligned = isVectorAligned(tensor, store ? copy.getDstOffsets() : copy.getSrcOffsets(), 8);
  SmallVector<Value> offsets;
  for (Value v : store ? copy.getDstOffsets() : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));

  Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
  Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
  Value quad = arith::RemUIOp::create(b_, loc_, lane, cst(4));
  Value quadI32 = arith::IndexCastOp::create(b_, loc_, i32, quad);
  Value rowBase = add(mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tm)),
                      arith::DivUIOp::create(b_, loc_, lane, cst(4)));
  Value colBase = add(mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tn)),
                      mul(quad, cst(8)));
  // Element `index` (a lane-dependent value) of four values.
  auto pick = [&](ArrayRef<Value> values, Value index) {
    Value picked = values[0];
    for (int64_t j = 1; j < 4; ++j)
      picked = arith::SelectOp::create(
          b_, loc_,
          arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, index,
                                arith::ConstantIntOp::create(b_, loc_, i32, j)),
          values[j], picked);
    return picked;
  };
  // The 4 x 4 transpose within a quad: lane t's value j goes to lane j's
  // slot t (three xor shuffles). Applied to the pairs of four atom tiles it
  // turns "one pair of each tile" into "four pairs (8 elements) of tile t",
  // and back: it is its own inverse.
  auto transpose = [&](ArrayRef<Value> values) {
    SmallVector<Value> received = {pick(values, quadI32)};
    for (int64_t r = 1; r < 4; ++r) {
      Value partner = arith::XOrIOp::create(b_, loc_, quadI32,
                                            arith::ConstantIntOp::create(b_, loc_, i32, r));
      received.push_back(
          gpu::ShuffleOp::create(b_, loc_, pick(values, partner), r, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult());
    }
    SmallVector<Value> result;
    for (int64_t j = 0; j < 4; ++j)
      result.push_back(pick(received, arith::XOrIOp::create(
                                          b_, loc_, quadI32,
                                          arith::ConstantIntOp::create(b_, loc_, i32, j))));
    return result;
  };
  auto slotOf = [&](int64_t mi, int64_t tile, int64_t h) { return ((mi * nt + tile) * 2 + h) * 2; };
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t g = 0; g < nt / 4; ++g) {
        SmallVector<Value> coords = {add(offsets[0], add(rowBase, cst(mi * 16 + 8 * h))),
                                     add(offsets[1], add(colBase, cst(g * 32)))};
        if (store) {
          // This lane's pair (packed in 32 bits) of each atom tile 4 g + j.
          SmallVector<Value> pairs;
          for (int64_t j = 0; j < 4; ++j) {
            Value vec = LLVM::PoisonOp::create(b_, loc_, pairType);
            for (int64_t e = 0; e < 2; ++e) {
              Value x = memref::LoadOp::create(b_, loc_, frag.memref,
                                               ValueRange{cst(slotOf(mi, 4 * g + j, h) + e)});
              vec = LLVM::InsertElementOp::create(b_, loc_, vec, convert(x, elt),
                                                  arith::ConstantIntOp::create(b_, loc_, i32, e));
            }
            pairs.push_back(LLVM::BitcastOp::create(b_, loc_, i32, vec));
          }
          SmallVector<Value> values;
          for (Value q : transpose(pairs)) {
            Value vec = LLVM::BitcastOp::create(b_, loc_, pairType, q);
            for (int64_t e = 0; e < 2; ++e)
              values.push_back(LLVM::ExtractElementOp::create(
                  b_, loc_, vec, arith::ConstantIntOp::create(b_, loc_, i32, e)));
          }
          storeGlobal(tensor, coords, values, aligned);
        } else {
          // Eight consecutive elements of tile 4 g + t, as four pairs.
          SmallVector<Value> values = loadGlobal(tensor, coords, 8, aligned);
          SmallVector<Value> quads;
          for (int64_t q = 0; q < 4; ++q) {
            Value vec = LLVM::PoisonOp::create(b_, loc_, pairType);
            for (int64_t e = 0; e < 2; ++e)
              vec = LLVM::InsertElementOp::create(b_, loc_, vec, values[2 * q + e],
                                                  arith::ConstantIntOp::create(b_, loc_, i32, e));
            quads.push_back(LLVM::BitcastOp::create(b_, loc_, i32, vec));
          }
          SmallVector<Value> pairs = transpose(quads);
          Type fragElt = frag.type.getElementType();
          for (int64_t j = 0; j < 4; ++j) {
            Value vec = LLVM::BitcastOp::create(b_, loc_, pairType, pairs[j]);
            for (int64_t e = 0; e < 2; ++e) {
              Value x = LLVM::ExtractElementOp::create(
                  b_, loc_, vec, arith::ConstantIntOp::create(b_, loc_, i32, e));
              memref::StoreOp::create(b_, loc_, convert(x, fragElt), frag.memref,
                                      ValueRange{cst(slotOf(mi, 4 * g + j, h) + e)});
            }
          }
        }
      }
  lastWasBarrier_ = false;
  return true;
}

LogicalResult KernelLowering::lowerCopy(CopyOp copy) {
  BufferType tile = copy.getTileType();
  auto srcTensor = dyn_cast<TileTensorType>(copy.getSrc().getType());
  auto dstTensor = dyn_cast<TileTensorType>(copy.getDst().getType());
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstBuffer = dyn_cast<BufferType>(copy.getDst().getType());
  Type dstElt = dstTensor ? dstTensor.getElementType() : dstBuffer.getElementType();
  bool touchesShared = (srcBuffer && srcBuffer.isShared()) || (dstBuffer && dstBuffer.isShared());
  if (touchesShared)
    barrier();

  if (lowerMmaFragmentCopy(copy))
    return success();

  // Fragments keep their own layout; otherwise the copy picks a distribution.
  DistributionAttr dist;
  MmaLayoutAttr mma;
  if (srcBuffer && srcBuffer.isFragment()) {
    dist = buffers_[copy.getSrc()].distribution;
    mma = buffers_[copy.getSrc()].mma;
  } else if (dstBuffer && dstBuffer.isFragment()) {
    dist = buffers_[copy.getDst()].distribution;
    mma = buffers_[copy.getDst()].mma;
  } else {
    dist = copyDistribution(tile, srcTensor   ? srcTensor.getElementType()
                                  : dstTensor ? dstTensor.getElementType()
                                              : tile.getElementType());
  }
  int64_t vector = mma ? 2 : dist.getVector();
  bool aligned = true;
  if (srcTensor)
    aligned = isVectorAligned(tensors_[copy.getSrc()], copy.getSrcOffsets(), vector);
  if (dstTensor)
    aligned = isVectorAligned(tensors_[copy.getDst()], copy.getDstOffsets(), vector);

  SmallVector<Value> srcOffsets, dstOffsets;
  for (Value v : copy.getSrcOffsets())
    srcOffsets.push_back(map_.lookupOrDefault(v));
  for (Value v : copy.getDstOffsets())
    dstOffsets.push_back(map_.lookupOrDefault(v));

  forEachOwned(tile.getShape(), dist, mma, [&](const Chunk &chunk) {
    auto at = [&](ArrayRef<Value> offsets) { return tensorCoords(offsets, chunk); };
    auto vectorCoords = [&](int64_t v) {
      SmallVector<Value> coords(chunk.coords);
      coords.back() = add(coords.back(), cst(v));
      return coords;
    };
    // Read the chunk's elements.
    SmallVector<Value> values;
    if (srcTensor) {
      values = loadGlobal(tensors_[copy.getSrc()], at(srcOffsets), vector, aligned);
    } else {
      const BufferInfo &src = buffers_[copy.getSrc()];
      for (int64_t v = 0; v < vector; ++v) {
        if (src.type.isFragment())
          values.push_back(memref::LoadOp::create(b_, loc_, src.memref,
                                                  ValueRange{cst(chunk.firstSlot + v)}));
        else
          values.push_back(
              memref::LoadOp::create(b_, loc_, src.memref, sharedIndices(src, vectorCoords(v))));
      }
    }
    for (Value &value : values)
      value = convert(value, dstElt);
    // Write them.
    if (dstTensor) {
      storeGlobal(tensors_[copy.getDst()], at(dstOffsets), values, aligned);
      return;
    }
    const BufferInfo &dst = buffers_[copy.getDst()];
    for (int64_t v = 0; v < vector; ++v) {
      if (dst.type.isFragment())
        memref::StoreOp::create(b_, loc_, values[v], dst.memref,
                                ValueRange{cst(chunk.firstSlot + v)});
      else
        memref::StoreOp::create(b_, loc_, values[v], dst.memref,
                                sharedIndices(dst, vectorCoords(v)));
    }
  });
  lastWasBarrier_ = false;
  if (touchesShared)
    barrier();
  return success();
}

LogicalResult KernelLowering::lowerFill(Value buffer, Value value) {
  const BufferInfo &info = buffers_[buffer];
  if (info.type.isFragment()) {
    int64_t slots = cast<MemRefType>(info.memref.getType()).getDimSize(0);
    for (int64_t s = 0; s < slots; ++s)
      memref::StoreOp::create(b_, loc_, value, info.memref, ValueRange{cst(s)});
    lastWasBarrier_ = false;
    return success();
  }
  barrier();
  auto dist = DistributionAttr::get(b_.getContext(), kernel_.getThreads(), 1);
  forEachChunk(info.type.getShape(), dist, [&](const Chunk &chunk) {
    memref::StoreOp::create(b_, loc_, value, info.memref, sharedIndices(info, chunk.coords));
  });
  lastWasBarrier_ = false;
  barrier();
  return success();
}

LogicalResult KernelLowering::lowerParallel(ParallelOp loop) {
  DistributionAttr dist = loop.getDistributionAttr();
  MmaLayoutAttr mma = loop.getMmaLayoutAttr();
  if (!dist && !mma)
    return loop.emitOpError() << "has no distribution; run tile-layout-inference first";
  if (dist && dist.getThreads() != kernel_.getThreads() && dist.getThreads() != 1)
    return loop.emitOpError() << "is distributed over " << dist.getThreads()
                              << " threads but the kernel has " << kernel_.getThreads();
  bool touchesShared = false;
  loop.getBody().walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (auto type = dyn_cast<BufferType>(operand.getType()))
        touchesShared |= type.isShared();
  });
  if (touchesShared)
    barrier();
  LogicalResult result = success();
  forEachOwned(loop.getExtents(), dist, mma, [&](const Chunk &chunk) {
    for (int64_t v = 0; v < chunk.vector && succeeded(result); ++v) {
      SmallVector<Value> coords(chunk.coords);
      coords.back() = add(coords.back(), cst(v));
      IRMapping map = map_;
      for (auto [iv, coord] : llvm::zip(loop.getInductionVars(), coords))
        map.map(iv, coord);
      for (Operation &op : loop.getBodyBlock().without_terminator()) {
        // A buffer element: a register slot of this chunk (fragments), any
        // slot (replicated fragments), or a swizzled shared location.
        auto mapped = [&](OperandRange indices) {
          SmallVector<Value> values;
          for (Value index : indices)
            values.push_back(map.lookupOrDefault(index));
          return values;
        };
        auto location = [&](const BufferInfo &info, OperandRange indices) -> SmallVector<Value> {
          if (info.type.isFragment())
            return {cst(chunk.firstSlot + v)};
          return sharedIndices(info, mapped(indices));
        };
        if (auto load = dyn_cast<LoadOp>(op)) {
          const BufferInfo &info = buffers_[load.getBuffer()];
          Value value = info.replicated
                            ? loadReplicated(info, mapped(load.getIndices()))
                            : memref::LoadOp::create(b_, loc_, info.memref,
                                                     location(info, load.getIndices()));
          map.map(load.getResult(), value);
        } else if (auto store = dyn_cast<StoreOp>(op)) {
          const BufferInfo &info = buffers_[store.getBuffer()];
          Value value = map.lookupOrDefault(store.getValue());
          if (info.replicated)
            storeReplicated(info, mapped(store.getIndices()), value);
          else
            memref::StoreOp::create(b_, loc_, value, info.memref,
                                    location(info, store.getIndices()));
        } else if (op.getNumRegions() != 0 || isa<TileDialect>(op.getDialect())) {
          result = op.emitOpError() << "is not supported inside tile.parallel yet";
          return;
        } else if (auto tanh = dyn_cast<math::TanhOp>(op);
                   tanh && fastMath_ && caps_.hasTanhApprox && tanh.getType().isF32()) {
          map.map(tanh.getResult(),
                  emitPtx(b_, loc_, "tanh.approx.f32 $0, $1;", "=f,f",
                          {map.lookupOrDefault(tanh.getOperand())}, {b_.getF32Type()},
                          /*sideEffects=*/false)
                      .front());
        } else if (auto div = dyn_cast<arith::DivFOp>(op);
                   div && fastMath_ && div.getType().isF32()) {
          // div.full.f32: 2 ulp, a few instructions instead of IEEE
          // division's Newton iterations (PTX ISA §9.7.3.8).
          map.map(div.getResult(),
                  emitPtx(b_, loc_, "div.full.f32 $0, $1, $2;", "=f,f,f",
                          {map.lookupOrDefault(div.getLhs()), map.lookupOrDefault(div.getRhs())},
                          {b_.getF32Type()}, /*sideEffects=*/false)
                      .front());
        } else if (auto exp = dyn_cast<math::ExpOp>(op);
                   exp && fastMath_ && exp.getType().isF32()) {
          // exp(x) = 2^(x log2 e) with ex2.approx (PTX ISA §9.7.3.21).
          Value scaled = arith::MulFOp::create(
              b_, loc_, map.lookupOrDefault(exp.getOperand()),
              arith::ConstantOp::create(b_, loc_, b_.getF32FloatAttr(1.4426950408889634f)));
          map.map(exp.getResult(), emitPtx(b_, loc_, "ex2.approx.ftz.f32 $0, $1;", "=f,f",
                                           {scaled}, {b_.getF32Type()}, /*sideEffects=*/false)
                                       .front());
        } else {
          b_.clone(op, map);
        }
      }
    }
  });
  lastWasBarrier_ = false;
  if (touchesShared)
    barrier();
  return result;
}

LogicalResult KernelLowering::lowerPipelined(PipelinedOp loop) {
  Value count = map_.lookupOrDefault(loop.getCount());
  // Copies into staged shared buffers (tile-plan-shared-memory staged them
  // because the target has asynchronous copies) run ahead of the compute.
  llvm::SmallPtrSet<Operation *, 4> ahead;
  int64_t stages = 1;
  for (Operation &op : loop.getBodyBlock())
    if (auto copy = dyn_cast<CopyOp>(op))
      if (isa<TileTensorType>(copy.getSrc().getType()) && isa<BufferType>(copy.getDst().getType()))
        if (buffers_[copy.getDst()].stages > 1) {
          ahead.insert(copy);
          stages = std::max(stages, buffers_[copy.getDst()].stages);
        }
  if (ahead.empty())
    return lowerPipelinedInOrder(loop, count);

  // A gemm whose atom reads shared memory through the async proxy (wgmma)
  // needs the proxies fenced after the copies land, and may keep one MMA
  // group in flight while the next iteration starts; the stage it reads is
  // then refilled one iteration later, so copies run S - 2 ahead.
  bool asyncMma = false;
  for (Operation &op : loop.getBodyBlock())
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      FailureOr<MmaAtom> atom = selectMmaAtom(gemm, backend_, cc_, kernel_.getThreads());
      asyncMma |= succeeded(atom) && atom->readsSharedAsync;
    }
  int64_t inFlight = asyncMma && stages >= 3 ? 1 : 0;
  int64_t distance = stages - 1 - inFlight;

  // Warp specialization where the target has bulk tensor copies and
  // mbarriers, the loop sits at the kernel's top level, every copy ahead is
  // a bulk tensor copy, and the rest of the body is the async MMA and pure
  // arithmetic (nothing else touches shared memory between the stages).
  // The mbarriers (16 bytes a stage) go after the planned buffers and must
  // still fit the block's shared memory.
  int64_t planned = 0;
  if (auto bytes = kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr))
    planned = bytes.getInt();
  bool specialize = asyncMma && caps_.hasBulkTensorCopy && caps_.hasMbarrier &&
                    loop->getBlock() == &kernel_.getBodyBlock() &&
                    kernel_.getThreads() % 128 == 0 &&
                    kernel_.getThreads() + 128 <= caps_.maxThreadsPerBlock && stages >= 2 &&
                    llvm::alignTo(planned, 8) + 16 * stages <= caps_.sharedMemoryPerBlock;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (ahead.contains(&op))
      specialize &= canUseBulkTensorCopy(cast<CopyOp>(op));
    else if (!isa<GemmOp, DimOp>(op))
      specialize &= op.getNumRegions() == 0 && !isa<TileDialect>(op.getDialect()) &&
                    isMemoryEffectFree(&op);
  }
  if (specialize)
    return lowerPipelinedSpecialized(loop, count, ahead, stages);

  // cp.async multi-stage (PTX ISA §9.7.9.25): the prologue issues the
  // copies of iterations 0 .. D-1 (D = S - 1, or S - 2 with an MMA group in
  // flight); iteration k waits for its own group, synchronizes once, issues
  // iteration k + D into the stage iteration k + D - S used (complete: its
  // MMAs were waited for before the barrier), and computes on stage k mod S.
  auto issue = [&](Value iteration) {
    IRMapping saved = map_;
    map_.map(loop.getInductionVar(), iteration);
    Value valid = lt(iteration, count);
    Value stage = arith::RemUIOp::create(b_, loc_, iteration, cst(stages));
    for (Operation &op : loop.getBodyBlock().without_terminator()) {
      if (ahead.contains(&op)) {
        BufferInfo &dst = buffers_[cast<CopyOp>(op).getDst()];
        Value previous = dst.stage;
        dst.stage = stage;
        lowerAsyncCopy(cast<CopyOp>(op), valid);
        dst.stage = previous;
      } else if (isa<DimOp>(op)) {
        (void)lowerOp(op); // Maps the dimension's value; emits nothing.
      } else if (op.getNumRegions() == 0 && !isa<TileDialect>(op.getDialect()) &&
                 isMemoryEffectFree(&op)) {
        b_.clone(op, map_);
      }
    }
    emitPtx(b_, loc_, "cp.async.commit_group;", "", {}, {}, /*sideEffects=*/true);
    map_ = saved;
  };
  barrier();
  for (int64_t s = 0; s < distance; ++s)
    issue(cst(s));
  auto forOp = scf::ForOp::create(b_, loc_, cst(0), count, cst(1));
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    // Iteration k's group is complete once at most S - 2 newer ones are
    // pending; after the barrier every thread has also finished iteration
    // k - 1, so its stage may be refilled with iteration k + S - 1.
    emitPtx(b_, loc_, "cp.async.wait_group " + std::to_string(distance - 1) + ";", "", {}, {},
            /*sideEffects=*/true);
    // cp.async writes through the generic proxy; wgmma reads through the
    // async proxy (PTX ISA §8.6 "Proxies").
    if (asyncMma)
      emitPtx(b_, loc_, "fence.proxy.async.shared::cta;", "", {}, {}, /*sideEffects=*/true);
    lastWasBarrier_ = false;
    barrier();
    issue(add(k, cst(distance)));
    // The copies just issued write a stage nothing reads in this iteration:
    // the barrier above still orders every shared read of the body.
    Value stage = arith::RemUIOp::create(b_, loc_, k, cst(stages));
    if (failed(lowerStagedBody(loop, ahead, k, stage, asyncMma ? inFlight : -1)))
      return failure();
  }
  if (inFlight)
    emitPtx(b_, loc_, "wgmma.wait_group.sync.aligned 0;", "", {}, {}, /*sideEffects=*/true);
  for (auto [fragment, regs] : asyncAccumulators_)
    fenceRegisters(fragment, regs);
  asyncAccumulators_.clear();
  emitPtx(b_, loc_, "cp.async.wait_group 0;", "", {}, {}, /*sideEffects=*/true);
  lastWasBarrier_ = false;
  return success();
}

LogicalResult KernelLowering::lowerStagedBody(PipelinedOp loop,
                                              const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                              Value k, Value stage, int64_t inFlight) {
  SmallVector<std::pair<Value, Value>> restore;
  for (Operation *op : ahead) {
    BufferInfo &dst = buffers_[cast<CopyOp>(op).getDst()];
    restore.emplace_back(cast<CopyOp>(op).getDst(), dst.stage);
    dst.stage = stage;
  }
  map_.map(loop.getInductionVar(), k);
  inAsyncMmaPipeline_ = inFlight >= 0;
  asyncMmaInFlight_ = std::max<int64_t>(inFlight, 0);
  for (Operation &op : loop.getBodyBlock().without_terminator())
    if (!ahead.contains(&op) && failed(lowerOp(op)))
      return failure();
  inAsyncMmaPipeline_ = false;
  asyncMmaInFlight_ = 0;
  for (auto &[buffer, previous] : restore)
    buffers_[buffer].stage = previous;
  return success();
}

bool KernelLowering::canUseBulkTensorCopy(CopyOp copy) {
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  const BufferInfo &dst = buffers_[copy.getDst()];
  if (tensor.type.getRank() != 2 || dst.swizzle.rowBytes == 0 ||
      tensor.type.getElementType() != dst.type.getElementType())
    return false;
  int64_t element = getElementBytes(tensor.type.getElementType());
  ArrayRef<int64_t> tile = copy.getTileType().getShape();
  return (tensor.divisors[1] * element) % 16 == 0 && tile[0] <= 256 &&
         dst.swizzle.rowBytes / element <= 256;
}

LogicalResult KernelLowering::lowerPipelinedSpecialized(
    PipelinedOp loop, Value count, const llvm::SmallPtrSetImpl<Operation *> &ahead,
    int64_t stages) {
  MLIRContext *ctx = b_.getContext();
  int64_t consumers = kernel_.getThreads();
  Type i32 = b_.getI32Type();
  auto toI32 = [&](Value index) { return arith::IndexCastOp::create(b_, loc_, i32, index); };
  auto ptx = [&](StringRef text, StringRef constraints, ValueRange operands) {
    emitPtx(b_, loc_, text, constraints, operands, {}, /*sideEffects=*/true);
  };

  // One tensor map per (tensor, box, swizzle), passed after the params.
  struct Map {
    Value tensor;
    int64_t rows, columns, swizzle;
    Value arg;
  };
  SmallVector<Map> maps;
  SmallVector<int64_t> mapArgs, mapAttr;
  DenseMap<Operation *, unsigned> mapOf;
  int64_t stageBytes = 0;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (!ahead.contains(&op))
      continue;
    auto copy = cast<CopyOp>(op);
    const BufferInfo &dst = buffers_[copy.getDst()];
    int64_t element = getElementBytes(dst.type.getElementType());
    int64_t rows = copy.getTileType().getShape()[0];
    int64_t columns = dst.swizzle.rowBytes / element;
    stageBytes += dst.type.getNumElements() * element;
    auto it = llvm::find_if(maps, [&](const Map &map) {
      return map.tensor == copy.getSrc() && map.rows == rows && map.columns == columns &&
             map.swizzle == dst.swizzle.rowBytes;
    });
    if (it == maps.end()) {
      unsigned param = 0;
      for (unsigned i = 0; i < kernel_.getNumKernelArguments(); ++i)
        if (kernel_.getKernelArgument(i) == copy.getSrc())
          param = i;
      unsigned index = func_.getNumArguments();
      func_.insertArgument(index, LLVM::LLVMPointerType::get(ctx), 
                           b_.getDictionaryAttr(b_.getNamedAttr(
                               LLVM::LLVMDialect::getAlignAttrName(), b_.getI64IntegerAttr(64))),
                           loc_);
      maps.push_back({copy.getSrc(), rows, columns, dst.swizzle.rowBytes,
                      func_.getArgument(index)});
      mapArgs.push_back(index);
      mapAttr.append({int64_t(param), rows, columns, dst.swizzle.rowBytes});
      it = std::prev(maps.end());
    }
    mapOf[&op] = it - maps.begin();
  }
  func_->setAttr(kTensorMapArgsAttr, b_.getDenseI64ArrayAttr(mapArgs));
  func_->setAttr(kTensorMapsAttr, b_.getDenseI64ArrayAttr(mapAttr));
  func_->setAttr(kLoweredBlockThreadsAttr, b_.getI64IntegerAttr(consumers + 128));
  func_.setKnownBlockSizeAttr(b_.getDenseI32ArrayAttr({int32_t(consumers + 128), 1, 1}));

  // mbarriers after the planned buffers: full[s], then empty[s].
  int64_t planned = 0;
  if (auto bytes = kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr))
    planned = bytes.getInt();
  int64_t barrierOffset = llvm::alignTo(planned, 8);
  func_->setAttr(kLoweredSharedBytesAttr, b_.getI64IntegerAttr(barrierOffset + 16 * stages));
  Value sharedStart = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, sharedBase_);
  auto full = [&](Value stage) {
    return toI32(add(sharedStart, add(cst(barrierOffset), mul(stage, cst(8)))));
  };
  auto empty = [&](Value stage) {
    return toI32(add(sharedStart, add(cst(barrierOffset + 8 * stages), mul(stage, cst(8)))));
  };
  // Waits until the phase of parity `parity` of an mbarrier completed.
  auto wait = [&](Value barrier, Value parity) {
    ptx("{\n.reg .pred done;\nwait:\nmbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@done bra ready;\nbra wait;\nready:\n}",
        "r,r", {barrier, parity});
  };
  Value zero = cst(0);
  auto isThread = [&](int64_t t) {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, threadId_, cst(t));
  };

  // Thread 0 initializes the barriers; everyone sees them after the barrier.
  barrier();
  {
    auto init = scf::IfOp::create(b_, loc_, isThread(0), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(init.thenBlock()->getTerminator());
    for (int64_t s = 0; s < stages; ++s) {
      ptx("mbarrier.init.shared::cta.b64 [$0], 1;", "r", {full(cst(s))});
      ptx("mbarrier.init.shared::cta.b64 [$0], " + std::to_string(consumers) + ";", "r",
          {empty(cst(s))});
    }
    ptx("fence.mbarrier_init.release.cluster;", "", {});
  }
  lastWasBarrier_ = false;
  barrier();

  // Register budget: the producer gives registers back to the consumers
  // (setmaxnreg) when the block's default share would be tight.
  int64_t threads = consumers + 128;
  int64_t share = std::min<int64_t>(caps_.registersPerThread,
                                    caps_.registersPerSM / threads / 8 * 8);
  int64_t producerRegs = 40;
  int64_t consumerRegs =
      std::min<int64_t>(240, (caps_.registersPerSM - 128 * producerRegs) / consumers / 8 * 8);
  bool rebalance = caps_.hasWarpgroupMma && share < caps_.registersPerThread &&
                   consumerRegs > share;

  // The producer warpgroup: one thread issues every stage's copies.
  Value isProducer =
      arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::uge, threadId_, cst(consumers));
  {
    auto producer = scf::IfOp::create(b_, loc_, isProducer, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(producer.thenBlock()->getTerminator());
    if (rebalance)
      ptx("setmaxnreg.dec.sync.aligned.u32 " + std::to_string(producerRegs) + ";", "", {});
    auto elected = scf::IfOp::create(b_, loc_, isThread(consumers), false);
    {
      OpBuilder::InsertionGuard inner(b_);
      b_.setInsertionPoint(elected.thenBlock()->getTerminator());
      auto forOp = scf::ForOp::create(b_, loc_, zero, count, cst(1));
      b_.setInsertionPoint(forOp.getBody()->getTerminator());
      Value k = forOp.getInductionVar();
      Value stage = arith::RemUIOp::create(b_, loc_, k, cst(stages));
      Value round = arith::DivUIOp::create(b_, loc_, k, cst(stages));
      // The first round finds every stage free (the phase before the
      // barrier's first one counts as complete).
      Value parity = toI32(arith::XOrIOp::create(
          b_, loc_, arith::AndIOp::create(b_, loc_, round, cst(1)), cst(1)));
      wait(empty(stage), parity);
      ptx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], " + std::to_string(stageBytes) +
              ";",
          "r", {full(stage)});
      IRMapping saved = map_;
      map_.map(loop.getInductionVar(), k);
      for (Operation &op : loop.getBodyBlock().without_terminator()) {
        if (ahead.contains(&op)) {
          auto copy = cast<CopyOp>(op);
          BufferInfo &dst = buffers_[copy.getDst()];
          const Map &map = maps[mapOf[&op]];
          Value row = map_.lookupOrDefault(copy.getSrcOffsets()[0]);
          Value col = map_.lookupOrDefault(copy.getSrcOffsets()[1]);
          Value previous = dst.stage;
          dst.stage = stage;
          Value tensorMap = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), map.arg);
          for (int64_t p = 0; p < dst.swizzle.panels; ++p) {
            Value target = arith::TruncIOp::create(
                b_, loc_, i32, sharedAddress(dst, {zero, cst(p * map.columns)}));
            ptx("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                "bytes [$0], [$1, {$2, $3}], [$4];",
                "r,l,r,r,r",
                {target, tensorMap, toI32(add(col, cst(p * map.columns))), toI32(row),
                 full(stage)});
          }
          dst.stage = previous;
        } else if (isa<DimOp>(op)) {
          (void)lowerOp(op);
        } else if (!isa<GemmOp>(op)) {
          b_.clone(op, map_);
        }
      }
      map_ = saved;
    }
    ptx("exit;", "", {});
  }

  // The consumers: the kernel's own threads.
  consumerThreads_ = consumers;
  lastWasBarrier_ = false;
  if (rebalance)
    ptx("setmaxnreg.inc.sync.aligned.u32 " + std::to_string(consumerRegs) + ";", "", {});
  auto forOp = scf::ForOp::create(b_, loc_, zero, count, cst(1));
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    Value stage = arith::RemUIOp::create(b_, loc_, k, cst(stages));
    Value round = arith::DivUIOp::create(b_, loc_, k, cst(stages));
    wait(full(stage), toI32(arith::AndIOp::create(b_, loc_, round, cst(1))));
    lastWasBarrier_ = true; // the full barrier orders this stage's reads
    if (failed(lowerStagedBody(loop, ahead, k, stage, /*inFlight=*/1)))
      return failure();
    // The MMAs of iteration k - 1 are complete (one group stays in flight):
    // its stage goes back to the producer.
    Value positive = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ugt, k, zero);
    auto release = scf::IfOp::create(b_, loc_, positive, false);
    b_.setInsertionPoint(release.thenBlock()->getTerminator());
    Value previousStage =
        arith::RemUIOp::create(b_, loc_, add(k, cst(stages - 1)), cst(stages));
    ptx("mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {empty(previousStage)});
  }
  ptx("wgmma.wait_group.sync.aligned 0;", "", {});
  for (auto [fragment, regs] : asyncAccumulators_)
    fenceRegisters(fragment, regs);
  asyncAccumulators_.clear();
  lastWasBarrier_ = false;
  return success();
}

LogicalResult KernelLowering::lowerPipelinedInOrder(PipelinedOp loop, Value count) {
  // The in-order strategy: always correct.
  auto forOp = scf::ForOp::create(b_, loc_, cst(0), count, cst(1));
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(forOp.getBody()->getTerminator());
  map_.map(loop.getInductionVar(), forOp.getInductionVar());
  lastWasBarrier_ = false;
  if (failed(lowerBlock(loop.getBodyBlock())))
    return failure();
  // The next iteration's copies overwrite shared buffers this one read.
  barrier();
  lastWasBarrier_ = false;
  return success();
}

void KernelLowering::lowerAsyncCopy(CopyOp copy, Value valid) {
  BufferType tile = copy.getTileType();
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  const BufferInfo &dst = buffers_[copy.getDst()];
  Type eltType = tensor.type.getElementType();
  int64_t eltBytes = getElementBytes(eltType);
  DistributionAttr dist = copyDistribution(tile, eltType);
  int64_t vector = dist.getVector();
  SmallVector<Value> offsets;
  for (Value v : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  bool async = vector * eltBytes == 16 &&
               isVectorAligned(tensor, copy.getSrcOffsets(), vector) &&
               (tile.getShape().back() * eltBytes) % 16 == 0;
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    SmallVector<Value> coords = tensorCoords(offsets, chunk);
    if (!async) {
      // Not provably 16-byte aligned: synchronous loads (still ahead).
      SmallVector<Value> values = loadGlobal(tensor, coords, vector, false);
      for (int64_t v = 0; v < vector; ++v) {
        SmallVector<Value> at(chunk.coords);
        at.back() = add(at.back(), cst(v));
        memref::StoreOp::create(b_, loc_, convert(values[v], dst.type.getElementType()),
                                dst.memref, sharedIndices(dst, at));
      }
      return;
    }
    // cp.async.cg 16 bytes with src-size: bytes past the tensor (or of an
    // iteration past the loop) are zero-filled and never read.
    Value rows, full;
    boundsPredicates(tensor, coords, vector, rows, full);
    Value remaining = arith::SubIOp::create(b_, loc_, tensor.dims.back(), coords.back());
    Value bytes = mul(arith::MaxSIOp::create(b_, loc_,
                                             arith::MinSIOp::create(b_, loc_, remaining, cst(vector)),
                                             cst(0)),
                      cst(eltBytes));
    Value inBounds = andi(rows, valid);
    bytes = arith::SelectOp::create(b_, loc_, inBounds, bytes, cst(0));
    Value safe = arith::SelectOp::create(b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sgt, bytes, cst(0)),
                                         elementAddress(tensor, coords), tensor.ptr);
    Value src = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), safe);
    Value size = arith::IndexCastOp::create(b_, loc_, b_.getI32Type(), bytes);
    emitPtx(b_, loc_, "cp.async.cg.shared.global [$0], [$1], 16, $2;", "l,l,r",
            {sharedAddress(dst, chunk.coords), src, size}, {}, /*sideEffects=*/true);
  });
}

LogicalResult KernelLowering::lowerGemm(GemmOp gemm) {
  FailureOr<MmaAtom> atom = selectMmaAtom(gemm, backend_, cc_, kernel_.getThreads());
  if (failed(atom))
    return failure();
  if (atom->threads == 1)
    return lowerGemmSimt(gemm);
  if (atom->threads == 128)
    return lowerGemmWgmma(gemm, *atom);
  if (atom->k == 4)
    return lowerGemmQuadpair(gemm, *atom);
  return lowerGemmMma(gemm, *atom);
}

LogicalResult KernelLowering::lowerGemmSimt(GemmOp gemm) {
  const BufferInfo &a = buffers_[gemm.getA()];
  const BufferInfo &b = buffers_[gemm.getB()];
  const BufferInfo &c = buffers_[gemm.getC()];
  if (!a.type.isShared() || !b.type.isShared())
    return gemm.emitOpError() << "with the SIMT FMA atom reads A and B from shared memory; "
                                 "copy them into shared buffers first";
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  Type f32 = b_.getF32Type();
  barrier();
  auto forOp = scf::ForOp::create(b_, loc_, cst(0), cst(gemm.getK()), cst(1));
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    forEachChunk(c.type.getShape(), c.distribution, [&](const Chunk &chunk) {
      Value i = chunk.coords[0], j = chunk.coords[1];
      Value av = memref::LoadOp::create(
          b_, loc_, a.memref, sharedIndices(a, transA ? SmallVector<Value>{k, i} : SmallVector<Value>{i, k}));
      av = convert(av, f32);
      for (int64_t v = 0; v < c.distribution.getVector(); ++v) {
        Value jv = add(j, cst(v));
        Value bv = memref::LoadOp::create(
            b_, loc_, b.memref,
            sharedIndices(b, transB ? SmallVector<Value>{jv, k} : SmallVector<Value>{k, jv}));
        bv = convert(bv, f32);
        Value slot = cst(chunk.firstSlot + v);
        Value acc = memref::LoadOp::create(b_, loc_, c.memref, ValueRange{slot});
        acc = math::FmaOp::create(b_, loc_, av, bv, acc);
        memref::StoreOp::create(b_, loc_, acc, c.memref, ValueRange{slot});
      }
    });
  }
  lastWasBarrier_ = false;
  return success();
}

FailureOr<KernelLowering::GemmBuffers>
KernelLowering::getGemmBuffers(GemmOp gemm, const MmaAtom &atom, int64_t layoutM, int64_t layoutN) {
  GemmBuffers buffers{&buffers_[gemm.getA()], &buffers_[gemm.getB()], &buffers_[gemm.getC()]};
  MmaLayoutAttr mma = buffers.c->mma;
  if (!mma || mma.getM() != layoutM || mma.getN() != layoutN)
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its accumulator laid out by tile-layout-inference";
  return buffers;
}

LogicalResult KernelLowering::lowerGemmMma(GemmOp gemm, const MmaAtom &atom) {
  FailureOr<GemmBuffers> buffers = getGemmBuffers(gemm, atom, 16, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  std::string type = cast<BufferType>(gemm.getA().getType()).getElementType().isBF16() ? "bf16"
                                                                                       : "f16";
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  Type i32 = b_.getI32Type(), f32 = b_.getF32Type();
  barrier();

  Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
  Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
  Value mat = arith::DivUIOp::create(b_, loc_, lane, cst(8));
  Value within = arith::RemUIOp::create(b_, loc_, lane, cst(8));
  Value matLow = arith::RemUIOp::create(b_, loc_, mat, cst(2));
  Value matHigh = arith::DivUIOp::create(b_, loc_, mat, cst(2));
  Value warpRow = mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tm));
  Value warpCol = mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tn));
  SmallVector<Type> four(4, i32);
  // ldmatrix (PTX ISA §9.7.14.5.15): four 8x8 b16 matrices, row addresses
  // from lanes 8i..8i+7 for matrix i.
  auto ldmatrix = [&](const BufferInfo &buffer, Value row, Value col, bool trans) {
    std::string text = std::string("ldmatrix.sync.aligned.m8n8.x4") + (trans ? ".trans" : "") +
                       ".shared.b16 {$0, $1, $2, $3}, [$4];";
    return emitPtx(b_, loc_, text, "=r,=r,=r,=r,l", {sharedAddress(buffer, {row, col})}, four,
                   /*sideEffects=*/true);
  };
  // The accumulators stay SSA values through the gemm.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    acc.push_back(memref::LoadOp::create(b_, loc_, c.memref, ValueRange{cst(r)}));
  std::string mmaText = "mma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type +
                        ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  for (int64_t ks = 0; ks < gemm.getK() / 16; ++ks) {
    Value k0 = cst(ks * 16);
    // A: one x4 load per 16-row atom tile (a0..a7 of mma.m16n8k16).
    SmallVector<SmallVector<Value>> aRegs;
    for (int64_t mi = 0; mi < mt; ++mi) {
      Value r0 = add(warpRow, cst(mi * 16));
      if (!transA)
        aRegs.push_back(ldmatrix(a, add(r0, add(within, mul(matLow, cst(8)))),
                                 add(k0, mul(matHigh, cst(8))), false));
      else
        aRegs.push_back(ldmatrix(a, add(k0, add(within, mul(matHigh, cst(8)))),
                                 add(r0, mul(matLow, cst(8))), true));
    }
    // B: one x4 load per pair of 8-column atom tiles (b0..b3 of each).
    SmallVector<SmallVector<Value>> bRegs;
    for (int64_t np = 0; np < nt / 2; ++np) {
      Value n0 = add(warpCol, cst(np * 16));
      if (!transB)
        bRegs.push_back(ldmatrix(b, add(k0, add(within, mul(matLow, cst(8)))),
                                 add(n0, mul(matHigh, cst(8))), true));
      else
        bRegs.push_back(ldmatrix(b, add(n0, add(within, mul(matHigh, cst(8)))),
                                 add(k0, mul(matLow, cst(8))), false));
    }
    for (int64_t mi = 0; mi < mt; ++mi) {
      for (int64_t ni = 0; ni < nt; ++ni) {
        int64_t base = (mi * nt + ni) * 4;
        SmallVector<Value> operands(aRegs[mi].begin(), aRegs[mi].end());
        operands.push_back(bRegs[ni / 2][(ni % 2) * 2]);
        operands.push_back(bRegs[ni / 2][(ni % 2) * 2 + 1]);
        operands.append(acc.begin() + base, acc.begin() + base + 4);
        SmallVector<Value> d = emitPtx(b_, loc_, mmaText, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                                       operands, SmallVector<Type>(4, f32), false);
        std::copy(d.begin(), d.end(), acc.begin() + base);
      }
    }
  }
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    memref::StoreOp::create(b_, loc_, acc[r], c.memref, ValueRange{cst(r)});
  lastWasBarrier_ = false;
  return success();
}

LogicalResult KernelLowering::lowerGemmQuadpair(GemmOp gemm, const MmaAtom &atom) {
  FailureOr<GemmBuffers> buffers = getGemmBuffers(gemm, atom, 8, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 16;
  Type i32 = b_.getI32Type(), f32 = b_.getF32Type();
  barrier();
  Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
  Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
  Value quadpair = arith::RemUIOp::create(b_, loc_, arith::DivUIOp::create(b_, loc_, lane, cst(4)),
                                          cst(4));
  // Within a quadpair: lanes 0-3 (low group) and 16-19 (high group).
  Value inGroup = add(arith::RemUIOp::create(b_, loc_, lane, cst(4)),
                      mul(arith::DivUIOp::create(b_, loc_, lane, cst(16)), cst(4)));
  Value warpRow = add(mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tm)),
                      mul(arith::RemUIOp::create(b_, loc_, quadpair, cst(2)), cst(8)));
  Value warpCol = add(mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())), cst(tn)),
                      mul(arith::DivUIOp::create(b_, loc_, quadpair, cst(2)), cst(8)));
  Value quarter = arith::RemUIOp::create(b_, loc_, lane, cst(4));
  Value highHalf = mul(arith::DivUIOp::create(b_, loc_, lane, cst(16)), cst(4));
  // Four contiguous f16 of a shared buffer as two b32 registers (one
  // 8-byte load: the operand layout is chosen so they are contiguous).
  auto load4 = [&](const BufferInfo &buffer, Value row, Value col) {
    auto sharedPtr = LLVM::LLVMPointerType::get(b_.getContext(), 3);
    Value address = LLVM::IntToPtrOp::create(b_, loc_, sharedPtr, sharedAddress(buffer, {row, col}));
    Value pairs = LLVM::LoadOp::create(b_, loc_, VectorType::get({2}, i32), address, 8);
    return SmallVector<Value>{
        LLVM::ExtractElementOp::create(b_, loc_, pairs,
                                       arith::ConstantIntOp::create(b_, loc_, i32, 0)),
        LLVM::ExtractElementOp::create(b_, loc_, pairs,
                                       arith::ConstantIntOp::create(b_, loc_, i32, 1))};
  };
  // A .row: lane's row, k0..k0+3; A transposed (K x M) .col: k = lane mod 4,
  // its 4 rows. B .row (K x N): k = lane mod 4, its 4 columns; B transposed
  // (N x K) .col: its column, k0..k0+3.
  std::string mmaText = std::string("mma.sync.aligned.m8n8k4.") + (transA ? "col" : "row") + "." +
                        (transB ? "col" : "row") +
                        ".f32.f16.f16.f32 {$0, $1, $2, $3, $4, $5, $6, $7}, {$8, $9}, {$10, $11}, "
                        "{$12, $13, $14, $15, $16, $17, $18, $19};";
  for (int64_t ks = 0; ks < gemm.getK() / 4; ++ks) {
    Value k0 = cst(ks * 4);
    SmallVector<SmallVector<Value>> aRegs, bRegs;
    for (int64_t mi = 0; mi < mt; ++mi) {
      Value r0 = add(warpRow, cst(mi * 16));
      aRegs.push_back(transA ? load4(a, add(k0, quarter), add(r0, highHalf))
                             : load4(a, add(r0, inGroup), k0));
    }
    for (int64_t ni = 0; ni < nt; ++ni) {
      Value c0 = add(warpCol, cst(ni * 16));
      bRegs.push_back(transB ? load4(b, add(c0, inGroup), k0)
                             : load4(b, add(k0, quarter), add(c0, highHalf)));
    }
    for (int64_t mi = 0; mi < mt; ++mi) {
      for (int64_t ni = 0; ni < nt; ++ni) {
        int64_t base = (mi * nt + ni) * 8;
        SmallVector<Value> operands(aRegs[mi].begin(), aRegs[mi].end());
        operands.append(bRegs[ni].begin(), bRegs[ni].end());
        for (int64_t e = 0; e < 8; ++e)
          operands.push_back(memref::LoadOp::create(b_, loc_, c.memref, ValueRange{cst(base + e)}));
        SmallVector<Value> d =
            emitPtx(b_, loc_, mmaText, "=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,f,f,f,f,f,f,f,f", operands,
                    SmallVector<Type>(8, f32), false);
        for (int64_t e = 0; e < 8; ++e)
          memref::StoreOp::create(b_, loc_, d[e], c.memref, ValueRange{cst(base + e)});
      }
    }
  }
  lastWasBarrier_ = false;
  return success();
}

Value KernelLowering::wgmmaDescriptor(const BufferInfo &buffer, Value row, Value col,
                                      bool mnMajor) {
  // Bits 0-13: start address >> 4; 16-29: leading byte offset >> 4; 32-45:
  // stride byte offset >> 4; 62-63: swizzle (1: 128 B, 2: 64 B, 3: 32 B).
  // K-major: 8-row groups are 8 rows apart (stride); the leading offset is
  // unused. MN-major: 8-row groups along K likewise; panels along M or N
  // are the leading offset apart.
  const SharedSwizzle &swizzle = buffer.swizzle;
  int64_t rows = buffer.type.getShape()[0];
  int64_t stride = 8 * swizzle.rowBytes;
  int64_t leading = mnMajor ? rows * swizzle.rowBytes : 16;
  int64_t mode = swizzle.rowBytes == 128 ? 1 : swizzle.rowBytes == 64 ? 2 : 3;
  uint64_t fields = (uint64_t((leading >> 4) & 0x3FFF) << 16) |
                    (uint64_t((stride >> 4) & 0x3FFF) << 32) | (uint64_t(mode) << 62);
  Type i64 = b_.getI64Type();
  Value address = sharedAddress(buffer, {row, col});
  Value start = arith::ShRUIOp::create(
      b_, loc_,
      arith::AndIOp::create(b_, loc_, address,
                            arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(i64, 0x3FFFF))),
      arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(i64, 4)));
  return arith::OrIOp::create(b_, loc_, start,
                              arith::ConstantOp::create(b_, loc_,
                                                        b_.getIntegerAttr(i64, int64_t(fields))));
}

SmallVector<Value> KernelLowering::fenceValues(ArrayRef<Value> values) {
  std::string constraints;
  for (size_t r = 0; r < values.size(); ++r)
    constraints += (r ? ",=f" : "=f");
  for (size_t r = 0; r < values.size(); ++r)
    constraints += "," + std::to_string(r);
  SmallVector<Type> types;
  for (Value v : values)
    types.push_back(v.getType());
  return emitPtx(b_, loc_, "", constraints, values, types, true);
}

void KernelLowering::fenceRegisters(Value fragment, int64_t regs) {
  const BufferInfo &info = buffers_[fragment];
  SmallVector<Value> values;
  for (int64_t r = 0; r < regs; ++r)
    values.push_back(memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(r)}));
  SmallVector<Value> fenced = fenceValues(values);
  for (int64_t r = 0; r < regs; ++r)
    memref::StoreOp::create(b_, loc_, fenced[r], info.memref, ValueRange{cst(r)});
}

LogicalResult KernelLowering::lowerGemmWgmma(GemmOp gemm, const MmaAtom &atom) {
  const BufferInfo &a = buffers_[gemm.getA()];
  const BufferInfo &b = buffers_[gemm.getB()];
  const BufferInfo &c = buffers_[gemm.getC()];
  MmaLayoutAttr mma = c.mma;
  int64_t n = gemm.getN();
  if (!mma || mma.getWarpsN() != 1 || mma.getWarpsM() * 32 != kernel_.getThreads() ||
      a.swizzle.rowBytes == 0 || b.swizzle.rowBytes == 0 || !a.type.isShared() ||
      !b.type.isShared())
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its accumulator and swizzled shared operands laid out "
                                 "by tile-layout-inference";
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  std::string type = a.type.getElementType().isBF16() ? "bf16" : "f16";
  Type f32 = b_.getF32Type();
  if (!inAsyncMmaPipeline_) {
    // Shared writes so far went through the generic proxy.
    emitPtx(b_, loc_, "fence.proxy.async.shared::cta;", "", {}, {}, /*sideEffects=*/true);
    lastWasBarrier_ = false;
    barrier();
  }
  // imm-trans-a/b are 1 for MN-major operands (PTX ISA §9.7.15.5.1.2): A
  // stored M x K and B stored N x K (transpose_b) are K-major, so B's flag
  // is 1 unless B is transposed.
  // Warpgroup g computes rows 64 g .. 64 g + 63; its warps hold the m16n8
  // accumulator tiles of their 16 rows, which is wgmma's D layout
  // (PTX ISA §9.7.15.5.1.1.1): register 4 j + 2 h + e is row 16 w + lane / 4
  // + 8 h, column 8 j + 2 (lane mod 4) + e.
  Value row0 = mul(arith::DivUIOp::create(b_, loc_, threadId_, cst(128)), cst(64));
  int64_t regs = n / 2;
  // One inline-assembly block holds the fence and every k-step's
  // instruction (the accumulators are its in/out operands once, not once
  // per k-step), then commits the group.
  int64_t steps = gemm.getK() / 16;
  std::string regList;
  for (int64_t r = 0; r < regs; ++r)
    regList += (r ? ", $" : "$") + std::to_string(r);
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.fence.sync.aligned;\n";
  for (int64_t ks = 0; ks < steps; ++ks)
    text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." +
            type + " {" + regList + "}, $" + std::to_string(regs + 2 * ks) + ", $" +
            std::to_string(regs + 2 * ks + 1) + ", p, 1, 1, " + (transA ? "1" : "0") + ", " +
            (transB ? "0" : "1") + ";\n";
  text += "wgmma.commit_group.sync.aligned;\n}";
  std::string constraints;
  for (int64_t r = 0; r < regs; ++r)
    constraints += (r ? ",=f" : "=f");
  for (int64_t ks = 0; ks < steps; ++ks)
    constraints += ",l,l";
  for (int64_t r = 0; r < regs; ++r)
    constraints += "," + std::to_string(r);
  SmallVector<Value> operands;
  for (int64_t ks = 0; ks < steps; ++ks) {
    Value k0 = cst(ks * 16);
    // A is 64 x 16 at (row0, k0): K-major unless transposed.
    operands.push_back(transA ? wgmmaDescriptor(a, k0, row0, true)
                              : wgmmaDescriptor(a, row0, k0, false));
    // B is 16 x N at k0: MN-major unless transposed (then N x 16, K-major).
    operands.push_back(transB ? wgmmaDescriptor(b, cst(0), k0, false)
                              : wgmmaDescriptor(b, k0, cst(0), true));
  }
  // The accumulators stay SSA values through the gemm (one load and one
  // store of the fragment), fenced so LLVM orders other accesses around it.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < regs; ++r)
    acc.push_back(memref::LoadOp::create(b_, loc_, c.memref, ValueRange{cst(r)}));
  acc = fenceValues(acc);
  operands.append(acc.begin(), acc.end());
  acc = emitPtx(b_, loc_, text, constraints, operands, SmallVector<Type>(regs, f32), true);
  int64_t wait = inAsyncMmaPipeline_ ? asyncMmaInFlight_ : 0;
  emitPtx(b_, loc_, "wgmma.wait_group.sync.aligned " + std::to_string(wait) + ";", "", {}, {},
          /*sideEffects=*/true);
  if (wait == 0)
    acc = fenceValues(acc);
  for (int64_t r = 0; r < regs; ++r)
    memref::StoreOp::create(b_, loc_, acc[r], c.memref, ValueRange{cst(r)});
  if (wait != 0 && !llvm::is_contained(asyncAccumulators_, std::pair<Value, int64_t>(gemm.getC(), regs)))
    asyncAccumulators_.emplace_back(gemm.getC(), regs);
  lastWasBarrier_ = false;
  return success();
}

OpFoldResult KernelLowering::replicatedSlot(const BufferInfo &info, ArrayRef<Value> indices) {
  Value linear = indices.front();
  for (size_t k = 1; k < indices.size(); ++k)
    linear = add(mul(linear, cst(info.type.getShape()[k])), indices[k]);
  if (std::optional<int64_t> constant = getConstantIntValue(linear))
    return b_.getIndexAttr(*constant);
  return linear;
}

/// The largest replicated fragment indexed dynamically (a select per slot).
constexpr int64_t kMaxDynamicReplicatedSlots = 64;

Value KernelLowering::loadReplicated(const BufferInfo &info, ArrayRef<Value> indices) {
  OpFoldResult slot = replicatedSlot(info, indices);
  if (auto attr = dyn_cast<Attribute>(slot))
    return memref::LoadOp::create(b_, loc_, info.memref,
                                  ValueRange{cst(cast<IntegerAttr>(attr).getInt())});
  Value index = cast<Value>(slot);
  int64_t slots = info.type.getNumElements();
  Value value = memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(0)});
  for (int64_t s = 1; s < std::min(slots, kMaxDynamicReplicatedSlots); ++s) {
    Value candidate = memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(s)});
    Value hit = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, index, cst(s));
    value = arith::SelectOp::create(b_, loc_, hit, candidate, value);
  }
  return value;
}

void KernelLowering::storeReplicated(const BufferInfo &info, ArrayRef<Value> indices,
                                     Value value) {
  OpFoldResult slot = replicatedSlot(info, indices);
  if (auto attr = dyn_cast<Attribute>(slot)) {
    memref::StoreOp::create(b_, loc_, value, info.memref,
                            ValueRange{cst(cast<IntegerAttr>(attr).getInt())});
    return;
  }
  Value index = cast<Value>(slot);
  for (int64_t s = 0; s < std::min(info.type.getNumElements(), kMaxDynamicReplicatedSlots); ++s) {
    Value old = memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(s)});
    Value hit = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, index, cst(s));
    memref::StoreOp::create(b_, loc_, arith::SelectOp::create(b_, loc_, hit, value, old),
                            info.memref, ValueRange{cst(s)});
  }
}

LogicalResult KernelLowering::lowerReduce(ReduceOp reduce) {
  const BufferInfo &src = buffers_[reduce.getSrc()];
  const BufferInfo &dst = buffers_[reduce.getDst()];
  if (!dst.replicated)
    return reduce.emitOpError() << "needs its destination replicated by tile-layout-inference";
  if (dst.type.getNumElements() > kMaxDynamicReplicatedSlots)
    return reduce.emitOpError() << "produces " << dst.type.getNumElements()
                                << " results per block; at most "
                                << kMaxDynamicReplicatedSlots << " are supported";
  Type acc = dst.type.getElementType();
  ReduceKind kind = reduce.getKind();
  int64_t rows = dst.type.getNumElements();
  auto identity = [&]() -> Value {
    const llvm::fltSemantics &sem = cast<FloatType>(acc).getFloatSemantics();
    APFloat value = kind == ReduceKind::max   ? APFloat::getInf(sem, /*Negative=*/true)
                    : kind == ReduceKind::min ? APFloat::getInf(sem, /*Negative=*/false)
                                              : APFloat::getZero(sem);
    return arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(acc, value));
  };
  auto combine = [&](Value x, Value y) -> Value {
    switch (kind) {
    case ReduceKind::max:
      return arith::MaximumFOp::create(b_, loc_, x, y);
    case ReduceKind::min:
      return arith::MinimumFOp::create(b_, loc_, x, y);
    default:
      return arith::AddFOp::create(b_, loc_, x, y);
    }
  };

  // 1. Each thread reduces its own elements, row by row (in registers).
  Value partials;
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(entry_);
    partials = memref::AllocaOp::create(b_, loc_, MemRefType::get({rows}, acc));
  }
  Value init = identity();
  for (int64_t r = 0; r < rows; ++r)
    memref::StoreOp::create(b_, loc_, init, partials, ValueRange{cst(r)});
  ArrayRef<int64_t> shape = src.type.getShape();
  forEachOwned(shape, src.distribution, src.mma, [&](const Chunk &chunk) {
    Value row = cst(0);
    for (size_t k = 0; k + 1 < chunk.coords.size(); ++k)
      row = add(mul(row, cst(shape[k])), chunk.coords[k]);
    std::optional<int64_t> staticRow = getConstantIntValue(row);
    for (int64_t v = 0; v < chunk.vector; ++v) {
      Value x = convert(memref::LoadOp::create(b_, loc_, src.memref,
                                               ValueRange{cst(chunk.firstSlot + v)}),
                        acc);
      if (kind == ReduceKind::abssum)
        x = math::AbsFOp::create(b_, loc_, x);
      for (int64_t r = 0; r < rows; ++r) {
        if (staticRow && *staticRow != r)
          continue;
        Value old = memref::LoadOp::create(b_, loc_, partials, ValueRange{cst(r)});
        Value updated = combine(old, x);
        if (!staticRow)
          updated = arith::SelectOp::create(
              b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, row, cst(r)),
              updated, old);
        memref::StoreOp::create(b_, loc_, updated, partials, ValueRange{cst(r)});
      }
    }
  });

  // 2. Across the warp: butterfly shuffles leave the result in every lane.
  int64_t warps = kernel_.getThreads() / 32;
  SmallVector<Value> results;
  for (int64_t r = 0; r < rows; ++r) {
    Value x = memref::LoadOp::create(b_, loc_, partials, ValueRange{cst(r)});
    for (int32_t offset = 16; offset >= 1; offset /= 2)
      x = combine(x, gpu::ShuffleOp::create(b_, loc_, x, offset, 32, gpu::ShuffleMode::XOR)
                         .getShuffleResult());
    results.push_back(x);
  }

  // 3. Across warps: lane 0 of each warp publishes, every thread combines.
  if (warps > 1) {
    if (!reduce.getScratch())
      return reduce.emitOpError() << "needs scratch shared memory; run tile-plan-shared-memory";
    const BufferInfo &scratch = buffers_[reduce.getScratch()];
    Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
    Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
    barrier();
    auto leader = scf::IfOp::create(
        b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, lane, cst(0)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(leader.thenBlock());
      for (int64_t r = 0; r < rows; ++r)
        memref::StoreOp::create(b_, loc_, convert(results[r], b_.getF32Type()), scratch.memref,
                                ValueRange{warp, cst(r)});
    }
    lastWasBarrier_ = false;
    barrier();
    for (int64_t r = 0; r < rows; ++r) {
      Value x = convert(identity(), b_.getF32Type());
      for (int64_t w = 0; w < warps; ++w)
        x = combine(x, memref::LoadOp::create(b_, loc_, scratch.memref, ValueRange{cst(w), cst(r)}));
      results[r] = convert(x, acc);
    }
    // Later reductions reuse the scratch.
    lastWasBarrier_ = false;
    barrier();
  }

  // 4. Into the destination, replacing it or combining with it.
  for (int64_t r = 0; r < rows; ++r) {
    Value x = results[r];
    if (!reduce.getClear())
      x = combine(memref::LoadOp::create(b_, loc_, dst.memref, ValueRange{cst(r)}), x);
    memref::StoreOp::create(b_, loc_, x, dst.memref, ValueRange{cst(r)});
  }
  lastWasBarrier_ = false;
  return success();
}

struct LowerToGPU : tessera::impl::TileLowerToGPUBase<LowerToGPU> {
  void runOnOperation() override {
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp kernel) { kernels.push_back(kernel); });
    for (KernelOp kernel : kernels) {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return signalPassFailure();
      KernelLowering lowering(kernel, *backend, cc);
      if (failed(lowering.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
