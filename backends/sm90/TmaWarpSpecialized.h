//===- TmaWarpSpecialized.h - sm90's warp-specialized pipelining -*- C++ -*-===//
//
// The TMA warp-specialized pipelining strategy (TmaWarpSpecialized.cpp):
// a producer warpgroup fills a ring of stages with bulk tensor copies; the
// kernel's threads consume them with wgmma.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_TMAWARPSPECIALIZED_H
#define TESSERA_BACKENDS_SM90_TMAWARPSPECIALIZED_H

#include "backends/PipelineLoweringContext.h"
#include "backends/PipelineStrategy.h"

namespace tessera::sm90 {

class TmaWarpSpecializedPipeline final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return "tma-warp-specialized"; }
  bool specializesWarps() const override { return true; }
  std::string tryPlan(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                      PipelineLoopPlan &plan) const override;
  mlir::LogicalResult lower(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                            mlir::Value count, const PipelineLoopPlan &plan) const override;
  bool lowerEpilogueCopy(lowering::PipelineLoweringContext &kernel,
                         tile::CopyOp copy) const override;
};

/// A persistent warp-specialized kernel's accumulator tile to a tensor
/// through two shared panel buffers and bulk tensor stores that drain
/// while the next tile runs (stmatrix and TMA). False (nothing emitted) for
/// any other copy, or without room for the buffers. BulkStoreEpilogue.cpp.
bool lowerBulkStoreEpilogue(lowering::PipelineLoweringContext &kernel, tile::CopyOp copy);

/// The one instance the sm90 backend lists.
const PipelineStrategy &tmaWarpSpecializedPipeline();

} // namespace tessera::sm90

#endif // TESSERA_BACKENDS_SM90_TMAWARPSPECIALIZED_H
