//===- AsyncCopyPipeline.h - sm80's cp.async pipelining ---------*- C++ -*-===//
//
// The cp.async multi-stage pipelining strategy (AsyncCopyPipeline.cpp): S
// stages of shared memory filled D iterations ahead with cp.async, one
// barrier per iteration; with mma.sync bodies the next k-step's fragments
// load ahead too. sm90 lists it after its warp-specialized strategy.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM80_ASYNCCOPYPIPELINE_H
#define TESSERA_BACKENDS_SM80_ASYNCCOPYPIPELINE_H

#include "contract/PipelineLoweringContext.h"
#include "contract/PipelineStrategy.h"

namespace tessera::sm80 {

class AsyncCopyPipeline final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return "cp-async-multistage"; }
  int64_t stagesFor(int64_t requested, int64_t fitting) const override {
    return asyncCopyStages(requested, fitting);
  }
  std::string tryPlan(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                      PipelineLoopPlan &plan) const override;
  mlir::LogicalResult lower(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                            mlir::Value count, const PipelineLoopPlan &plan) const override;
};

/// The one instance the sm80 and sm90 backends list.
const PipelineStrategy &asyncCopyPipeline();

} // namespace tessera::sm80

#endif // TESSERA_BACKENDS_SM80_ASYNCCOPYPIPELINE_H
