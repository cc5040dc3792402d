//===- PipelineStrategy.h - How a backend pipelines a loop ------*- C++ -*-===//
//
// The pipelining half of the backend contract. A tile.pipelined loop is run
// by one strategy: code a backend provides (register double buffering in
// common, cp.async multi-stage in sm80, TMA warp specialization in sm90).
// tile-plan-pipelines asks the backend for its strategies in order of
// preference, takes the first that can run the loop, and writes the choice
// into the IR (kScheduleAttr); tile-lower-to-gpu reads it and hands the loop
// to that strategy. Shared passes implement no strategy and never test a
// backend's name or number.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_PIPELINESTRATEGY_H
#define TESSERA_BACKENDS_PIPELINESTRATEGY_H

#include <cstdint>
#include <string>
#include <vector>

#include "ir/TileDialect.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringRef.h"

namespace tessera {

namespace lowering {
class PipelineLoweringContext;
} // namespace lowering

/// The discardable attribute of a tile.pipelined loop holding its schedule:
/// a dictionary {strategy = "<name>", stages = S, in_flight = F[, ping_pong]
/// [, multicast = N][, mma_overlap][, warpgroup_turns = W]} written by tile-plan-pipelines and read by
/// tile-lower-to-gpu. On a tile.kernel, the schedules of the whole kernel
/// that apply: {[persistent][, stream_k]}.
inline constexpr llvm::StringLiteral kScheduleAttr = "tile.schedule";

/// What planning found out about a tile.pipelined loop from the tile IR,
/// and the schedule decided for it. Strategies decide from it whether they
/// can run the loop, and emit the loop by it.
struct PipelineLoopPlan {
  /// The copies into staged shared buffers, issued ahead of the compute
  /// (tile-plan-shared-memory gave their buffers `stages` stages).
  llvm::SmallPtrSet<mlir::Operation *, 4> ahead;
  int64_t stages = 1;
  /// The body's gemm reads shared memory through the async proxy (wgmma);
  /// `inFlight` MMA groups stay in flight across iterations.
  bool asyncMma = false;
  int64_t inFlight = 0;
  /// Whether an async MMA group may stay in flight into the next iteration
  /// as far as the body goes (whatever the stages): no op of the body reads
  /// the gemms' accumulators, no gemm reads A from registers, nothing but
  /// the copies ahead writes shared memory.
  bool mayKeepMmaInFlight = false;
  /// The body's first gemm reads its operands with ldmatrix.
  bool bodyUsesLdmatrix = false;
  /// The ping-pong schedule (two tiles' consumers share a warp-specialized
  /// loop's ring of stages).
  bool pingPong = false;
  /// The rotated two-gemm schedule (backends/sm90/MmaOverlap.h): iteration
  /// k issues its first gemm beside iteration k - 1's last, and runs the
  /// work between its gemms while that one is in flight.
  bool mmaOverlap = false;
  /// Consumer warpgroups taking turns to issue their MMAs (named barriers),
  /// so that one's work between gemms runs under the others' MMAs; 0: none.
  int64_t warpgroupTurns = 0;
  /// Blocks per thread block cluster that multicast the loop's largest copy
  /// (the tile.kernel's `multicast`); 0: none.
  int64_t multicastBlocks = 0;
  /// What planning tells the author about the schedule (each a remark on
  /// the loop), e.g. why a schedule the kernel asked for does not apply.
  std::vector<std::string> remarks;
};

/// A pipelining strategy: one object per strategy, in the folder of the
/// backend that introduced the instructions it needs.
class PipelineStrategy {
public:
  virtual ~PipelineStrategy() = default;
  /// The name a schedule attribute gives it, e.g. "cp-async-multistage".
  virtual llvm::StringRef getName() const = 0;
  /// Why this strategy cannot run `loop`, or "" when it can; then it may
  /// complete `plan` with what it decides (ping-pong, MMA groups in
  /// flight). Called before the kernel is lowered (`kernel` has lowered
  /// nothing yet; its queries of the tile IR work).
  virtual std::string tryPlan(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                              PipelineLoopPlan &plan) const = 0;
  /// True when the strategy splits the block into producer and consumer
  /// warps: the kernel's code before the loop then runs on the consumers
  /// alone (the lowering prepares that before the body is emitted).
  virtual bool specializesWarps() const { return false; }
  /// Lowers `copy`, which follows this strategy's warp-specialized loop in
  /// the kernel, in the strategy's own epilogue form, or returns false
  /// (nothing emitted) to leave it to the shared lowering.
  virtual bool lowerEpilogueCopy(lowering::PipelineLoweringContext &kernel,
                                 tile::CopyOp copy) const {
    return false;
  }
  /// Emits `loop` (`count` iterations) at the lowering's insertion point.
  virtual mlir::LogicalResult lower(lowering::PipelineLoweringContext &kernel,
                                    tile::PipelinedOp loop, mlir::Value count,
                                    const PipelineLoopPlan &plan) const = 0;
};

} // namespace tessera

#endif // TESSERA_BACKENDS_PIPELINESTRATEGY_H
