//===- LowerKernel.cpp - One tile.kernel to a gpu.func -------------------===//
//
// The lowering tile-lower-to-gpu (passes/LowerToGPU.cpp) runs on each
// tile.kernel. Each becomes a gpu.func kernel in the gpu.module:
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
// This file holds the kernel's setup (run) and the op dispatch;
// the rest of the lowering is split by concern: LowerLayouts.cpp (thread
// layouts and addressing), LowerCopy.cpp, LowerParallel.cpp (parallel
// bodies and reductions), LowerPipelined.cpp, LowerWarpSpecialized.cpp and
// LowerAsyncCopy.cpp (pipelined loops), LowerStreamK.cpp (persistent and
// stream-K scheduling), LowerGemm.cpp (which asks the gemm's atom, in its
// backend). KernelLowering.h holds what they share.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"
#include "contract/ElementConversion.h"
#include "contract/NvvmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

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

Value KernelLowering::convert(Value value, Type to) {
  return convertElement(b_, loc_, value, value.getType(), to);
}

void KernelLowering::fenceProxyAsync() {
  fenceProxyAsyncShared(b_, loc_);
  noteSharedAccess();
  genericSharedWrites_ = false;
}

void KernelLowering::barrier() {
  sharedWritesPending_ = false;
  if (lastWasBarrier_)
    return;
  // After a warp-specialized loop only the consumers run on: a named
  // barrier over their count (the producers have exited).
  if (consumerBarrierId_)
    namedBarrierSync(b_, loc_, consumerBarrierId_, consumerThreads_);
  else if (consumerThreads_)
    namedBarrierSync(b_, loc_, 1, consumerThreads_);
  else
    gpu::BarrierOp::create(b_, loc_);
  lastWasBarrier_ = true;
}

/// The most elements one thread may take of a tile.parallel, a fragment or a
/// copy: the lowering unrolls them per thread, so a tile far past what
/// registers hold would take the compiler minutes (and spill at run time);
/// it is a compile-time error instead.
constexpr int64_t kMaxElementsPerThread = 2048;

/// Checks every unrolled tile of `kernel` against kMaxElementsPerThread.
static LogicalResult checkUnrolledSizes(KernelOp kernel) {
  int64_t threads = kernel.getThreads();
  auto check = [&](Operation *op, ArrayRef<int64_t> shape, StringRef what) -> LogicalResult {
    int64_t elements = 1;
    for (int64_t extent : shape)
      if (llvm::MulOverflow(elements, extent, elements))
        elements = std::numeric_limits<int64_t>::max();
    int64_t perThread = llvm::divideCeil(elements, threads);
    if (perThread <= kMaxElementsPerThread)
      return success();
    return op->emitOpError() << "puts " << perThread << " elements of its " << what
                             << " on each of the kernel's " << threads
                             << " threads, over the limit of " << kMaxElementsPerThread
                             << " (the lowering unrolls them per thread): use a smaller tile or "
                                "more threads";
  };
  WalkResult result = kernel.walk([&](Operation *op) -> WalkResult {
    LogicalResult checked = success();
    if (auto parallel = dyn_cast<ParallelOp>(op))
      checked = check(op, parallel.getExtents(), "iteration space");
    else if (auto fragment = dyn_cast<AllocFragmentOp>(op))
      checked = check(op, cast<BufferType>(fragment.getType()).getShape(), "fragment");
    else if (auto copy = dyn_cast<CopyOp>(op))
      checked = check(op, copy.getTileType().getShape(), "tile");
    return failed(checked) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult KernelLowering::run() {
  if (failed(checkUnrolledSizes(kernel_)))
    return failure();
  createKernelFunc();
  mapArguments();
  if (failed(setUpKernelSchedule()))
    return failure();
  if (kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr) &&
      kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr).getInt() > 0) {
    auto addressSpace = gpu::AddressSpaceAttr::get(b_.getContext(), gpu::AddressSpace::Workgroup);
    sharedBase_ = gpu::DynamicSharedMemoryOp::create(
        b_, loc_, MemRefType::get({ShapedType::kDynamic}, b_.getI8Type(), nullptr, addressSpace));
  }
  resourceAnchor_ = arith::ConstantIndexOp::create(b_, loc_, 0);
  if (failed(readLoopSchedules()))
    return failure();
  if (persistent_)
    emitTileLoop();
  if (failed(lowerBlock(kernel_.getBodyBlock())))
    return failure();
  if (relocateOp_ && !keepRelocation_)
    foldPlaceholder(relocateOp_, 0);
  if (persistent_)
    b_.setInsertionPointAfter(tileLoop_);
  // Bulk tensor stores still in flight read shared memory and write the
  // output: their issuing thread waits for them before the block ends.
  if (bulkStoresPending_)
    ifThen(isThread(0), [&] { bulkWaitGroup(b_, loc_, 0, /*read=*/false); });
  for (BlockResource &resource : llvm::reverse(blockResources_))
    resource.tearDown(resource.values);
  gpu::ReturnOp::create(b_, loc_);
  kernel_.erase();
  return success();
}


void KernelLowering::createKernelFunc() {
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
  func_ = gpu::GPUFuncOp::create(b_, loc_, kernel_.getSymName(),
                                     b_.getFunctionType(paramTypes, {}));
  func_->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  func_.setKnownBlockSizeAttr(
      b_.getDenseI32ArrayAttr({int32_t(kernel_.getThreads()), 1, 1}));
  entry_ = &func_.getBody().front();
  b_.setInsertionPointToStart(entry_);

}

void KernelLowering::mapArguments() {
  unsigned param = 0;
  int64_t dynamicDim = 0;
  for (unsigned i = 0, e = kernel_.getNumKernelArguments(); i < e; ++i) {
    BlockArgument arg = kernel_.getKernelArgument(i);
    if (auto tensor = dyn_cast<TileTensorType>(arg.getType())) {
      func_.setArgAttr(param, LLVM::LLVMDialect::getAlignAttrName(),
                      b_.getI64IntegerAttr(caps_.globalVectorBytes));
      TensorInfo info{tensor, entry_->getArgument(param++), {}, {}};
      for (int64_t dim : tensor.getShape()) {
        info.divisors.push_back(ShapedType::isDynamic(dim)
                                    ? kernel_.getDynamicDimDivisibility(dynamicDim++)
                                    : dim);
        if (ShapedType::isDynamic(dim)) {
          info.dims.push_back(arith::IndexCastOp::create(b_, loc_, b_.getIndexType(),
                                                         entry_->getArgument(param++)));
          dynamicDims_.push_back(info.dims.back());
        }
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
  // The size arguments follow the tensor dimensions among the grid's symbols
  // (the runtime refuses negative ones).
  if (std::optional<ArrayRef<int64_t>> sizeArgs = kernel_.getSizeArgs())
    for (int64_t arg : *sizeArgs)
      dynamicDims_.push_back(arith::IndexCastOp::create(
          b_, loc_, b_.getIndexType(), map_.lookup(Value(kernel_.getKernelArgument(arg)))));
  static constexpr gpu::Dimension kDims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                             gpu::Dimension::z};
  for (auto [i, blockIndex] : llvm::enumerate(kernel_.getBlockIndices()))
    map_.map(blockIndex, gpu::BlockIdOp::create(b_, loc_, kDims[i]));
  rawThreadId_ = threadId_ = gpu::ThreadIdOp::create(b_, loc_, gpu::Dimension::x);
}

LogicalResult KernelLowering::setUpKernelSchedule() {
  readKernelSchedule();
  if (failed(readKernelStreamK()))
    return failure();
  if (streamK_) {
    // The workspace pointer: a param after the kernel's own (tensor maps,
    // added later, follow it).
    unsigned index = func_.getNumArguments();
    auto ptrType = LLVM::LLVMPointerType::get(b_.getContext(), kGlobalAddressSpace);
    if (failed(func_.insertArgument(index, ptrType, {}, loc_)))
      return failure();
    workspace_ = func_.getArgument(index);
  }
  if (pingPong_ || persistent_)
    relocateOp_ = arith::ConstantIndexOp::create(b_, loc_, 1);
  if (pingPong_) {
    int64_t threads = kernel_.getThreads();
    Value slot = arith::DivUIOp::create(b_, loc_, rawThreadId_, cst(threads));
    Value tiles = arith::ConstantIndexOp::create(b_, loc_, 2);
    tileSlotOp_ = slot.getDefiningOp();
    tilesPerBlockOp_ = tiles.getDefiningOp();
    Value y = kernel_.getBlockIndices()[1];
    blockIdY_ = map_.lookup(y);
    map_.map(y, add(mul(blockIdY_, tiles), slot));
    threadId_ = arith::SubIOp::create(b_, loc_, rawThreadId_, mul(slot, cst(threads)));
  }
  return success();
}

LogicalResult KernelLowering::readLoopSchedules() {
  // Every pipelined loop's schedule, as tile-plan-pipelines decided it.
  // When the kernel's first top-level loop is warp-specialized, the
  // producer warpgroup leaves at onceAnchor_ (the kernel's start, or before
  // a persistent kernel's tiles), and the kernel's own code, that before the
  // loop too, runs on the consumers alone and synchronizes on their named
  // barrier (under ping-pong, its tile slot's: 1 + slot).
  WalkResult read = kernel_.walk([&](PipelinedOp loop) {
    FailureOr<ScheduledLoop> scheduled = readSchedule(loop);
    if (failed(scheduled))
      return WalkResult::interrupt();
    schedules_[loop] = std::move(*scheduled);
    return WalkResult::advance();
  });
  if (read.wasInterrupted())
    return failure();
  auto topLevelLoops = kernel_.getBodyBlock().getOps<PipelinedOp>();
  bool pingPongPlanned = false;
  if (!topLevelLoops.empty()) {
    PipelinedOp loop = *topLevelLoops.begin();
    const ScheduledLoop &scheduled = schedules_[loop];
    if (scheduled.strategy->specializesWarps())
      specialized_ = loop;
    pingPongPlanned = scheduled.strategy->runsPingPong(scheduled.plan);
  }
  if (pingPong_ && !pingPongPlanned)
    dropPingPong();
  if (specialized_ && !pingPong_ && !persistent_)
    relocateEarlyBuffers(specialized_);
  if (specialized_) {
    consumerThreads_ = kernel_.getThreads();
    if (pingPong_)
      consumerBarrierId_ = toI32(add(tileSlotOp_->getResult(0), cst(1)));
    if (!persistent_)
      onceAnchor_ = arith::ConstantIndexOp::create(b_, loc_, 0);
  }

  return success();
}

void KernelLowering::emitTileLoop() {
  // The body runs once per tile of the grid this block takes: linear tile
  // t = blockIdx.x, + gridDim.x, ... (the runtime launches as many blocks
  // as the device holds).
  func_->setAttr(kLoweredPersistentAttr, UnitAttr::get(b_.getContext()));
  // Stream-K: the once-per-block part of a warp-specialized loop goes
  // here, before the consumers' work-item decomposition (whose values
  // would otherwise stay live through the producer's 40 registers).
  if (streamK_)
    onceAnchor_ = arith::ConstantIndexOp::create(b_, loc_, 0);
  // The grid's block count (stream-K computes its own, with its split).
  Value total = streamK_ ? Value() : emitGridExtents();
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(entry_);
    ringBase_ = memref::AllocaOp::create(b_, loc_, MemRefType::get({1}, b_.getIndexType()));
  }
  memref::StoreOp::create(b_, loc_, cst(0), ringBase_, ValueRange{cst(0)});
  if (streamK_) {
    PipelinedOp loop = *kernel_.getBodyBlock().getOps<PipelinedOp>().begin();
    emitStreamKParams(loop);
    int64_t threads = kernel_.getThreads(), quads = 0;
    for (Value accumulator : loopAccumulators(loop))
      quads += llvm::divideCeil(
          llvm::divideCeil(cast<BufferType>(accumulator.getType()).getNumElements(), threads),
          4);
    streamKSlotBytes_ = quads * threads * 16;
    func_->setAttr(kLoweredStreamKSlotBytesAttr, b_.getI64IntegerAttr(streamKSlotBytes_));
    tileLoop_ = emitWorkItems({}, workTile_, workBegin_, workEnd_);
    ivOffset_ = workBegin_;
    for (auto [index, coord] : llvm::zip(kernel_.getBlockIndices(), tileCoords(workTile_)))
      map_.map(index, coord);
  } else {
    tileLoop_ =
        scf::ForOp::create(b_, loc_, gpu::BlockIdOp::create(b_, loc_, gpu::Dimension::x),
                           total, gpu::GridDimOp::create(b_, loc_, gpu::Dimension::x));
    b_.setInsertionPoint(tileLoop_.getBody()->getTerminator());
    for (auto [index, coord] :
         llvm::zip(kernel_.getBlockIndices(), tileCoords(tileLoop_.getInductionVar())))
      map_.map(index, coord);
  }
}

void KernelLowering::readKernelSchedule() {
  pingPong_ = kernel_.getPingpong() && kernel_.getBlockIndices().size() >= 2;
  persistent_ = kernel_.getPersistent() && !pingPong_;
  if (pingPong_ || persistent_) {
    SmallVector<AllocSharedOp> unstaged;
    kernel_.walk([&](AllocSharedOp alloc) {
      if (alloc.getStages().value_or(1) <= 1 && alloc.getOffset())
        unstaged.push_back(alloc);
    });
    int64_t start = relocationStart(), packed = packAfterMbarriers(unstaged, start);
    pingPongSlotBytes_ = packed;
    relocatedSharedBytes_ = packed ? start + (pingPong_ ? 2 : 1) * packed : 0;
  }
}

int64_t KernelLowering::relocationStart() {
  int64_t maxStages = 1;
  kernel_.walk([&](AllocSharedOp alloc) {
    maxStages = std::max<int64_t>(maxStages, alloc.getStages().value_or(1));
  });
  return llvm::alignTo(mbarrierOffset() + 16 * maxStages, 128);
}

int64_t KernelLowering::packAfterMbarriers(ArrayRef<AllocSharedOp> allocs, int64_t start) {
  int64_t packed = 0;
  for (AllocSharedOp alloc : allocs) {
    slotShift_[alloc] = start + packed - int64_t(*alloc.getOffset());
    packed += llvm::alignTo(getBufferBytes(alloc.getType()), 128);
  }
  return packed;
}

llvm::SetVector<AllocSharedOp> KernelLowering::earlyBuffers(PipelinedOp loop) {
  // The stages' bytes, and the unstaged buffers the code before the loop
  // accesses that share some of them.
  SmallVector<std::pair<int64_t, int64_t>> stageBytes;
  kernel_.walk([&](AllocSharedOp alloc) {
    int64_t stages = alloc.getStages().value_or(1);
    if (stages > 1 && alloc.getOffset())
      stageBytes.push_back(
          {*alloc.getOffset(), *alloc.getOffset() + stages * getBufferBytes(alloc.getType())});
  });
  llvm::SetVector<AllocSharedOp> early;
  for (Operation &op : kernel_.getBodyBlock()) {
    if (&op == loop.getOperation())
      break;
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        auto alloc = operand.getDefiningOp<AllocSharedOp>();
        if (!alloc || alloc.getStages().value_or(1) > 1 || !alloc.getOffset())
          continue;
        int64_t begin = *alloc.getOffset(), end = begin + getBufferBytes(alloc.getType());
        if (llvm::any_of(stageBytes,
                         [&](auto range) { return begin < range.second && range.first < end; }))
          early.insert(alloc);
      }
    });
  }
  return early;
}

int64_t KernelLowering::packedEnd(ArrayRef<AllocSharedOp> buffers) {
  int64_t end = relocationStart();
  for (AllocSharedOp alloc : buffers)
    end += llvm::alignTo(getBufferBytes(alloc.getType()), 128);
  return end;
}

void KernelLowering::relocateEarlyBuffers(PipelinedOp loop) {
  if (!sharedBase_)
    return;
  llvm::SetVector<AllocSharedOp> early = earlyBuffers(loop);
  if (early.empty())
    return;
  int64_t start = relocationStart();
  relocatedSharedBytes_ = start + packAfterMbarriers(early.getArrayRef(), start);
  // Before the shared base, after which the buffers' views go.
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(sharedBase_.getDefiningOp());
  relocateOp_ = arith::ConstantIndexOp::create(b_, loc_, 1);
  keepRelocation_ = true;
}

void KernelLowering::ptx(StringRef text, StringRef constraints, ValueRange operands) {
  emitPtx(b_, loc_, text, constraints, operands, {}, /*sideEffects=*/true);
}

bool isPlainArithmetic(Operation *op) {
  return op->getNumRegions() == 0 && !isa<TileDialect>(op->getDialect()) &&
         isMemoryEffectFree(op);
}

bool writesSharedBuffer(Operation *op) {
  Value written;
  if (auto copy = dyn_cast<CopyOp>(op))
    written = copy.getDst();
  else if (auto store = dyn_cast<StoreOp>(op))
    written = store.getBuffer();
  else if (isa<FillOp, ClearOp>(op))
    written = op->getOperand(0);
  auto type = written ? dyn_cast<BufferType>(written.getType()) : BufferType();
  return type && type.isShared();
}

void KernelLowering::foldPlaceholder(Operation *&op, int64_t value) {
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(op);
  op->getResult(0).replaceAllUsesWith(cst(value));
  op->erase();
  op = nullptr;
}

void KernelLowering::dropPingPong() {
  foldPlaceholder(tileSlotOp_, 0);
  foldPlaceholder(tilesPerBlockOp_, 1);
  pingPong_ = false;
  keepRelocation_ = false;
}

FailureOr<Value> KernelLowering::valueAt(Value value, IRMapping &at) {
  if (Value known = at.lookupOrNull(value))
    return known;
  Operation *op = value.getDefiningOp();
  if (auto dim = dyn_cast_or_null<DimOp>(op)) {
    // A tile.view's dimensions exist only where the view is lowered.
    if (!isa<BlockArgument>(dim.getTensor()))
      return failure();
    return tensors_[dim.getTensor()].dims[dim.getIndex()];
  }
  if (auto read = dyn_cast_or_null<ReadOp>(op)) {
    // Read again where the value is needed (a producer's own iteration).
    SmallVector<Value> indices;
    for (Value index : read.getIndices()) {
      FailureOr<Value> mapped = valueAt(index, at);
      if (failed(mapped))
        return failure();
      indices.push_back(*mapped);
    }
    Value lowered = readIndex(read, indices);
    at.map(value, lowered);
    return lowered;
  }
  if (!op) {
    // Kernel arguments, the other block coordinates, tensor dimensions.
    if (Value lowered = map_.lookupOrNull(value))
      return lowered;
    return failure();
  }
  if (!isPlainArithmetic(op))
    return failure();
  for (Value operand : op->getOperands()) {
    FailureOr<Value> mapped = valueAt(operand, at);
    if (failed(mapped))
      return failure();
    at.map(operand, *mapped);
  }
  return b_.clone(*op, at)->getResult(cast<OpResult>(value).getResultNumber());
}

Value KernelLowering::addTensorMap(Value tensor, ArrayRef<int64_t> box, int64_t swizzle) {
  int64_t param = -1;
  for (unsigned i = 0; i < kernel_.getNumKernelArguments(); ++i)
    if (kernel_.getKernelArgument(i) == tensor)
      param = i;
  // Only a kernel argument has an address the host knows (not a tile.view).
  if (param < 0)
    return Value();
  unsigned index = func_.getNumArguments();
  if (failed(func_.insertArgument(
          index, LLVM::LLVMPointerType::get(b_.getContext()),
          b_.getDictionaryAttr(
              b_.getNamedAttr(LLVM::LLVMDialect::getAlignAttrName(), b_.getI64IntegerAttr(64))),
          loc_)))
    return Value();
  auto append = [&](StringRef name, ArrayRef<int64_t> values) {
    SmallVector<int64_t> all;
    if (auto existing = func_->getAttrOfType<DenseI64ArrayAttr>(name))
      llvm::append_range(all, existing.asArrayRef());
    llvm::append_range(all, values);
    func_->setAttr(name, b_.getDenseI64ArrayAttr(all));
  };
  append(kTensorMapArgsAttr, {int64_t(index)});
  SmallVector<int64_t> map = {param, swizzle, int64_t(box.size())};
  llvm::append_range(map, box);
  append(kTensorMapsAttr, map);
  return func_.getArgument(index);
}

bool KernelLowering::dependsOnBlockIndices(Value value) {
  return dependsOnAny(value, SmallVector<Value>(kernel_.getBlockIndices()));
}

bool KernelLowering::dependsOnAny(Value value, ArrayRef<Value> roots) {
  SmallVector<Value> work = {value};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (llvm::is_contained(roots, v))
      return true;
    if (Operation *op = v.getDefiningOp())
      llvm::append_range(work, op->getOperands());
  }
  return false;
}

void KernelLowering::ifThen(Value condition, llvm::function_ref<void()> body) {
  auto branch = scf::IfOp::create(b_, loc_, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(branch.thenBlock()->getTerminator());
  body();
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
      .Case<ViewOp>([&](ViewOp view) { return lowerView(view); })
      .Case<ReadOp>([&](ReadOp read) {
        SmallVector<Value> indices;
        for (Value index : read.getIndices())
          indices.push_back(map_.lookupOrDefault(index));
        map_.map(read.getResult(), readIndex(read, indices));
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
          if (type.getRank() != (alloc.getRowSlice() ? 1 : 2) ||
              mma.getWarpsM() * mma.getWarpsN() * 32 != kernel_.getThreads())
            return alloc.emitOpError() << "has an MMA layout that does not fit the kernel";
          slots = alloc.getRowSlice() ? rowSliceSlots(type.getShape()[0], mma)
                                      : type.getShape()[0] / mma.getWarpsM() *
                                            type.getShape()[1] / mma.getWarpsN() / 32;
        } else {
          slots = dist.slotsPerThread(type.getNumElements());
        }
        OpBuilder::InsertionGuard guard(b_);
        b_.setInsertionPointToStart(entry_);
        auto memrefType = MemRefType::get({slots}, getStorageType(type.getElementType()));
        BufferInfo info{type, memref::AllocaOp::create(b_, loc_, memrefType), dist};
        info.mma = mma;
        info.replicated = alloc.getReplicated();
        info.rowSlice = alloc.getRowSlice();
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
        auto memrefType = MemRefType::get(shape, getStorageType(type.getElementType()), nullptr,
                                           addressSpace);
        // Ping-pong: moved out of the plan (where it may share bytes with the
        // stages, which the other tile still reads) to its slot's copy; the
        // planned offset again when the schedule is dropped (tiles = 1,
        // slot = 0).
        Value offset = cst(*alloc.getOffset());
        if (relocateOp_ && slotShift_.count(alloc)) {
          offset = arith::AddIOp::create(
              b_, loc_, offset,
              arith::MulIOp::create(b_, loc_, relocateOp_->getResult(0),
                                    cst(slotShift_[alloc])));
          if (pingPong_)
            offset = arith::AddIOp::create(
                b_, loc_, offset,
                arith::MulIOp::create(b_, loc_, tileSlotOp_->getResult(0),
                                      cst(pingPongSlotBytes_)));
        }
        Value view = memref::ViewOp::create(b_, loc_, memrefType, sharedBase_, offset,
                                            ValueRange{});
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
      .Case<ClearOp>([&](ClearOp clear) { return lowerClear(clear.getBuffer()); })
      .Case<ParallelOp>([&](ParallelOp loop) { return lowerParallel(loop); })
      .Case<PipelinedOp>([&](PipelinedOp loop) { return lowerPipelined(loop); })
      .Case<IfOp>([&](IfOp op) { return lowerIf(op); })
      .Case<SerialOp>([&](SerialOp op) { return lowerSerial(op); })
      .Case<VarOp, VarGetOp, VarSetOp, RequireOp>([&](Operation *op) { return lowerVariable(op); })
      .Case<WaitPriorKernelsOp, LaunchDependentsOp>([&](Operation *op) {
        // Without grid dependency control a kernel starts after the one
        // before it has ended: nothing to wait for, nothing to signal.
        if (!caps_.hasGridDependencyControl)
          return success();
        bool wait = isa<WaitPriorKernelsOp>(op);
        gridDependencyControl(b_, loc_, wait);
        if (wait)
          func_->setAttr(kLoweredWaitsForPriorKernelsAttr, UnitAttr::get(b_.getContext()));
        return success();
      })
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
        // Pure arithmetic (index math) touches no shared memory: a barrier
        // just emitted still orders what follows.
        if (!isMemoryEffectFree(other))
          noteSharedAccess();
        return success();
      });
}

FailureOr<SmallVector<Value>>
KernelLowering::blockResource(Operation *op, StringRef key, int64_t sharedBytes,
                              llvm::function_ref<SmallVector<Value>(Value shared)> setUp,
                              std::function<void(ArrayRef<Value>)> tearDown) {
  for (const BlockResource &resource : blockResources_)
    if (resource.key == key)
      return resource.values;
  int64_t offset = llvm::alignTo(launchSharedBytes(), 8);
  if (offset + sharedBytes > caps_.sharedMemoryPerBlock)
    return op->emitOpError() << "needs " << sharedBytes << " bytes of shared memory for its " << key
                             << " after the kernel's " << offset << ", over the "
                             << caps_.sharedMemoryPerBlock << " bytes a block has";
  setLaunchSharedBytes(offset + sharedBytes);
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(resourceAnchor_);
  if (!sharedBase_) {
    auto space = gpu::AddressSpaceAttr::get(b_.getContext(), gpu::AddressSpace::Workgroup);
    sharedBase_ = gpu::DynamicSharedMemoryOp::create(
        b_, loc_, MemRefType::get({ShapedType::kDynamic}, b_.getI8Type(), nullptr, space));
  }
  Value start = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, sharedBase_);
  SmallVector<Value> values = setUp(toI32(add(start, cst(offset))));
  blockResources_.push_back({key.str(), values, std::move(tearDown)});
  return values;
}

int64_t KernelLowering::launchSharedBytes() {
  if (auto bytes = func_->getAttrOfType<IntegerAttr>(kLoweredSharedBytesAttr))
    return bytes.getInt();
  auto planned = kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr);
  return planned ? planned.getInt() : 0;
}

void KernelLowering::setLaunchSharedBytes(int64_t bytes) {
  func_->setAttr(kLoweredSharedBytesAttr, b_.getI64IntegerAttr(bytes));
}

void KernelLowering::setBlockThreads(int64_t threads) {
  func_->setAttr(kLoweredBlockThreadsAttr, b_.getI64IntegerAttr(threads));
  func_.setKnownBlockSizeAttr(b_.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
}

void KernelLowering::setClusterBlocks(int64_t x, int64_t y) {
  func_->setAttr(kLoweredClusterXAttr, b_.getI64IntegerAttr(x));
  if (y > 1)
    func_->setAttr(kLoweredClusterYAttr, b_.getI64IntegerAttr(y));
  else
    func_->removeAttr(kLoweredClusterYAttr);
}

void KernelLowering::setTilesPerBlock(int64_t tiles) {
  func_->setAttr(kLoweredTilesPerBlockAttr, b_.getI64IntegerAttr(tiles));
}

} // namespace tessera::lowering
