//===- InOrderPipeline.cpp - The in-order pipelining strategy -------------===//
//
// A tile.pipelined loop run as written: each iteration's copies, then its
// compute, and a barrier before the next iteration's copies overwrite the
// shared buffers this one read. Always correct; the strategy every backend
// lists last (a loop with nothing staged, or staged buffers that did not
// fit).
//
//===----------------------------------------------------------------------===//

#include "backends/common/Pipelines.h"

#include "contract/PipelineLoweringContext.h"

namespace tessera::common {

using namespace mlir;
using namespace tessera::tile;
using lowering::PipelineLoweringContext;

namespace {

class InOrderPipeline final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return "in-order"; }
  std::string tryPlan(PipelineLoweringContext &, PipelinedOp, PipelineLoopPlan &) const override {
    return "";
  }
  LogicalResult lower(PipelineLoweringContext &kl, PipelinedOp loop, Value count,
                      const PipelineLoopPlan &) const override {
    OpBuilder &b = kl.builder();
    auto forOp = scf::ForOp::create(b, kl.loc(), kl.cst(0), count, kl.cst(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    kl.valueMap().map(loop.getInductionVar(), kl.inductionValue(forOp.getInductionVar()));
    kl.noteSharedAccess();
    if (failed(kl.lowerBlock(loop.getBodyBlock())))
      return failure();
    // The next iteration's copies overwrite shared buffers this one read.
    kl.barrier();
    kl.noteSharedAccess();
    return success();
  }
};

} // namespace

const PipelineStrategy &inOrderPipeline() {
  static const InOrderPipeline strategy;
  return strategy;
}

} // namespace tessera::common
