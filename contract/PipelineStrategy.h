//===- PipelineStrategy.h - How a backend pipelines a loop ------*- C++ -*-===//
//
// The pipelining half of the backend contract. A tile.pipelined loop is run
// by one strategy: code a backend provides (register double buffering in
// common, cp.async multi-stage in sm80, TMA warp specialization in sm90).
// tile-plan-pipelines, before shared memory is planned, asks the backend for
// its strategies in order of preference, gives each the stage count it keeps
// (stagesFor), takes the first that can run the loop and writes the choice
// into the IR (kScheduleAttr, and the stage count onto the buffers the loop
// stages); tile-plan-shared-memory places those buffers, and
// tile-lower-to-gpu reads the schedule and hands the loop to that strategy.
// Shared passes implement no strategy and never test a backend's name or
// number.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONTRACT_PIPELINESTRATEGY_H
#define TESSERA_CONTRACT_PIPELINESTRATEGY_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/TileDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringRef.h"

namespace tessera {

namespace lowering {
class PipelineLoweringContext;
} // namespace lowering

/// The discardable attribute of a tile.pipelined loop holding its schedule:
/// a dictionary {strategy = "<name>", stages = S, in_flight = F, ...}
/// written by tile-plan-pipelines and read by tile-lower-to-gpu, where "..."
/// are the named strategy's own entries, printed and parsed by it
/// (PipelineStrategy::printSchedule / parseSchedule). On a tile.kernel, the
/// schedules of the whole kernel that apply: {[persistent][, stream_k]}.
inline constexpr llvm::StringLiteral kScheduleAttr = "tile.schedule";

/// A strategy's own schedule parameters: subclassed by the strategy that
/// decides them (in its backend's folder), printed into the schedule
/// attribute and parsed back by it. Shared code never looks inside.
class StrategyParams {
public:
  virtual ~StrategyParams() = default;
};

/// What planning found out about a tile.pipelined loop from the tile IR,
/// and the schedule decided for it. Strategies decide from it whether they
/// can run the loop, and emit the loop by it.
struct PipelineLoopPlan {
  /// The copies into staged shared buffers, issued ahead of the compute
  /// (planning gave their buffers `stages` stages).
  llvm::SmallPtrSet<mlir::Operation *, 4> ahead;
  int64_t stages = 1;
  /// The body's gemm reads shared memory through the async proxy (wgmma);
  /// `inFlight` MMA groups stay in flight across iterations.
  bool asyncMma = false;
  int64_t inFlight = 0;
  /// Some gemm of the body uses a family whose MMAs outlive the gemm
  /// (MmaAtomLowering::keepsMmaInFlight, wgmma): the strategy waits for
  /// them before the accumulators are read after the loop.
  bool mmaOutlivesGemm = false;
  /// Whether an async MMA group may stay in flight into the next iteration
  /// as far as the body goes (whatever the stages): no op of the body reads
  /// the gemms' accumulators, no gemm reads A from registers, nothing but
  /// the copies ahead writes shared memory.
  bool mayKeepMmaInFlight = false;
  /// Whether, as far as the body goes, the gemms' accumulators may stay in
  /// the storage their MMAs accumulate in through the loop: every gemm's
  /// family holds them (MmaAtomLowering::holdsAccumulatorAcrossLoop) and
  /// the body meets mayKeepMmaInFlight's conditions.
  bool accumulatorsHoldable = false;
  /// The body's first gemm reads A and B from shared memory with an atom
  /// whose family defers the loop's copies (MmaAtomLowering::
  /// defersLoopCopies: mma.sync's ldmatrix loads go first).
  bool firstGemmDefersCopies = false;
  /// What the strategy decided beyond the above (its own schedule
  /// parameters), owned and read by it;
  /// null for none.
  std::shared_ptr<const StrategyParams> params;
  /// What planning tells the author about the schedule (each a remark on
  /// the loop), e.g. why a schedule the kernel asked for does not apply.
  std::vector<std::string> remarks;
};

/// The stage count of a strategy with asynchronous copies: as many stages
/// as the loop asks for, at least two, and no more than fit.
inline int64_t asyncCopyStages(int64_t requested, int64_t fitting) {
  return std::min(requested, std::max<int64_t>(2, fitting));
}

/// A pipelining strategy: one object per strategy, in the folder of the
/// backend that introduced the instructions it needs.
class PipelineStrategy {
public:
  virtual ~PipelineStrategy() = default;
  /// The name a schedule attribute gives it, e.g. "cp-async-multistage".
  virtual llvm::StringRef getName() const = 0;
  /// How many copies of a loop's staged buffers the strategy keeps when the
  /// loop asks for `requested` stages and `fitting` copies fit the block's
  /// shared memory side by side. Planning asks it before tryPlan and gives
  /// the buffers that many; while the kernel does not fit, it takes stages
  /// away one at a time (down to an unstaged loop) and asks again. By
  /// default one: the loop as written.
  virtual int64_t stagesFor(int64_t requested, int64_t fitting) const { return 1; }
  /// Why this strategy cannot run `loop`, or "" when it can; then it may
  /// complete `plan` with what it decides (ping-pong, MMA groups in
  /// flight). Called before the kernel is lowered (`kernel` has lowered
  /// nothing yet; its queries of the tile IR work), with the loop's buffers
  /// staged as stagesFor said and every shared buffer placed for it.
  virtual std::string tryPlan(lowering::PipelineLoweringContext &kernel, tile::PipelinedOp loop,
                              PipelineLoopPlan &plan) const = 0;
  /// True for a form only loops of a particular shape take, listed before
  /// the strategy the backend expects to run most loops (sm100's CTA pair):
  /// planning does not remark on the loops it cannot run.
  virtual bool isOpportunistic() const { return false; }
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
  /// Appends the strategy's own schedule entries for `plan` (beyond
  /// strategy, stages and in_flight) to `entries`.
  virtual void printSchedule(const PipelineLoopPlan &plan, mlir::Builder &b,
                             llvm::SmallVectorImpl<mlir::NamedAttribute> &entries) const {}
  /// Reads the strategy's own entries of a schedule (`entries`: those beyond
  /// strategy, stages and in_flight, written by printSchedule or by hand)
  /// into `plan`. Returns "" when they are well formed, or why not (an
  /// entry unknown or malformed). By default no entry is valid. Planning
  /// checks what they ask with checkSchedule; lowering only reads them.
  virtual std::string parseSchedule(mlir::DictionaryAttr entries, PipelineLoopPlan &plan) const {
    if (entries.empty())
      return "";
    return "schedule entry '" + entries.begin()->getName().str() + "' is not one that strategy '" +
           getName().str() + "' takes (it takes none of its own)";
  }
  /// Why the schedule `asked` (parsed by parseSchedule) asks for more than
  /// `possible` (what tryPlan found the loop can take), or "" when it does
  /// not. By default it asks for nothing of its own.
  virtual std::string checkSchedule(const PipelineLoopPlan &possible,
                                    const PipelineLoopPlan &asked) const {
    return "";
  }
  /// Whether the loop, as `plan` schedules it, runs the kernel's ping-pong
  /// schedule (two tiles per block); the lowering drops it otherwise.
  virtual bool runsPingPong(const PipelineLoopPlan &plan) const { return false; }
  /// Emits `loop` (`count` iterations) at the lowering's insertion point.
  virtual mlir::LogicalResult lower(lowering::PipelineLoweringContext &kernel,
                                    tile::PipelinedOp loop, mlir::Value count,
                                    const PipelineLoopPlan &plan) const = 0;
};

} // namespace tessera

#endif // TESSERA_CONTRACT_PIPELINESTRATEGY_H
