//===- RegisterDoubleBuffer.cpp - Register double buffering ---------------===//
//
// The pipelining strategy of targets without cp.async (CUTLASS's sm70
// mainloop): iteration k loads iteration k + 1's tiles from global memory
// into registers, computes on stage k mod 2 meanwhile, stores the registers
// to the other stage and synchronizes once. The global loads' latency hides
// behind the MMAs. The stage iteration k stores to, (k + 1) mod 2, was last
// read in iteration k - 1, and every thread passed the barrier that ended
// it.
//
//===----------------------------------------------------------------------===//

#include "backends/common/Pipelines.h"

#include "contract/PipelineLoweringContext.h"

namespace tessera::common {

using namespace mlir;
using namespace tessera::tile;
using lowering::PipelineLoweringContext;

namespace {

class RegisterDoubleBufferPipeline final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return "register-double-buffer"; }
  /// The next tiles in registers while the body reads one stage, then
  /// stored to the other: two stages.
  int64_t stagesFor(int64_t, int64_t) const override { return 2; }
  std::string tryPlan(PipelineLoweringContext &, PipelinedOp,
                      PipelineLoopPlan &plan) const override {
    if (plan.ahead.empty())
      return "the loop copies nothing into staged shared buffers";
    if (plan.stages < 2)
      return "the loop's staged buffers have one stage (double buffering needs two)";
    return "";
  }
  LogicalResult lower(PipelineLoweringContext &kl, PipelinedOp loop, Value count,
                      const PipelineLoopPlan &plan) const override;
};

LogicalResult RegisterDoubleBufferPipeline::lower(PipelineLoweringContext &kl, PipelinedOp loop,
                                                  Value count, const PipelineLoopPlan &plan) const {
  OpBuilder &b = kl.builder();
  Location loc = kl.loc();
  const llvm::SmallPtrSetImpl<Operation *> &ahead = plan.ahead;
  auto load = [&](Value iteration) {
    return loadIterationToRegisters(kl, loop, ahead, iteration);
  };
  auto store = [&](ArrayRef<Value> tiles, Value stage) {
    storeRegistersToStage(kl, loop, ahead, tiles, stage);
  };
  kl.barrier();
  store(load(kl.cst(0)), kl.cst(0));
  kl.barrier();
  auto forOp = scf::ForOp::create(b, loc, kl.cst(0), count, kl.cst(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forOp.getBody()->getTerminator());
  Value k = forOp.getInductionVar();
  // The last iteration reloads its own tiles into the stage nobody reads
  // again (cheaper than a branch around the loads).
  Value next = arith::MinUIOp::create(b, loc, kl.add(k, kl.cst(1)),
                                      arith::SubIOp::create(b, loc, count, kl.cst(1)));
  SmallVector<Value> tiles = load(next);
  kl.noteBarrier(); // the barrier ending the previous iteration
  if (failed(kl.lowerStagedBody(loop, ahead, k,
                                arith::RemUIOp::create(b, loc, k, kl.cst(plan.stages)),
                                /*inFlight=*/-1)))
    return failure();
  store(tiles, arith::RemUIOp::create(b, loc, kl.add(k, kl.cst(1)), kl.cst(plan.stages)));
  kl.barrier();
  kl.noteSharedAccess();
  return success();
}

} // namespace

SmallVector<Value> loadIterationToRegisters(PipelineLoweringContext &kl, PipelinedOp loop,
                                            const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                            Value iteration) {
  IRMapping saved = kl.valueMap();
  SmallVector<Value> tiles;
  kl.mapIteration(loop, ahead, iteration,
                  [&](CopyOp copy) { tiles.push_back(kl.loadTileToRegisters(copy)); });
  kl.valueMap() = saved;
  return tiles;
}

void storeRegistersToStage(PipelineLoweringContext &kl, PipelinedOp loop,
                           const llvm::SmallPtrSetImpl<Operation *> &ahead, ArrayRef<Value> tiles,
                           Value stage) {
  unsigned i = 0;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (!ahead.contains(&op))
      continue;
    auto staged = kl.useStage({cast<CopyOp>(op).getDst()}, stage);
    kl.storeRegistersToTile(cast<CopyOp>(op), tiles[i++]);
  }
  kl.noteSharedAccess();
}

const PipelineStrategy &registerDoubleBufferPipeline() {
  static const RegisterDoubleBufferPipeline strategy;
  return strategy;
}

} // namespace tessera::common
