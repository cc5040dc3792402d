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
// The pipelining strategies are in LowerPipelined.cpp, the MMA atoms in
// LowerGemm.cpp; KernelLowering.h holds what they share.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"
#include "backends/NvvmOps.h"

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

namespace tessera {
#define GEN_PASS_DEF_TILELOWERTOGPU
#include "passes/Passes.h.inc"
} // namespace tessera

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

void KernelLowering::fenceProxyAsync() {
  fenceProxyAsyncShared(b_, loc_);
  lastWasBarrier_ = false;
  genericSharedWrites_ = false;
}

void KernelLowering::barrier() {
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
  static constexpr gpu::Dimension kDims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                             gpu::Dimension::z};
  for (auto [i, blockIndex] : llvm::enumerate(kernel_.getBlockIndices()))
    map_.map(blockIndex, gpu::BlockIdOp::create(b_, loc_, kDims[i]));
  rawThreadId_ = threadId_ = gpu::ThreadIdOp::create(b_, loc_, gpu::Dimension::x);
  pingPong_ = kernel_.getPingpong() && kernel_.getBlockIndices().size() >= 2;
  persistent_ = kernel_.getPersistent() && !pingPong_;
  streamK_ = persistent_ && kernel_.getStreamK();
  if (streamK_) {
    if (std::optional<std::string> why = whyNoStreamK()) {
      kernel_.emitRemark() << "stream-K not applied (the kernel stays persistent): " << *why;
      streamK_ = false;
    }
  }
  if (streamK_) {
    // The workspace pointer: a param after the kernel's own (tensor maps,
    // added later, follow it).
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, ptrType, {}, loc_)))
      return failure();
    workspace_ = func.getArgument(index);
  }
  if (pingPong_ || persistent_) {
    SmallVector<AllocSharedOp> unstaged;
    kernel_.walk([&](AllocSharedOp alloc) {
      if (alloc.getStages().value_or(1) <= 1 && alloc.getOffset())
        unstaged.push_back(alloc);
    });
    int64_t start = relocationStart(), packed = packAfterMbarriers(unstaged, start);
    pingPongSlotBytes_ = packed;
    relocatedSharedBytes_ = packed ? start + (pingPong_ ? 2 : 1) * packed : 0;
    relocateOp_ = arith::ConstantIndexOp::create(b_, loc_, 1);
  }
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
  if (kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr) &&
      kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr).getInt() > 0) {
    auto addressSpace = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    sharedBase_ = gpu::DynamicSharedMemoryOp::create(
        b_, loc_, MemRefType::get({ShapedType::kDynamic}, b_.getI8Type(), nullptr, addressSpace));
  }
  // The kernel's first top-level pipelined loop is planned here: when it is
  // warp-specialized, the producer warpgroup leaves at onceAnchor_ (the
  // kernel's start, or before a persistent kernel's tiles), and the
  // kernel's own code, that before the loop too, runs on the consumers
  // alone and synchronizes on their named barrier (under ping-pong, its
  // tile slot's: 1 + slot).
  auto topLevelLoops = kernel_.getBodyBlock().getOps<PipelinedOp>();
  bool pingPongPlanned = false;
  if (!topLevelLoops.empty()) {
    PipelinedOp loop = *topLevelLoops.begin();
    PipelinePlan plan = planPipelined(loop);
    if (plan.specialize)
      specialized_ = loop;
    pingPongPlanned = plan.pingPong;
  }
  if (pingPong_ && !pingPongPlanned)
    dropPingPong();
  if (specialized_ && !pingPong_ && !persistent_ && !relocateEarlyBuffers(specialized_))
    specialized_ = nullptr;
  if (kernel_.getMulticast() && !specialized_)
    kernel_.emitRemark() << "multicast not applied: no warp-specialized pipelined loop (it "
                            "needs bulk tensor copies, mbarriers and an asynchronous MMA)";
  if (specialized_) {
    consumerThreads_ = kernel_.getThreads();
    if (pingPong_)
      consumerBarrierId_ = toI32(add(tileSlotOp_->getResult(0), cst(1)));
    if (!persistent_)
      onceAnchor_ = arith::ConstantIndexOp::create(b_, loc_, 0);
  }

  if (persistent_) {
    // The body runs once per tile of the grid this block takes: linear tile
    // t = blockIdx.x, + gridDim.x, ... (the runtime launches as many blocks
    // as the device holds).
    func_->setAttr(kLoweredPersistentAttr, UnitAttr::get(ctx));
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
      skSlotBytes_ = quads * threads * 16;
      func_->setAttr(kLoweredStreamKSlotBytesAttr, b_.getI64IntegerAttr(skSlotBytes_));
      tileLoop_ = emitWorkItems({}, skTile_, skBegin_, skEnd_);
      ivOffset_ = skBegin_;
      for (auto [index, coord] : llvm::zip(kernel_.getBlockIndices(), tileCoords(skTile_)))
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
  if (failed(lowerBlock(kernel_.getBodyBlock())))
    return failure();
  if (pingPong_ && !func_->hasAttr(kLoweredTilesPerBlockAttr))
    dropPingPong();
  if (relocateOp_ && !keepRelocation_)
    foldPlaceholder(relocateOp_, 0);
  if (persistent_)
    b_.setInsertionPointAfter(tileLoop_);
  // Bulk tensor stores still in flight read shared memory and write the
  // output: their issuing thread waits for them before the block ends.
  if (bulkStoresPending_)
    ifThen(isThread(0), [&] { bulkWaitGroup(b_, loc_, 0, /*read=*/false); });
  gpu::ReturnOp::create(b_, loc_);
  kernel_.erase();
  return success();
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

bool KernelLowering::relocateEarlyBuffers(PipelinedOp loop) {
  if (!sharedBase_)
    return true;
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
  if (early.empty())
    return true;
  int64_t start = relocationStart(), end = start + packAfterMbarriers(early.getArrayRef(), start);
  if (end > caps_.sharedMemoryPerBlock) {
    slotShift_.clear();
    InFlightDiagnostic remark = loop.emitRemark()
                                << "warp specialization not applied: the producer fills the "
                                   "stages while the code before the loop uses ";
    llvm::interleaveComma(early, remark, [&](AllocSharedOp alloc) {
      remark << (alloc.getName() ? *alloc.getName() : StringRef("<unnamed>")) << " ("
             << getBufferBytes(alloc.getType()) << " bytes)";
    });
    remark << ", planned on the stages' bytes, and after the mbarriers they would need " << end
           << " bytes, over the " << caps_.sharedMemoryPerBlock << "-byte per-block limit";
    return false;
  }
  relocatedSharedBytes_ = end;
  // Before the shared base, after which the buffers' views go.
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(sharedBase_.getDefiningOp());
  relocateOp_ = arith::ConstantIndexOp::create(b_, loc_, 1);
  keepRelocation_ = true;
  return true;
}

void KernelLowering::ptx(StringRef text, StringRef constraints, ValueRange operands) {
  emitPtx(b_, loc_, text, constraints, operands, {}, /*sideEffects=*/true);
}

bool isPlainArithmetic(Operation *op) {
  return op->getNumRegions() == 0 && !isa<TileDialect>(op->getDialect()) &&
         isMemoryEffectFree(op);
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
  if (auto dim = dyn_cast_or_null<DimOp>(op))
    return tensors_[dim.getTensor()].dims[dim.getIndex()];
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

Value KernelLowering::addTensorMap(Value tensor, int64_t rows, int64_t columns,
                                   int64_t swizzle) {
  int64_t param = 0;
  for (unsigned i = 0; i < kernel_.getNumKernelArguments(); ++i)
    if (kernel_.getKernelArgument(i) == tensor)
      param = i;
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
  append(kTensorMapsAttr, {param, rows, columns, swizzle});
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

Value KernelLowering::emitGridExtents() {
  gridExtents_.clear();
  Value total = cst(1);
  for (unsigned i = 0; i < kernel_.getGrid().getNumResults(); ++i) {
    gridExtents_.push_back(gridExtent(i));
    total = mul(total, gridExtents_.back());
  }
  return total;
}

void KernelLowering::emitStreamKParams(PipelinedOp loop) {
  // In unsigned 32-bit arithmetic, as is emitWorkItems: the counts are tiles
  // and loop iterations of tensors that fit a device's memory, and 64-bit
  // divisions cost a runtime width test and a call beside each division
  // (code the producer runs before its first load).
  Value total = toU32(emitGridExtents());
  IRMapping at;
  for (BlockArgument index : kernel_.getBlockIndices())
    at.map(index, cst(0));
  Value iters = toU32(*valueAt(loop.getCount(), at));
  Value grid = toU32(gpu::GridDimOp::create(b_, loc_, gpu::Dimension::x));
  // Whole waves run whole; with less than one wave every tile does
  // (splitting them would only add exchanges).
  Value waves = arith::DivUIOp::create(b_, loc_, total, grid);
  Value dp = arith::SelectOp::create(
      b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, waves, cst32(0)),
      total, mul(waves, grid));
  // Split only when it pays: each block then runs q split iterations
  // instead of one more whole tile (iters), and the partials' round trip
  // costs about `fixup` iterations (the target's cost model, from the
  // partials' bytes and the loop's MMA FLOPs per iteration).
  int64_t flopsPerIteration = 0, partialBytes = 0;
  loop.getBodyBlock().walk([&](GemmOp gemm) {
    flopsPerIteration += 2 * gemm.getM() * gemm.getN() * gemm.getK();
  });
  for (Value accumulator : loopAccumulators(loop))
    partialBytes += 4 * cast<BufferType>(accumulator.getType()).getNumElements();
  int64_t fixup = flopsPerIteration > 0 ? llvm::divideCeil(caps_.streamKFlopsPerPartialByte *
                                                               partialBytes,
                                                           flopsPerIteration)
                                        : 0;
  if (fixup > 0) {
    Value rest = arith::SubIOp::create(b_, loc_, total, dp);
    Value q = arith::CeilDivUIOp::create(b_, loc_, mul(rest, iters), grid);
    Value pays = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ugt,
                                       arith::SubIOp::create(b_, loc_, iters, q), cst32(fixup));
    dp = arith::SelectOp::create(b_, loc_, pays, dp, total);
  }
  Value split = mul(arith::SubIOp::create(b_, loc_, total, dp), iters);
  skIters_ = fromU32(iters);
  skGrid_ = fromU32(grid);
  skDp_ = fromU32(dp);
  skSplit_ = fromU32(split);
  skQ_ = fromU32(arith::CeilDivUIOp::create(b_, loc_, split, grid));
}

SmallVector<Value> KernelLowering::loopAccumulators(PipelinedOp loop) {
  SmallVector<Value> accumulators;
  loop.getBodyBlock().walk([&](GemmOp gemm) {
    if (!llvm::is_contained(accumulators, gemm.getC()))
      accumulators.push_back(gemm.getC());
  });
  return accumulators;
}

std::optional<std::string> KernelLowering::whyNoStreamK() {
  SmallVector<PipelinedOp> loops;
  kernel_.walk([&](PipelinedOp loop) { loops.push_back(loop); });
  if (loops.size() != 1 || loops[0]->getBlock() != &kernel_.getBodyBlock())
    return std::string("it needs exactly one pipelined loop, at the kernel's top level");
  PipelinedOp loop = loops[0];
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (isa<GemmOp, DimOp>(op))
      continue;
    if (auto copy = dyn_cast<CopyOp>(op)) {
      if (isa<TileTensorType>(copy.getSrc().getType()))
        continue;
      return std::string("the loop copies other than from tensors");
    }
    if (!isPlainArithmetic(&op))
      return std::string("the loop holds more than copies, gemms and arithmetic");
  }
  // (An accumulator may start at any value, a bias row say: the tile's
  // first piece keeps it, the later ones start at zero; see zeroLaterPieces.)
  // The iteration count is the same for every block.
  if (dependsOnBlockIndices(loop.getCount()))
    return std::string("the loop's iteration count depends on the block");
  return std::nullopt;
}

scf::ForOp KernelLowering::emitWorkItems(ValueRange iterArgs, Value &tile, Value &begin,
                                         Value &end) {
  auto minui = [&](Value x, Value y) { return arith::MinUIOp::create(b_, loc_, x, y); };
  auto select = [&](Value c, Value x, Value y) {
    return arith::SelectOp::create(b_, loc_, c, x, y);
  };
  // Unsigned 32-bit arithmetic (see emitStreamKParams); the results are
  // indices again.
  Value block = toU32(gpu::BlockIdOp::create(b_, loc_, gpu::Dimension::x));
  Value grid = toU32(skGrid_), dp = toU32(skDp_), q = toU32(skQ_), splitIters = toU32(skSplit_);
  Value iters = arith::MaxUIOp::create(b_, loc_, toU32(skIters_), cst32(1));
  Value first = minui(mul(block, q), splitIters);
  Value last = minui(add(first, q), splitIters);
  Value boundary = mul(add(arith::DivUIOp::create(b_, loc_, first, iters), cst32(1)), iters);
  Value split = minui(last, boundary);
  auto count = [&](Value from, Value to) {
    // (unsigned: a signed cast makes true -1)
    return arith::ExtUIOp::create(
        b_, loc_, b_.getI32Type(),
        arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, from, to));
  };
  // Whole tiles block, block + grid, ... below skDp_.
  Value beyond =
      arith::SubIOp::create(b_, loc_, arith::SubIOp::create(b_, loc_, dp, block), cst32(1));
  Value wholes = select(arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, block, dp),
                        add(arith::DivUIOp::create(b_, loc_, beyond, grid), cst32(1)), cst32(0));
  Value items = add(wholes, add(count(first, split), count(split, last)));
  auto loop = scf::ForOp::create(b_, loc_, cst(0), fromU32(items), cst(1), iterArgs,
                                 [](OpBuilder &nested, Location at, Value, ValueRange args) {
                                   scf::YieldOp::create(nested, at, args);
                                 });
  b_.setInsertionPoint(loop.getBody()->getTerminator());
  Value j = toU32(loop.getInductionVar());
  Value whole = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, j, wholes);
  Value firstPiece = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, j, wholes);
  Value from = select(firstPiece, first, split), to = select(firstPiece, split, last);
  Value pieceBegin = arith::RemUIOp::create(b_, loc_, from, iters);
  tile = fromU32(select(whole, add(block, mul(j, grid)),
                        add(dp, arith::DivUIOp::create(b_, loc_, from, iters))));
  begin = fromU32(select(whole, cst32(0), pieceBegin));
  end = fromU32(select(whole, toU32(skIters_),
                       add(pieceBegin, arith::SubIOp::create(b_, loc_, to, from))));
  return loop;
}

SmallVector<Value> KernelLowering::tileCoords(Value t) {
  SmallVector<Value> coords;
  for (size_t i = 0; i < gridExtents_.size(); ++i) {
    if (i + 1 == gridExtents_.size()) {
      coords.push_back(t);
      break;
    }
    coords.push_back(arith::RemUIOp::create(b_, loc_, t, gridExtents_[i]));
    t = arith::DivUIOp::create(b_, loc_, t, gridExtents_[i]);
  }
  return coords;
}

Value KernelLowering::gridExtent(unsigned dim) {
  std::function<Value(AffineExpr)> eval = [&](AffineExpr expr) -> Value {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      return cst(constant.getValue());
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
      return dynamicDims_[symbol.getPosition()];
    auto binary = cast<AffineBinaryOpExpr>(expr);
    Value lhs = eval(binary.getLHS()), rhs = eval(binary.getRHS());
    switch (expr.getKind()) {
    case AffineExprKind::Add:
      return add(lhs, rhs);
    case AffineExprKind::Mul:
      return mul(lhs, rhs);
    case AffineExprKind::FloorDiv:
      return arith::DivUIOp::create(b_, loc_, lhs, rhs);
    case AffineExprKind::CeilDiv:
      return arith::CeilDivUIOp::create(b_, loc_, lhs, rhs);
    default:
      return arith::RemUIOp::create(b_, loc_, lhs, rhs);
    }
  };
  return eval(kernel_.getGrid().getResult(dim));
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
  // Each chunk after the first moves whole rows when a chunk's elements
  // (threads x vector) fill whole rows of the leading dimension.
  bool rowSteps = shape.size() >= 2 && (threads * vector) % strides[0] == 0;
  SmallVector<Value> firstCoords;
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
    if (c == 0)
      firstCoords = chunk.coords;
    if (rowSteps) {
      chunk.base = firstCoords;
      chunk.shift.assign(shape.size(), 0);
      chunk.shift[0] = c * threads * vector / strides[0];
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

Value KernelLowering::warpId() { return arith::DivUIOp::create(b_, loc_, threadId_, cst(32)); }

Value KernelLowering::laneId() { return arith::RemUIOp::create(b_, loc_, threadId_, cst(32)); }

Value KernelLowering::warpTileRow(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp) {
  return mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())),
             cst(shape[0] / mma.getWarpsM()));
}

Value KernelLowering::warpTileCol(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp) {
  return mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())),
             cst(shape[1] / mma.getWarpsN()));
}

Value KernelLowering::quadpairId(Value lane) {
  return arith::RemUIOp::create(b_, loc_, arith::DivUIOp::create(b_, loc_, lane, cst(4)), cst(4));
}

Value KernelLowering::quadpairBlockRow(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp,
                                       Value quadpair) {
  return add(warpTileRow(shape, mma, warp),
             mul(arith::RemUIOp::create(b_, loc_, quadpair, cst(2)), cst(8)));
}

Value KernelLowering::quadpairBlockCol(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp,
                                       Value quadpair) {
  return add(warpTileCol(shape, mma, warp),
             mul(arith::DivUIOp::create(b_, loc_, quadpair, cst(2)), cst(8)));
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
  Value warp = warpId(), lane = laneId();
  Value rowBase =
      add(warpTileRow(shape, mma, warp), arith::DivUIOp::create(b_, loc_, lane, cst(4)));
  Value colBase = add(warpTileCol(shape, mma, warp),
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
  Value warp = warpId(), lane = laneId();
  Value quadpair = quadpairId(lane);
  Value high = arith::DivUIOp::create(b_, loc_, lane, cst(16));
  Value rowBase = add(quadpairBlockRow(shape, mma, warp, quadpair),
                      add(arith::AndIOp::create(b_, loc_, lane, cst(1)), mul(high, cst(4))));
  Value colBase = add(quadpairBlockCol(shape, mma, warp, quadpair),
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

Value KernelLowering::sharedByteOffset(const BufferInfo &info, ArrayRef<Value> indices) {
  // The memref's trailing extents (a staged buffer's leading stage index is
  // in `indices` only when the buffer is addressed with it).
  ArrayRef<int64_t> shape = cast<MemRefType>(info.memref.getType()).getShape().take_back(
      indices.size());
  Value linear = indices[0];
  for (size_t i = 1; i < indices.size(); ++i)
    linear = add(mul(linear, cst(shape[i])), indices[i]);
  return mul(linear, cst(getElementBytes(info.type.getElementType())));
}

Value KernelLowering::sharedAddress(const BufferInfo &info, ArrayRef<Value> coords) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, info.memref);
  Value bytes = add(base, sharedByteOffset(info, sharedIndices(info, coords)));
  return arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), bytes);
}

Value KernelLowering::sharedAddress32(const BufferInfo &info, ArrayRef<Value> coords,
                                      ArrayRef<int64_t> shift) {
  Type i32 = b_.getI32Type();
  int64_t eltBytes = getElementBytes(info.type.getElementType());
  ArrayRef<int64_t> tileShape = info.type.getShape();
  SmallVector<Value> at(coords.begin(), coords.end());
  int64_t delta = 0;
  if (llvm::any_of(shift, [](int64_t by) { return by != 0; })) {
    const SharedSwizzle &swizzle = info.swizzle;
    assert(tileShape.size() == 2 && shift.size() == 2 && "sharedAddress32 takes 2-D tiles");
    // Row and column strides of a constant shift, 0 where the shift must
    // move the coordinates instead: the swizzle repeats every 8 rows
    // (128 / rowBytes rows per line, rowBytes / 16 phases) and panels are
    // rows x rowBytes apart.
    int64_t rowStride = tileShape[1] * eltBytes, panelColumns = tileShape[1], panelStride = 0;
    if (swizzle.rowBytes != 0) {
      rowStride = shift[0] % 8 == 0 ? swizzle.rowBytes : 0;
      panelColumns = swizzle.rowBytes / eltBytes;
      panelStride = tileShape[0] * swizzle.rowBytes;
    }
    if (rowStride != 0)
      delta += shift[0] * rowStride;
    else
      at[0] = add(at[0], cst(shift[0]));
    if (swizzle.rowBytes == 0)
      delta += shift[1] * eltBytes;
    else if (shift[1] % panelColumns == 0)
      delta += shift[1] / panelColumns * panelStride;
    else
      at[1] = add(at[1], cst(shift[1]));
  }
  // The element's offset within one stage.
  BufferInfo unstaged = info;
  unstaged.stages = 1;
  Value offset = toI32(sharedByteOffset(info, sharedIndices(unstaged, at)));
  // The stage's base: the buffer's address plus whole stages.
  Value base = toI32(memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, info.memref));
  if (info.stages > 1) {
    int64_t stageBytes = eltBytes;
    for (int64_t extent : cast<MemRefType>(info.memref.getType()).getShape().drop_front())
      stageBytes *= extent;
    base = arith::AddIOp::create(b_, loc_, base, toI32(mul(info.stage, cst(stageBytes))));
  }
  Value address = arith::AddIOp::create(b_, loc_, base, offset);
  if (delta != 0)
    address = arith::AddIOp::create(
        b_, loc_, address, arith::ConstantIntOp::create(b_, loc_, i32, delta));
  return address;
}

Value KernelLowering::packVector(ArrayRef<Value> values) {
  Type i32 = b_.getI32Type();
  Value vec = LLVM::PoisonOp::create(
      b_, loc_, VectorType::get({int64_t(values.size())}, values.front().getType()));
  for (auto [i, value] : llvm::enumerate(values))
    vec = LLVM::InsertElementOp::create(b_, loc_, vec, value,
                                        arith::ConstantIntOp::create(b_, loc_, i32, i));
  return vec;
}

SmallVector<Value> KernelLowering::unpackVector(Value vec) {
  Type i32 = b_.getI32Type();
  SmallVector<Value> values;
  for (int64_t i = 0; i < cast<VectorType>(vec.getType()).getNumElements(); ++i)
    values.push_back(LLVM::ExtractElementOp::create(
        b_, loc_, vec, arith::ConstantIntOp::create(b_, loc_, i32, i)));
  return values;
}

Value KernelLowering::sharedPointer(const BufferInfo &info, ArrayRef<Value> coords) {
  return LLVM::IntToPtrOp::create(b_, loc_, LLVM::LLVMPointerType::get(b_.getContext(), 3),
                                  sharedAddress(info, coords));
}

bool KernelLowering::isSharedVector(const BufferInfo &info, int64_t vector) {
  int64_t eltBytes = getElementBytes(info.type.getElementType());
  int64_t bytes = vector * eltBytes;
  // One 4-, 8- or 16-byte access inside one row and one 16-byte chunk (the
  // unit the swizzle permutes), aligned: rows are whole vectors and buffers
  // start 128-byte aligned.
  return vector > 1 && (bytes == 4 || bytes == 8 || bytes == 16) &&
         (info.type.getShape().back() * eltBytes) % bytes == 0;
}

void KernelLowering::storeShared(const BufferInfo &info, ArrayRef<Value> coords,
                                 ArrayRef<Value> values) {
  int64_t vector = values.size();
  if (!isSharedVector(info, vector)) {
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords);
      at.back() = add(at.back(), cst(v));
      memref::StoreOp::create(b_, loc_, values[v], info.memref, sharedIndices(info, at));
    }
    return;
  }
  LLVM::StoreOp::create(b_, loc_, packVector(values), sharedPointer(info, coords),
                        vector * getElementBytes(info.type.getElementType()));
}

SmallVector<Value> KernelLowering::loadShared(const BufferInfo &info, ArrayRef<Value> coords,
                                              int64_t vector) {
  SmallVector<Value> values;
  if (!isSharedVector(info, vector)) {
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords);
      at.back() = add(at.back(), cst(v));
      values.push_back(memref::LoadOp::create(b_, loc_, info.memref, sharedIndices(info, at)));
    }
    return values;
  }
  auto vecType = VectorType::get({vector}, info.type.getElementType());
  return unpackVector(LLVM::LoadOp::create(b_, loc_, vecType, sharedPointer(info, coords),
                                           vector * getElementBytes(info.type.getElementType())));
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

Value KernelLowering::elementAddress(const TensorInfo &tensor, ArrayRef<Value> coords,
                                     Value from) {
  Value linear = coords.front();
  for (size_t k = 1; k < coords.size(); ++k)
    linear = add(mul(linear, tensor.dims[k]), coords[k]);
  Value index = arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), linear);
  return LLVM::GEPOp::create(b_, loc_, tensor.ptr.getType(), tensor.type.getElementType(),
                             from ? from : tensor.ptr, ValueRange{index},
                             LLVM::GEPNoWrapFlags::inbounds);
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
  // As in storeGlobal: when the row length is a multiple of the vector, an
  // aligned vector lies wholly inside the tensor or wholly past its end, so
  // the other branch reads zeros, with no per-element tail.
  bool wholeVectors = tensor.divisors.back() % vector == 0;
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
        if (wholeVectors) {
          scf::YieldOp::create(
              b_, l, Value(arith::ConstantOp::create(b_, l, cast<TypedAttr>(b_.getZeroAttr(vecType)))));
          return;
        }
        scf::YieldOp::create(b_, l, packVector(loadScalars(eb, l)));
      });
  return unpackVector(ifOp.getResult(0));
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
    LLVM::StoreOp::create(b_, loc_, packVector(values), elementAddress(tensor, coords),
                          vectorAlignment(vector * eltBytes));
    if (wholeVectors)
      return;
    b_.setInsertionPointToStart(ifOp.elseBlock());
    storeScalars();
  }
}

Value KernelLowering::packedPair(const BufferInfo &frag, int64_t slot, Type elt) {
  SmallVector<Value> pair;
  for (int64_t e = 0; e < 2; ++e)
    pair.push_back(
        convert(memref::LoadOp::create(b_, loc_, frag.memref, ValueRange{cst(slot + e)}), elt));
  return LLVM::BitcastOp::create(b_, loc_, b_.getI32Type(), packVector(pair));
}

bool KernelLowering::lowerMmaFragmentStore(CopyOp copy) {
  // Loads keep the generic path: a guarded 16-byte load per lane followed
  // by the shuffles serializes the loads' latency, slower on the H200 than
  // many 4-byte loads in flight.
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstTensor = dyn_cast<TileTensorType>(copy.getDst().getType());
  if (!srcBuffer || !srcBuffer.isFragment() || !dstTensor ||
      getElementBytes(dstTensor.getElementType()) != 2)
    return false;
  const BufferInfo &frag = buffers_[copy.getSrc()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  if (!mma || mma.getM() != 16 || mma.getN() != 8)
    return false;
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  if (nt % 4 != 0)
    return false;
  const TensorInfo &tensor = tensors_[copy.getDst()];
  Type elt = dstTensor.getElementType();
  Type i32 = b_.getI32Type();
  auto pairType = VectorType::get({2}, elt);
  bool aligned = isVectorAligned(tensor, copy.getDstOffsets(), 8);
  SmallVector<Value> offsets;
  for (Value v : copy.getDstOffsets())
    offsets.push_back(map_.lookupOrDefault(v));

  Value warp = warpId(), lane = laneId();
  Value quad = arith::RemUIOp::create(b_, loc_, lane, cst(4));
  Value quadI32 = toI32(quad);
  Value rowBase =
      add(warpTileRow(shape, mma, warp), arith::DivUIOp::create(b_, loc_, lane, cst(4)));
  Value colBase = add(warpTileCol(shape, mma, warp), mul(quad, cst(8)));
  // Whether bit 0 / bit 1 of this lane's index in its quad is set.
  Value quadBit[2];
  for (int64_t bit = 0; bit < 2; ++bit)
    quadBit[bit] = arith::CmpIOp::create(
        b_, loc_, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b_, loc_, quadI32,
                              arith::ConstantIntOp::create(b_, loc_, i32, 1 << bit)),
        arith::ConstantIntOp::create(b_, loc_, i32, 0));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t g = 0; g < nt / 4; ++g) {
        SmallVector<Value> coords = {add(offsets[0], add(rowBase, cst(mi * 16 + 8 * h))),
                                     add(offsets[1], add(colBase, cst(g * 32)))};
        // P[j]: this lane's pair (packed in 32 bits) of atom tile 4 g + j.
        SmallVector<Value> pairs;
        for (int64_t j = 0; j < 4; ++j)
          pairs.push_back(packedPair(frag, ((mi * nt + 4 * g + j) * 2 + h) * 2, elt));
        // The 4 x 4 transpose within the quad (lane t ends with Q[s] = the
        // pair of lane s in tile t: 8 consecutive elements) as two butterfly
        // stages: stage b swaps bit b of the lane with bit b of the slot, so
        // each pair of slots (j, j ^ m), m = 2^b, sends the one whose bit b
        // differs from the lane's to lane t ^ m, which puts it in the other.
        SmallVector<Value> quads(pairs);
        for (int64_t bit = 0; bit < 2; ++bit) {
          int64_t m = int64_t(1) << bit;
          for (int64_t lo = 0; lo < 4; ++lo) {
            if (lo & m)
              continue;
            int64_t hi = lo | m;
            Value send = arith::SelectOp::create(b_, loc_, quadBit[bit], quads[lo], quads[hi]);
            Value got = gpu::ShuffleOp::create(b_, loc_, send, m, 32, gpu::ShuffleMode::XOR)
                            .getShuffleResult();
            quads[lo] = arith::SelectOp::create(b_, loc_, quadBit[bit], got, quads[lo]);
            quads[hi] = arith::SelectOp::create(b_, loc_, quadBit[bit], quads[hi], got);
          }
        }
        SmallVector<Value> values;
        for (Value q : quads)
          llvm::append_range(values,
                             unpackVector(LLVM::BitcastOp::create(b_, loc_, pairType, q)));
        storeGlobal(tensor, coords, values, aligned);
      }
  lastWasBarrier_ = false;
  return true;
}

bool KernelLowering::lowerMmaFragmentToShared(CopyOp copy) {
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstBuffer = dyn_cast<BufferType>(copy.getDst().getType());
  if (!caps_.hasStmatrix || !srcBuffer || !srcBuffer.isFragment() || !dstBuffer ||
      !dstBuffer.isShared() || getElementBytes(dstBuffer.getElementType()) != 2 ||
      srcBuffer.getShape() != dstBuffer.getShape() || dstBuffer.getRank() != 2)
    return false;
  const BufferInfo &frag = buffers_[copy.getSrc()];
  const BufferInfo &dst = buffers_[copy.getDst()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  if (!mma || mma.getM() != 16 || mma.getN() != 8 || dst.stages > 1 || shape[1] % 8 != 0)
    return false;
  int64_t tn = shape[1] / mma.getWarpsN();
  if ((tn / 8) % 2 != 0)
    return false;
  storeMatrices(frag, dst, 0, tn);
  lastWasBarrier_ = false;
  return true;
}

void KernelLowering::storeMatrices(const BufferInfo &frag, const BufferInfo &dst,
                                   int64_t colBegin, int64_t cols) {
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  Type elt = dst.type.getElementType();
  // stmatrix.x4 stores four 8 x 8 matrices; lanes 8i..8i+7 give the row
  // addresses of matrix i, and each lane's register i holds its pair of
  // matrix i in the accumulator's own layout (row lane / 4, columns
  // 2 (lane mod 4) and + 1). Matrix i of the 16 x 16 block (mi, q) is rows
  // 8 (i mod 2) of atom tile 2 q + i / 2.
  Value warp = warpId(), lane = laneId();
  Value mat = arith::DivUIOp::create(b_, loc_, lane, cst(8));
  Value row = add(warpTileRow(shape, mma, warp),
                  add(arith::RemUIOp::create(b_, loc_, lane, cst(8)),
                      mul(arith::RemUIOp::create(b_, loc_, mat, cst(2)), cst(8))));
  Value col = add(warpTileCol(shape, mma, warp),
                  mul(arith::DivUIOp::create(b_, loc_, mat, cst(2)), cst(8)));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t q = colBegin / 16; q < std::min(nt / 2, (colBegin + cols) / 16); ++q) {
      SmallVector<Value> operands = {
          sharedAddress32(dst, {row, col}, {mi * 16, q * 16 - colBegin})};
      for (int64_t i = 0; i < 4; ++i)
        operands.push_back(packedPair(frag, ((mi * nt + 2 * q + i / 2) * 2 + i % 2) * 2, elt));
      // Inline PTX: nvvm.stmatrix takes a 64-bit shared pointer (a cvt.u64.u32
      // of this 32-bit address before every store).
      ptx("stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};", "r,r,r,r,r",
          operands);
    }
}

bool KernelLowering::lowerMmaFragmentStoreBulk(CopyOp copy) {
  // A persistent warp-specialized kernel's accumulator tile (one warp
  // column, 16-bit elements, whole 64-column panels in pairs) to a tensor
  // whose rows are 16-byte multiples: unless it is the block's last tile,
  // each panel goes through one of two swizzled shared buffers after the
  // planned bytes and leaves by a bulk tensor store that one thread issues,
  // so the consumers start the next tile while the stores drain (the edges
  // clip in TMA). The last tile stores directly (lowerMmaFragmentStore):
  // nothing follows that the stores could overlap, and the block need not
  // wait for them.
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstTensor = dyn_cast<TileTensorType>(copy.getDst().getType());
  if (!persistent_ || !consumerThreads_ || !caps_.hasStmatrix ||
      !caps_.hasBulkTensorCopy || !srcBuffer || !srcBuffer.isFragment() || !dstTensor ||
      dstTensor.getRank() != 2 || getElementBytes(dstTensor.getElementType()) != 2 ||
      copy->getBlock() != &kernel_.getBodyBlock())
    return false;
  // Only the main loop's accumulator as it leaves the loop: with epilogue
  // math on it in between (the fused GEMMs) the staged stores are 2-8%
  // slower than direct ones on the H200.
  Block &body = kernel_.getBodyBlock();
  for (Operation *user : copy.getSrc().getUsers()) {
    Operation *at = body.findAncestorOpInBlock(*user);
    if (at && at != copy && specialized_ && specialized_->isBeforeInBlock(at) &&
        at->isBeforeInBlock(copy))
      return false;
  }
  const BufferInfo &frag = buffers_[copy.getSrc()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  const TensorInfo &tensor = tensors_[copy.getDst()];
  constexpr int64_t kPanelColumns = 64, kRowBytes = 128;
  if (!mma || mma.getM() != 16 || mma.getN() != 8 || mma.getWarpsN() != 1 ||
      shape[0] > 256 || shape[0] % 16 != 0 || shape[1] % (2 * kPanelColumns) != 0 ||
      (tensor.divisors[1] * 2) % 16 != 0)
    return false;
  auto planned = func_->getAttrOfType<IntegerAttr>(kLoweredSharedBytesAttr);
  int64_t offset = llvm::alignTo(planned ? planned.getInt() : 0, 1024);
  int64_t bufferBytes = shape[0] * kRowBytes;
  if (offset + 2 * bufferBytes > caps_.sharedMemoryPerBlock)
    return false;
  MLIRContext *ctx = b_.getContext();
  Value mapArg = addTensorMap(copy.getDst(), shape[0], kPanelColumns, kRowBytes);
  if (!mapArg)
    return false;
  func_->setAttr(kLoweredSharedBytesAttr, b_.getI64IntegerAttr(offset + 2 * bufferBytes));

  Type elt = dstTensor.getElementType();
  auto addressSpace = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  BufferInfo staging{BufferType::get(ctx, {shape[0], kPanelColumns}, elt, MemoryScope::shared),
                     memref::ViewOp::create(
                         b_, loc_, MemRefType::get({2, shape[0], kPanelColumns}, elt, nullptr,
                                                   addressSpace),
                         sharedBase_, cst(offset), ValueRange{}),
                     {}};
  staging.stages = 2;
  staging.swizzle = SharedSwizzle{kRowBytes, 1};
  Value hasNext = lt(add(tileLoop_.getInductionVar(), tileLoop_.getStep()),
                     tileLoop_.getUpperBound());
  auto branch = scf::IfOp::create(b_, loc_, hasNext, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(branch.elseBlock()->getTerminator());
  bool direct = lowerMmaFragmentStore(copy);
  assert(direct && "the bulk store's conditions imply the direct store's");
  (void)direct;
  b_.setInsertionPoint(branch.thenBlock()->getTerminator());
  Value issuer = isThread(0);
  Value tensorMap = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), mapArg);
  Value row0 = toI32(map_.lookupOrDefault(copy.getDstOffsets()[0]));
  Value col0 = map_.lookupOrDefault(copy.getDstOffsets()[1]);
  for (int64_t p = 0; p < shape[1] / kPanelColumns; ++p) {
    staging.stage = cst(p % 2);
    // The buffer's previous store (two groups back) has read it.
    ifThen(issuer, [&] { bulkWaitGroup(b_, loc_, 1, /*read=*/true); });
    lastWasBarrier_ = false;
    barrier();
    storeMatrices(frag, staging, p * kPanelColumns, kPanelColumns);
    fenceProxyAsyncShared(b_, loc_);
    lastWasBarrier_ = false;
    barrier();
    ifThen(issuer, [&] {
      // Inline PTX: nvvm.cp.async.bulk.tensor.global.shared.cta takes a 64-bit
      // shared pointer (and prints .tile.bulk_group).
      ptx("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
          "l,r,r,r",
          {tensorMap, toI32(add(col0, cst(p * kPanelColumns))), row0,
           sharedAddress32(staging, {cst(0), cst(0)})});
      bulkCommitGroup(b_, loc_);
    });
  }
  bulkStoresPending_ = true;
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
  genericSharedWrites_ |= dstBuffer && dstBuffer.isShared();

  if (lowerMmaFragmentStoreBulk(copy) || lowerMmaFragmentStore(copy) ||
      lowerMmaFragmentToShared(copy))
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
    // Read the chunk's elements.
    SmallVector<Value> values;
    if (srcTensor) {
      values = loadGlobal(tensors_[copy.getSrc()], at(srcOffsets), vector, aligned);
    } else {
      const BufferInfo &src = buffers_[copy.getSrc()];
      if (src.type.isFragment()) {
        for (int64_t v = 0; v < vector; ++v)
          values.push_back(memref::LoadOp::create(b_, loc_, src.memref,
                                                  ValueRange{cst(chunk.firstSlot + v)}));
      } else {
        values = loadShared(src, chunk.coords, vector);
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
    if (!dst.type.isFragment()) {
      storeShared(dst, chunk.coords, values);
      return;
    }
    for (int64_t v = 0; v < vector; ++v)
      memref::StoreOp::create(b_, loc_, values[v], dst.memref,
                              ValueRange{cst(chunk.firstSlot + v)});
  });
  // No barrier after: every lowering that touches shared memory starts with
  // one, which also orders this copy's shared accesses before the next
  // writer's (a trailing barrier here was redundant, and at a kernel's end
  // it cost a synchronization before exit).
  lastWasBarrier_ = false;
  return success();
}

LogicalResult KernelLowering::lowerClear(Value buffer) {
  Type type = cast<BufferType>(buffer.getType()).getElementType();
  return lowerFill(buffer, arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(type)));
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
  genericSharedWrites_ = true;
  auto dist = DistributionAttr::get(b_.getContext(), kernel_.getThreads(), 1);
  forEachChunk(info.type.getShape(), dist, [&](const Chunk &chunk) {
    memref::StoreOp::create(b_, loc_, value, info.memref, sharedIndices(info, chunk.coords));
  });
  lastWasBarrier_ = false;
  barrier();
  return success();
}

/// Approximate forms of f32 math under CompileOptions::fastMath, or null.
Value KernelLowering::lowerFastMath(Operation &op, IRMapping &map) {
  if (!fastMath_ || op.getNumResults() != 1 || !op.getResult(0).getType().isF32())
    return {};
  auto f32 = [&](double value) {
    return arith::ConstantOp::create(b_, loc_, b_.getF32FloatAttr(float(value)));
  };
  // Inline PTX (unary and divide): MLIR has no NVVM op for the approximate
  // ex2, tanh and div (LLVM intrinsics only).
  auto unary = [&](StringRef text, Value x) {
    return emitPtx(b_, loc_, text, "=f,f", {x}, {b_.getF32Type()}, /*sideEffects=*/false).front();
  };
  auto divide = [&](Value x, Value y) {
    // div.approx.ftz.f32 (PTX ISA §9.7.3.8): x * rcp(y), 2 ulp for |y| in
    // [2^-126, 2^126] (0 beyond, like CUDA's __fdividef), two instructions
    // instead of IEEE division's Newton iterations.
    return emitPtx(b_, loc_, "div.approx.ftz.f32 $0, $1, $2;", "=f,f,f", {x, y}, {b_.getF32Type()},
                   /*sideEffects=*/false)
        .front();
  };
  if (auto tanh = dyn_cast<math::TanhOp>(op); tanh && caps_.hasTanhApprox)
    return unary("tanh.approx.f32 $0, $1;", map.lookupOrDefault(tanh.getOperand()));
  if (auto tanh = dyn_cast<math::TanhOp>(op)) {
    // No tanh.approx (before sm_75): 1 - 2 / (1 + 2^(2 x log2 e)) with
    // ex2.approx and the fast division (1e-7 absolute error; +-1 where the
    // exponential saturates), and x (1 - x^2 / 3 + 2 x^4 / 15) for |x| <
    // 1/16, where the subtraction would cancel: a few f32 ulp relative.
    // Branchless, instead of libdevice's tanhf inlined per element.
    Value x = map.lookupOrDefault(tanh.getOperand());
    Value e = unary("ex2.approx.ftz.f32 $0, $1;",
                    arith::MulFOp::create(b_, loc_, x, f32(2.0 * 1.4426950408889634)));
    Value large = arith::SubFOp::create(
        b_, loc_, f32(1.0), divide(f32(2.0), arith::AddFOp::create(b_, loc_, e, f32(1.0))));
    // Where every use adds 1 or -1 (GELU's 1 + tanh(u)), the sum's own
    // rounding near x = 0 exceeds the exponential form's 1e-7: no series,
    // and no second form live per element (the fused GEMM's epilogue then
    // spilled on sm_60, which cost its main loop 40%).
    auto addsOne = [](Operation *user) {
      if (!isa<arith::AddFOp, arith::SubFOp>(user))
        return false;
      return llvm::any_of(user->getOperands(), [](Value operand) {
        FloatAttr c;
        return matchPattern(operand, m_Constant(&c)) &&
               std::abs(c.getValueAsDouble()) == 1.0;
      });
    };
    if (llvm::all_of(op.getResult(0).getUsers(), addsOne))
      return large;
    Value x2 = arith::MulFOp::create(b_, loc_, x, x);
    Value series = arith::MulFOp::create(
        b_, loc_, x,
        LLVM::FMAOp::create(b_, loc_, x2,
                            LLVM::FMAOp::create(b_, loc_, x2, f32(2.0 / 15.0), f32(-1.0 / 3.0)),
                            f32(1.0)));
    Value small = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLT,
                                        math::AbsFOp::create(b_, loc_, x), f32(0.0625));
    return arith::SelectOp::create(b_, loc_, small, series, large);
  }
  if (auto div = dyn_cast<arith::DivFOp>(op))
    return divide(map.lookupOrDefault(div.getLhs()), map.lookupOrDefault(div.getRhs()));
  if (auto exp = dyn_cast<math::ExpOp>(op)) {
    // exp(x) = 2^(x log2 e) with ex2.approx (PTX ISA §9.7.3.21); exp(-y)
    // scales y by -log2 e (no negation left for ptxas to emit).
    double log2e = 1.4426950408889634;
    Value x = exp.getOperand();
    if (auto neg = x.getDefiningOp<arith::NegFOp>())
      x = neg.getOperand(), log2e = -log2e;
    Value scaled = arith::MulFOp::create(b_, loc_, map.lookupOrDefault(x), f32(log2e));
    return unary("ex2.approx.ftz.f32 $0, $1;", scaled);
  }
  if (auto erf = dyn_cast<math::ErfOp>(op)) {
    // erf(x) ~ x P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf(4) is 1 in
    // f32): a branchless minimax rational form, 3.8e-7 absolute error at
    // most before the division (libdevice's erff branches on |x| and calls
    // exp). Q lies in [-1, -0.014], inside the fast division's range.
    static constexpr double kP[] = {-2.72614225801306e-10, 2.77068142495902e-08,
                                    -2.10102402082508e-06, -5.69250639462346e-05,
                                    -7.34990630326855e-04, -2.95459980854025e-03,
                                    -1.60960333262415e-02};
    static constexpr double kQ[] = {-1.45660718464996e-05, -2.13374055278905e-04,
                                    -1.68282697438203e-03, -7.37332916720468e-03,
                                    -1.42647390514189e-02};
    Value x = map.lookupOrDefault(erf.getOperand());
    x = arith::MaxNumFOp::create(b_, loc_, arith::MinNumFOp::create(b_, loc_, x, f32(4.0)),
                                 f32(-4.0));
    Value x2 = arith::MulFOp::create(b_, loc_, x, x);
    auto horner = [&](ArrayRef<double> coefficients) {
      Value sum = f32(coefficients.front());
      for (double c : coefficients.drop_front())
        sum = LLVM::FMAOp::create(b_, loc_, sum, x2, f32(c));
      return sum;
    };
    return divide(arith::MulFOp::create(b_, loc_, horner(kP), x), horner(kQ));
  }
  return {};
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
  genericSharedWrites_ |= touchesShared;
  LogicalResult result = success();
  forEachOwned(loop.getExtents(), dist, mma, [&](const Chunk &chunk) {
    for (int64_t v = 0; v < chunk.vector && succeeded(result); ++v) {
      SmallVector<Value> coords(chunk.coords);
      coords.back() = add(coords.back(), cst(v));
      // The body's values are mapped for this element, then erased (a copy
      // of the kernel's whole mapping per element cost compile time).
      IRMapping &map = map_;
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
        } else if (Value fast = lowerFastMath(op, map)) {
          map.map(op.getResult(0), fast);
        } else {
          b_.clone(op, map);
        }
      }
      for (Value iv : loop.getInductionVars())
        map.erase(iv);
      for (Operation &op : loop.getBodyBlock().without_terminator())
        for (Value value : op.getResults())
          map.erase(value);
    }
  });
  // No barrier after (see lowerCopy): the next lowering that touches shared
  // memory starts with one.
  lastWasBarrier_ = false;
  return result;
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
  // shfl.sync moves 32 bits: a 16-bit value travels as its (exact) f32
  // extension; a 64-bit one as two halves (tessera-convert-to-nvvm).
  auto shuffleXor = [&](Value x, int32_t offset) -> Value {
    Type type = x.getType();
    bool narrow = type.getIntOrFloatBitWidth() < 32;
    Value sent = narrow ? arith::ExtFOp::create(b_, loc_, b_.getF32Type(), x).getResult() : x;
    Value got =
        gpu::ShuffleOp::create(b_, loc_, sent, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    return narrow ? arith::TruncFOp::create(b_, loc_, type, got).getResult() : got;
  };
  int64_t warps = kernel_.getThreads() / 32;
  SmallVector<Value> results;
  for (int64_t r = 0; r < rows; ++r) {
    Value x = memref::LoadOp::create(b_, loc_, partials, ValueRange{cst(r)});
    for (int32_t offset = 16; offset >= 1; offset /= 2)
      x = combine(x, shuffleXor(x, offset));
    results.push_back(x);
  }

  // 3. Across warps: lane 0 of each warp publishes, every thread combines.
  if (warps > 1) {
    if (!reduce.getScratch())
      return reduce.emitOpError() << "needs scratch shared memory; run tile-plan-shared-memory";
    const BufferInfo &scratch = buffers_[reduce.getScratch()];
    Type scratchType = scratch.type.getElementType();  // getReduceScratchElementType
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
        memref::StoreOp::create(b_, loc_, convert(results[r], scratchType), scratch.memref,
                                ValueRange{warp, cst(r)});
    }
    lastWasBarrier_ = false;
    barrier();
    for (int64_t r = 0; r < rows; ++r) {
      Value x = convert(identity(), scratchType);
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

} // namespace tessera::lowering

namespace {

using tessera::lowering::KernelLowering;

struct LowerToGPU : tessera::impl::TileLowerToGPUBase<LowerToGPU> {
  /// The declared dialects and NVVM (the typed instructions; its header is
  /// NvvmOps.cpp's alone, so it is not named in Passes.td).
  void getDependentDialects(DialectRegistry &registry) const override {
    TileLowerToGPUBase::getDependentDialects(registry);
    tessera::lowering::insertNvvmDialect(registry);
  }
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
