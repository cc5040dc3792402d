//===- PipelinePlanning.cpp - Deciding each pipelined loop's schedule -----===//
//
// tile-plan-pipelines: every tile.pipelined loop's strategy and stage count
// are decided here, once, before shared memory is planned.
//
// For each loop the backend's strategies are asked in order of preference.
// Each says how many copies of the loop's staged buffers it keeps
// (PipelineStrategy::stagesFor); the buffers get that many, every shared
// buffer is placed for it, and the strategy says whether it can run the
// loop so (tryPlan). The first that can is the loop's. When the kernel
// then needs more shared memory than the block has, every loop planning
// staged gives up one stage and is decided again, down to an unstaged loop
// (the strategies that need stages cannot run it; one that runs the loop as
// written can). A schedule already on the loop (written by hand: a test, a
// tuner) is not decided but checked, at the stages it says.
//
// The decision is written into the loop (kScheduleAttr) and its stage count
// onto the buffers the loop stages, which tile-plan-shared-memory places.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

namespace tessera::lowering {

namespace {

/// One loop's planning: what it can stage, and what was decided.
struct LoopPlanning {
  PipelinedOp loop;
  /// The buffers the loop fills from a tensor and uses only inside it,
  /// allocated before it: what its copies ahead can fill on stages.
  SmallVector<AllocSharedOp> stageable;
  /// How many copies of them fit the block's shared memory side by side.
  int64_t fitting = 1;
  /// The schedule the loop came with, checked rather than decided; or null.
  DictionaryAttr given;
  /// The most stages planning may give the loop (first its request; one
  /// less each time the kernel does not fit). Below 2 the loop is unstaged.
  int64_t cap = 1;
  /// The decision: the strategy, its plan, whether the buffers are staged.
  const PipelineStrategy *strategy = nullptr;
  PipelineLoopPlan plan;
  bool staged = false;
  /// Why the backend's first strategy (not counting opportunistic ones)
  /// could not run a loop that stages copies, for the remark naming the one
  /// that runs it instead.
  std::string firstLost;
};

SmallVector<AllocSharedOp> stageableBuffers(PipelinedOp loop) {
  // A buffer allocated in the body is a new buffer each iteration: nothing
  // can be copied into it ahead, and the strategies would read it before
  // the body made it.
  SmallVector<AllocSharedOp> buffers;
  for (Operation &op : loop.getBodyBlock()) {
    auto copy = dyn_cast<CopyOp>(op);
    if (!copy || !isa<TileTensorType>(copy.getSrc().getType()))
      continue;
    auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>();
    if (!alloc || loop->isAncestor(alloc) || llvm::is_contained(buffers, alloc) ||
        !llvm::all_of(alloc->getUsers(),
                      [&](Operation *user) { return loop->isProperAncestor(user); }))
      continue;
    buffers.push_back(alloc);
  }
  return buffers;
}

class PipelinePlanner {
public:
  PipelinePlanner(KernelOp kernel, const Backend &backend, const ComputeCapability &cc,
                  llvm::function_ref<int64_t()> placeBuffers)
      : kernel_(kernel), planner_(kernel, backend, cc),
        strategies_(backend.getPipelineStrategies(cc)),
        limit_(backend.getCapabilities(cc).sharedMemoryPerBlock), placeBuffers_(placeBuffers) {}

  LogicalResult run();

private:
  /// The stage count `strategy` keeps for `loop` under its cap, and
  /// whether the loop's buffers are staged at all.
  static std::pair<int64_t, bool> stagesFor(LoopPlanning &loop, const PipelineStrategy &strategy) {
    if (loop.stageable.empty() || loop.cap < 2)
      return {1, false};
    return {std::min(strategy.stagesFor(loop.loop.getStages(), loop.fitting), loop.cap), true};
  }
  /// Gives `loop`'s buffers `stages` copies (none staged: no attribute),
  /// places every shared buffer for it and re-reads what depends on the
  /// placement (the shared memory moved after the mbarriers).
  void stage(const LoopPlanning &loop, int64_t stages, bool staged) {
    for (AllocSharedOp alloc : loop.stageable) {
      if (staged)
        alloc.setStages(stages);
      else
        alloc.removeStagesAttr();
    }
    placeBuffers_();
    planner_.readKernelSchedule();
  }
  /// The backend's first strategy that can run `loop`.
  LogicalResult decide(LoopPlanning &loop);
  /// Checks the schedule `loop` came with, at the stages it says.
  LogicalResult check(LoopPlanning &loop);

  KernelOp kernel_;
  KernelLowering planner_;
  std::vector<const PipelineStrategy *> strategies_;
  int64_t limit_;
  llvm::function_ref<int64_t()> placeBuffers_;
};

LogicalResult PipelinePlanner::decide(LoopPlanning &loop) {
  loop.strategy = nullptr;
  loop.firstLost.clear();
  bool passedFirst = false;
  for (const PipelineStrategy *strategy : strategies_) {
    auto [stages, staged] = stagesFor(loop, *strategy);
    stage(loop, stages, staged);
    PipelineLoopPlan plan;
    std::string why = planner_.tryStrategy(*strategy, loop.loop, plan);
    if (why.empty()) {
      loop.strategy = strategy;
      loop.plan = std::move(plan);
      loop.staged = staged;
      return success();
    }
    if (strategy->isOpportunistic())
      continue;
    if (!passedFirst && !plan.ahead.empty())
      loop.firstLost = strategy->getName().str() + ": " + why;
    passedFirst = true;
  }
  return loop.loop.emitOpError() << "no pipelining strategy of backend '"
                                 << planner_.backend().getName() << "' can run this loop";
}

LogicalResult PipelinePlanner::check(LoopPlanning &loop) {
  FailureOr<KernelLowering::ScheduleEntries> read =
      planner_.readScheduleEntries(loop.loop, loop.given);
  if (failed(read))
    return failure();
  if (read->stages > 1 && loop.stageable.empty())
    return loop.loop.emitOpError()
           << "schedule says " << read->stages
           << " stages, but the loop copies no tensor into a shared buffer it could stage";
  loop.staged = !loop.stageable.empty();
  stage(loop, read->stages, loop.staged);
  StringRef name = read->strategy->getName();
  PipelineLoopPlan possible;
  std::string why = planner_.tryStrategy(*read->strategy, loop.loop, possible);
  if (!why.empty())
    return loop.loop.emitOpError()
           << "schedule names strategy '" << name << "', which cannot run this loop: " << why;
  if (read->inFlight > possible.inFlight)
    return loop.loop.emitOpError()
           << "schedule keeps " << read->inFlight << " MMA groups in flight; this loop allows 0 to "
           << possible.inFlight;
  PipelineLoopPlan asked = possible;
  asked.inFlight = read->inFlight;
  asked.params = read->params;
  std::string invalid = read->strategy->checkSchedule(possible, asked);
  if (!invalid.empty())
    return loop.loop.emitOpError() << invalid;
  asked.remarks.clear();
  loop.strategy = read->strategy;
  loop.plan = std::move(asked);
  return success();
}

LogicalResult PipelinePlanner::run() {
  planner_.prepareForPlanning();
  kernel_.walk([&](AllocSharedOp alloc) { alloc.removeStagesAttr(); });
  std::vector<LoopPlanning> loops;
  WalkResult walked = kernel_.walk([&](PipelinedOp loop) {
    if (failed(planner_.checkPipelinedBody(loop)))
      return WalkResult::interrupt();
    LoopPlanning &planning = loops.emplace_back();
    planning.loop = loop;
    planning.stageable = stageableBuffers(loop);
    int64_t stageBytes = 0;
    for (AllocSharedOp alloc : planning.stageable)
      stageBytes += getBufferBytes(alloc.getType());
    planning.fitting = limit_ / std::max<int64_t>(1, stageBytes);
    planning.given = loop->getAttrOfType<DictionaryAttr>(kScheduleAttr);
    planning.cap = loop.getStages();
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  // While one loop is decided, the others hold the stages of their
  // backend's first choice (then of their last decision).
  for (LoopPlanning &loop : loops)
    if (!loop.given && !strategies_.empty()) {
      auto [stages, staged] = stagesFor(loop, *strategies_.front());
      for (AllocSharedOp alloc : loop.stageable)
        if (staged)
          alloc.setStages(stages);
    }
  for (;;) {
    for (LoopPlanning &loop : loops)
      if (failed(loop.given ? check(loop) : decide(loop)))
        return failure();
    if (placeBuffers_() <= limit_)
      break;
    bool reduced = false;
    for (LoopPlanning &loop : loops)
      if (!loop.given && loop.staged && loop.plan.stages > 1) {
        loop.cap = loop.plan.stages - 1;
        reduced = true;
      }
    if (!reduced)
      break;
  }
  for (LoopPlanning &loop : loops) {
    if (loop.given)
      continue;
    if (!loop.firstLost.empty())
      loop.loop.emitRemark() << "pipelining with " << loop.strategy->getName() << " instead of "
                             << loop.firstLost;
    for (const std::string &remark : loop.plan.remarks)
      loop.loop.emitRemark() << remark;
    loop.loop->setAttr(kScheduleAttr, planner_.printSchedule(*loop.strategy, loop.plan));
  }
  planner_.readKernelSchedule();
  kernel_->setAttr(kScheduleAttr, planner_.planKernelSchedule());
  return success();
}

} // namespace

LogicalResult planPipelines(KernelOp kernel, const Backend &backend, const ComputeCapability &cc,
                            llvm::function_ref<int64_t()> placeBuffers) {
  return PipelinePlanner(kernel, backend, cc, placeBuffers).run();
}

} // namespace tessera::lowering
