//===- LowerPipelined.cpp - tile.pipelined loops to their strategies -----===//
//
// tile.pipelined loops: what planning finds out about a loop from the tile
// IR (planPipelined), the schedule tile-plan-pipelines chose for it
// (readSchedule), and the hand-off to the strategy it names, which the
// backend provides (contract/PipelineStrategy.h). What strategies share:
// mapping an iteration, lowering the body on a stage, moving a tile
// through registers. Stream-K's exchange of partials is in LowerStreamK.cpp.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

#include "contract/ElementConversion.h"
#include "contract/NvvmOps.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

namespace tessera::lowering {

LogicalResult KernelLowering::lowerPipelined(PipelinedOp loop) {
  if (streamK_)
    zeroLaterPieces(loop);
  if (failed(lowerPipelinedStrategy(loop)))
    return failure();
  if (streamK_)
    exchangePartials(loop);
  return success();
}

KernelLowering::PipelinePlan KernelLowering::planPipelined(PipelinedOp loop) {
  PipelinePlan plan;
  // Copies into staged shared buffers run ahead of the compute, on as many
  // stages as planning gave the buffers (what the strategy keeps:
  // PipelineStrategy::stagesFor).
  for (Operation &op : loop.getBodyBlock())
    if (auto copy = dyn_cast<CopyOp>(op))
      if (isa<TileTensorType>(copy.getSrc().getType()) && isa<BufferType>(copy.getDst().getType()))
        if (auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>())
          if (std::optional<int64_t> stages = alloc.getStages()) {
            plan.ahead.insert(copy);
            plan.stages = std::max(plan.stages, *stages);
          }
  if (plan.ahead.empty())
    return plan;

  // A gemm whose atom reads shared memory through the async proxy (wgmma)
  // needs the proxies fenced after the copies land, and may keep one MMA
  // group in flight while the next iteration starts (how many the strategy
  // decides).
  //
  // A group stays in flight only when the atom's family leaves its MMAs in
  // flight at all (MmaAtomLowering::keepsMmaInFlight), nothing else in the body touches the
  // gemms' accumulators (an epilogue or a cast in the loop reads them right
  // away) and no gemm reads A from registers (the next iteration would
  // rewrite them under the MMA still reading them).
  // Nor when the body writes shared memory other than through the copies
  // ahead (a staged fragment operand, a tile.parallel): the write would land
  // while the previous iteration's MMAs may still read the buffer.
  //
  // Whether the body's first gemm defers the loop's copies (its family's
  // answer, MmaAtomLowering::defersLoopCopies) is noted on the way.
  // A family that holds its accumulators across the loop
  // (MmaAtomLowering::holdsAccumulatorAcrossLoop) may do so under the same
  // conditions on the body.
  bool bodyAllows = true, familiesKeep = true, familiesHold = true, firstGemm = true;
  for (Operation &op : loop.getBodyBlock()) {
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      std::optional<MmaAtom> atom = findMmaAtom(gemm, backend_, cc_, kernel_.getThreads());
      plan.asyncMma |= atom && atom->readsSharedAsync;
      plan.mmaOutlivesGemm |= atom && atom->lowering && atom->lowering->keepsMmaInFlight();
      if (firstGemm)
        plan.firstGemmDefersCopies = atom && atom->lowering && atom->lowering->defersLoopCopies() &&
                                     cast<BufferType>(gemm.getA().getType()).isShared();
      firstGemm = false;
      bodyAllows &= !cast<BufferType>(gemm.getA().getType()).isFragment();
      familiesKeep &= !atom || !atom->lowering || atom->lowering->keepsMmaInFlight();
      familiesHold &= atom && atom->lowering && atom->lowering->holdsAccumulatorAcrossLoop();
      for (Operation *user : gemm.getC().getUsers())
        bodyAllows &= isa<GemmOp>(user) || !loop->isProperAncestor(user);
    } else if (!plan.ahead.contains(&op)) {
      op.walk([&](Operation *inner) { bodyAllows &= !writesSharedBuffer(inner); });
    }
  }
  plan.mayKeepMmaInFlight = plan.asyncMma && bodyAllows && familiesKeep;
  plan.accumulatorsHoldable = plan.asyncMma && bodyAllows && familiesHold;
  return plan;
}

llvm::SetVector<Value> KernelLowering::valuesFromBefore(PipelinedOp loop) {
  llvm::SetVector<Value> outside;
  loop.getBodyBlock().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!loop->isAncestor(v.getParentRegion()->getParentOp()) &&
          !isa<TileTensorType, BufferType>(v.getType()))
        outside.insert(v);
  });
  return outside;
}

bool KernelLowering::isRecomputable(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return cast<BlockArgument>(value).getOwner() == &kernel_.getBodyBlock();
  // A kernel argument's dimension is a launch value; a tile.view's is read
  // from data where the view is made.
  if (auto dim = dyn_cast<DimOp>(op))
    return isa<BlockArgument>(dim.getTensor());
  if (!isPlainArithmetic(op) && !isa<ReadOp>(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) { return isRecomputable(operand); });
}

LogicalResult KernelLowering::lowerPipelinedStrategy(PipelinedOp loop) {
  // A stream-K piece runs iterations [workBegin_, workEnd_) of its tile.
  Value count = streamK_ ? arith::SubIOp::create(b_, loc_, workEnd_, workBegin_).getResult()
                         : map_.lookupOrDefault(loop.getCount());
  // readLoopSchedules read every loop's schedule before the body.
  auto scheduled = schedules_.find(loop);
  if (scheduled == schedules_.end())
    return loop.emitOpError() << "has no schedule read for it (tile-lower-to-gpu reads them "
                                 "before lowering the kernel's body)";
  return scheduled->second.strategy->lower(*this, loop, count, scheduled->second.plan);
}

void KernelLowering::mapIteration(PipelinedOp loop,
                                  const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                  Value iteration, llvm::function_ref<void(CopyOp)> onCopy) {
  map_.map(loop.getInductionVar(), inductionValue(iteration));
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (ahead.contains(&op))
      onCopy(cast<CopyOp>(op));
    else if (isa<DimOp, ReadOp, VarGetOp>(op))
      (void)lowerOp(op); // Maps the dimension's value, or reads the index or variable.
    else if (isPlainArithmetic(&op))
      b_.clone(op, map_);
  }
}

LogicalResult KernelLowering::lowerStagedBody(PipelinedOp loop,
                                              const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                              Value k, Value stage, int64_t inFlight) {
  auto staged = useIteration(loop, ahead, k, stage);
  inAsyncMmaPipeline_ = inFlight >= 0;
  asyncMmaInFlight_ = std::max<int64_t>(inFlight, 0);
  for (Operation &op : loop.getBodyBlock().without_terminator())
    if (!ahead.contains(&op) && failed(lowerOp(op)))
      return failure();
  inAsyncMmaPipeline_ = false;
  asyncMmaInFlight_ = 0;
  return success();
}

Value KernelLowering::loadTileToRegisters(CopyOp copy) {
  BufferType tile = copy.getTileType();
  TensorInfo tensor = copyTensor(copy);
  Type eltType = buffers_[copy.getDst()].type.getElementType();
  DistributionAttr dist = copyDistribution(tile, tensor.type.getElementType());
  bool aligned = isVectorAligned(tensor, copy.getTileOffsets(), dist.getVector());
  SmallVector<Value> offsets = copyOffsets(copy);
  // The values go through a per-thread array (registers after SROA): a last
  // chunk that overhangs the tile is loaded, and later stored, under a guard
  // its SSA values could not leave.
  int64_t slots = dist.slotsPerThread(tile.getNumElements());
  Value registers;
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(entry_);
    registers =
        memref::AllocaOp::create(b_, loc_, MemRefType::get({slots}, getStorageType(eltType)));
  }
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    int64_t slot = chunk.firstSlot;
    for (Value v : loadGlobal(tensor, tensorCoords(offsets, chunk), dist.getVector(), aligned))
      memref::StoreOp::create(b_, loc_,
                              convertElement(b_, loc_, v, tensor.type.getElementType(), eltType,
                                             saturatesInto(eltType)),
                              registers, ValueRange{cst(slot++)});
  });
  return registers;
}

void KernelLowering::storeRegistersToTile(CopyOp copy, Value registers) {
  BufferType tile = copy.getTileType();
  const BufferInfo &dst = buffers_[copy.getDst()];
  DistributionAttr dist = copyDistribution(tile, tensors_[copy.getSrc()].type.getElementType());
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    SmallVector<Value> values;
    for (int64_t v = 0; v < dist.getVector(); ++v)
      values.push_back(
          memref::LoadOp::create(b_, loc_, registers, ValueRange{cst(chunk.firstSlot + v)}));
    storeShared(dst, chunk.coords, values);
  });
}

} // namespace tessera::lowering
