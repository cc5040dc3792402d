//===- MmaOverlap.cpp - The consumers' rotated two-gemm loop --------------===//
//
// The consumers of a TMA warp-specialized loop under the rotated two-gemm
// schedule (MmaOverlap.h). Trip k of the loop, 0 < k < n:
//
//   wait for stage k's copies          [take this warpgroup's turn]
//   issue part, iteration k            (S = Q K^T issued, no wait)
//   deferred part, iteration k - 1, on stage k - 1
//                                      (O's rescale, O += P V issued)
//                                      [hand the turn on]
//   wait until one MMA group is left   (S is complete)
//   rest, iteration k                  (the softmax; before the first write
//                                      of P: wait for O += P V, release
//                                      stage k - 1)
//
// Trip 0 runs before the loop without a deferred part (its first gemm
// waited for at once), and the last iteration's deferred part after it. The
// atoms issue and commit without waiting (kMmaWaitByStrategy); each wait is
// followed by a register fence of the accumulators it completed, so that
// LLVM reads them after the wait. Taking turns, warpgroup w waits on named
// barrier kFirstTurnBarrier + w before issuing and arrives on the next
// warpgroup's after: the MMAs of the warpgroups reach the tensor cores in
// turn, and each one's softmax runs under the next ones' MMAs.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/MmaOverlap.h"

#include "contract/NvvmOps.h"
#include "backends/sm90/WarpSpecializedLoop.h"

#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/ScopeExit.h"

namespace tessera::sm90::detail {

LogicalResult WarpSpecializedLoop::lowerPart(ArrayRef<Operation *> ops, Value k, Value stage,
                                             Operation *waitBefore,
                                             llvm::function_ref<void()> wait) {
  // Iteration k's scalars (the body's arithmetic) first, then its ops, on
  // stage `stage` of the staged buffers.
  auto staged = kl.useIteration(loop, ahead, k, stage);
  for (Operation &op : loop.getBodyBlock().without_terminator())
    if (!ahead.contains(&op) && (isa<DimOp>(op) || lowering::isPlainArithmetic(&op)) &&
        failed(kl.lowerOp(op)))
      return failure();
  for (Operation *op : ops) {
    if (op == waitBefore)
      wait();
    if (failed(kl.lowerOp(*op)))
      return failure();
  }
  return success();
}

Value WarpSpecializedLoop::previousStage(Value position) {
  return arith::RemUIOp::create(b, loc, kl.add(position, kl.cst(stages - 1)), kl.cst(stages));
}

void WarpSpecializedLoop::fenceAccumulator(Value fragment) {
  for (auto [inFlight, regs] : kl.asyncAccumulators())
    if (inFlight == fragment)
      kl.fenceRegisters(inFlight, regs);
}

void WarpSpecializedLoop::takeTurn() {
  if (turns)
    namedBarrierSync(b, loc, ownTurn, 256);
}

void WarpSpecializedLoop::passTurn() {
  // Inline PTX: nvvm.barrier.arrive has no intrinsic; only the
  // convert-nvvm-to-llvm pass (not in this pipeline) lowers it, to this PTX.
  if (turns)
    kl.ptx("bar.arrive $0, 256;", "r", {nextTurn});
}

LogicalResult WarpSpecializedLoop::emitOverlappedConsumers(Value base) {
  std::string why;
  MmaOverlapSplit split = splitForMmaOverlap(loop, ahead, why);
  if (!split.last)
    return loop.emitOpError() << "schedule asks for mma_overlap, which this loop cannot take: "
                              << why;
  // ptxas keeps MMAs in flight only over straight-line code: no branch
  // between an MMA and its wait. The first trip (nothing deferred) is peeled
  // off the loop, and everything runs under one test of the count.
  Value one = kl.cst(1);
  auto nonEmpty = scf::IfOp::create(b, loc, kl.lt(zero, count), /*withElseRegion=*/false);
  b.setInsertionPoint(nonEmpty.thenBlock()->getTerminator());
  if (turns) {
    // The last warpgroup gives the first its first turn.
    Value warpgroup = arith::DivUIOp::create(b, loc, kl.threadId(), kl.cst(128));
    Value next = arith::RemUIOp::create(b, loc, kl.add(warpgroup, one), kl.cst(turns));
    ownTurn = kl.toI32(kl.add(warpgroup, kl.cst(kFirstTurnBarrier)));
    nextTurn = kl.toI32(kl.add(next, kl.cst(kFirstTurnBarrier)));
    lastWarpgroup = kl.eq(warpgroup, kl.cst(turns - 1));
    kl.ifThen(lastWarpgroup, [&] { passTurn(); });
  }
  kl.setAsyncMmaPipeline(true, kMmaWaitByStrategy);
  llvm::scope_exit restoreWaits([&] { kl.setAsyncMmaPipeline(false, 0); });
  // Iteration k's first part: its stage's copies have landed, its first
  // gemm issued (and, k > 0, iteration k - 1's deferred part after it).
  auto issue = [&](Value k, StageRing::Position pos, bool deferred) -> LogicalResult {
    ring->consumerWait(pos);
    kl.noteBarrier(); // the full barrier orders this stage's reads
    takeTurn();
    if (failed(lowerPart(split.issue, k, pos.stage)))
      return failure();
    if (deferred && failed(lowerPart(split.deferred, arith::SubIOp::create(b, loc, k, one),
                                     previousStage(pos.position))))
      return failure();
    passTurn();
    return success();
  };

  // Trip 0.
  StageRing::Position first = ring->at(base, zero);
  if (failed(issue(zero, first, false)))
    return failure();
  wgmmaWaitGroup(b, loc, 0);
  fenceAccumulator(split.first.getC());
  if (failed(lowerPart(split.rest, zero, first.stage)))
    return failure();

  // Trips 1 .. n - 1: the deferred gemm is complete before the rest writes
  // its A; then its stage goes back to the producer.
  auto forOp = scf::ForOp::create(b, loc, one, count, one);
  consumerLoop = forOp;
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    StageRing::Position pos = ring->at(base, k);
    if (failed(issue(k, pos, true)))
      return failure();
    wgmmaWaitGroup(b, loc, 1);
    fenceAccumulator(split.first.getC());
    auto finishDeferred = [&] {
      wgmmaWaitGroup(b, loc, 0);
      fenceAccumulator(split.last.getC());
      release(previousStage(pos.position));
    };
    if (failed(lowerPart(split.rest, k, pos.stage, split.firstWriterOfA, finishDeferred)))
      return failure();
    if (!split.firstWriterOfA)
      finishDeferred();
  }

  // The last iteration's deferred part; the last warpgroup's turn goes to
  // no one.
  b.setInsertionPointAfter(forOp);
  Value lastK = arith::SubIOp::create(b, loc, count, one);
  StageRing::Position lastPos = ring->at(base, lastK);
  takeTurn();
  if (failed(lowerPart(split.deferred, lastK, lastPos.stage)))
    return failure();
  wgmmaWaitGroup(b, loc, 0);
  fenceAccumulator(split.last.getC());
  release(lastPos.stage);
  if (turns)
    kl.ifThen(
        arith::XOrIOp::create(b, loc, lastWarpgroup, arith::ConstantIntOp::create(b, loc, 1, 1)),
        [&] { passTurn(); });
  consumersEnd = nonEmpty;
  return finishConsumers(count, base);
}

} // namespace tessera::sm90::detail
