//===- TmaWarpSpecialized.h - sm90's warp-specialized pipelining -*- C++ -*-===//
//
// The TMA warp-specialized pipelining strategy (TmaWarpSpecialized.cpp):
// a producer warpgroup fills a ring of stages with bulk tensor copies; the
// kernel's threads consume them with wgmma.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_TMAWARPSPECIALIZED_H
#define TESSERA_BACKENDS_SM90_TMAWARPSPECIALIZED_H

#include "contract/PipelineLoweringContext.h"
#include "contract/PipelineStrategy.h"

namespace tessera::sm90 {

/// What the warp-specialized strategy decides for a loop beyond the shared
/// plan: its own entries of the loop's schedule attribute.
struct WarpSpecializedParams final : StrategyParams {
  /// `ping_pong`: two tiles' consumers share the ring of stages (the
  /// kernel's ping-pong schedule).
  bool pingPong = false;
  /// `multicast = N`: blocks per thread block cluster that multicast the
  /// loop's largest copy; 0: none.
  int64_t multicastBlocks = 0;
  /// `mma_overlap`: the rotated two-gemm schedule (MmaOverlap.h): iteration
  /// k issues its first gemm beside iteration k - 1's last, and runs the
  /// work between its gemms while that one is in flight.
  bool mmaOverlap = false;
  /// `warpgroup_turns = W`: consumer warpgroups taking turns to issue their
  /// MMAs (named barriers), so that one's work between gemms runs under the
  /// others' MMAs; 0: none.
  int64_t warpgroupTurns = 0;
  /// `hold_accumulators`: the gemms' accumulators stay in their MMAs' own
  /// storage (tensor memory) through the loop; each iteration's MMAs
  /// release its stage when they complete (the mbarrier they signal), and
  /// no consumer waits for them inside the loop.
  bool holdAccumulators = false;
};

/// The warp-specialized parameters of `plan` (defaults where it has none).
const WarpSpecializedParams &warpSpecializedParams(const PipelineLoopPlan &plan);

class TmaWarpSpecializedPipeline final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return "tma-warp-specialized"; }
  bool specializesWarps() const override { return true; }
  int64_t stagesFor(int64_t requested, int64_t fitting) const override {
    return asyncCopyStages(requested, fitting);
  }
  std::string tryPlan(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                      PipelineLoopPlan &plan) const override;
  mlir::LogicalResult lower(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                            mlir::Value count, const PipelineLoopPlan &plan) const override;
  bool lowerEpilogueCopy(lowering::PipelineLoweringContext &kernel,
                         tile::CopyOp copy) const override;
  void printSchedule(const PipelineLoopPlan &plan, mlir::Builder &b,
                     llvm::SmallVectorImpl<mlir::NamedAttribute> &entries) const override;
  std::string parseSchedule(mlir::DictionaryAttr entries, PipelineLoopPlan &plan) const override;
  std::string checkSchedule(const PipelineLoopPlan &possible,
                            const PipelineLoopPlan &asked) const override;
  bool runsPingPong(const PipelineLoopPlan &plan) const override {
    return warpSpecializedParams(plan).pingPong;
  }
};

/// A persistent warp-specialized kernel's accumulator tile to a tensor
/// through two shared panel buffers and bulk tensor stores that drain
/// while the next tile runs (stmatrix and TMA). False (nothing emitted) for
/// any other copy, or without room for the buffers. BulkStoreEpilogue.cpp.
bool lowerBulkStoreEpilogue(lowering::PipelineLoweringContext &kernel, tile::CopyOp copy);

/// Moves each accumulator of `loop`'s gemms into their MMAs' own storage
/// (`enter`, before the loop) or back to registers (after it), through the
/// gemm's atom, and tells the lowering it is held or not (hold_accumulators;
/// also sm100's CTA pair).
mlir::LogicalResult moveHeldAccumulators(lowering::PipelineLoweringContext &kernel,
                                         tile::PipelinedOp loop, bool enter);

/// The one instance the sm90 backend lists.
const PipelineStrategy &tmaWarpSpecializedPipeline();

} // namespace tessera::sm90

#endif // TESSERA_BACKENDS_SM90_TMAWARPSPECIALIZED_H
