//===- PipelineSchedule.cpp - Each pipelined loop's schedule --------------===//
//
// A tile.pipelined loop's schedule is decided once, before anything is
// lowered, and written into the IR (kScheduleAttr):
//
//   tile.pipelined %k = 0 to %n {...} {tile.schedule = {in_flight = 1 : i64,
//       ping_pong, stages = 4 : i64, strategy = "tma-warp-specialized"}}
//
// strategy, stages and in_flight are every schedule's; the other entries
// (`ping_pong` here) are the named strategy's own, printed and parsed by it
// (PipelineStrategy::printSchedule, parseSchedule), which rejects any it
// does not take.
//
// tile-plan-pipelines (planSchedule) asks the backend's strategies in order
// of preference and takes the first that can run the loop; tile-lower-to-gpu
// (readSchedule) reads the attribute, checks it, and hands the loop to that
// strategy. A schedule written by hand (a test, a tuner) is checked the same
// way: a strategy the backend lacks, or one that cannot run the loop, is an
// error on the loop.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

namespace tessera::lowering {

namespace {
constexpr llvm::StringLiteral kStrategyKey = "strategy";
constexpr llvm::StringLiteral kStagesKey = "stages";
constexpr llvm::StringLiteral kInFlightKey = "in_flight";
constexpr llvm::StringLiteral kPersistentKey = "persistent";
constexpr llvm::StringLiteral kStreamKKey = "stream_k";
} // namespace

void KernelLowering::prepareForPlanning() {
  readKernelSchedule();
  // The tensors' divisibility (what bulk tensor copies need): their types
  // and known divisors, no values.
  int64_t dynamicDim = 0;
  for (unsigned i = 0, e = kernel_.getNumKernelArguments(); i < e; ++i) {
    BlockArgument arg = kernel_.getKernelArgument(i);
    auto tensor = dyn_cast<TileTensorType>(arg.getType());
    if (!tensor)
      continue;
    TensorInfo info{tensor, Value(), {}, {}};
    for (int64_t dim : tensor.getShape())
      info.divisors.push_back(ShapedType::isDynamic(dim)
                                  ? kernel_.getDynamicDimDivisibility(dynamicDim++)
                                  : dim);
    tensors_[arg] = info;
  }
}

FailureOr<DictionaryAttr> KernelLowering::planSchedule(PipelinedOp loop) {
  PipelinePlan facts = planPipelined(loop);
  std::vector<const PipelineStrategy *> strategies = backend_.getPipelineStrategies(cc_);
  // A gemm under a branch or a serial loop of the body would escape the
  // plan's facts (which MMAs are in flight, which copies a gemm defers).
  Operation *nestedGemm = nullptr;
  loop.getBody().walk([&](GemmOp gemm) {
    if (gemm->getParentOp() != loop.getOperation())
      nestedGemm = gemm;
  });
  if (nestedGemm)
    return nestedGemm->emitOpError()
           << "inside tile.if or tile.serial in a tile.pipelined body is not supported yet; "
              "branch around the loop or keep its gemms at the body's top level";
  // Specialized warps split the whole block into producers and consumers,
  // and the producers start at the kernel's start: not for a loop inside
  // tile.if or tile.serial (the block does not reach it as one at a fixed
  // point), nor in a kernel that has such a loop (whose staged buffers
  // the producers could overwrite early).
  bool nested = false;
  kernel_.walk([&](PipelinedOp other) { nested |= other->getBlock() != &kernel_.getBodyBlock(); });
  for (auto [i, strategy] : llvm::enumerate(strategies)) {
    PipelinePlan plan = facts;
    std::string why = nested && strategy->specializesWarps()
                          ? "the kernel has a loop inside tile.if or tile.serial (warp "
                            "specialization runs loops at the kernel's top level only)"
                          : strategy->tryPlan(*this, loop, plan);
    if (!why.empty()) {
      // The backend's first choice lost, for a loop that stages copies:
      // say which strategy runs it instead, and why.
      if (i == 0 && !facts.ahead.empty() && i + 1 < strategies.size()) {
        const PipelineStrategy *next = nullptr;
        for (const PipelineStrategy *other : llvm::drop_begin(strategies)) {
          PipelinePlan probe = facts;
          if (other->tryPlan(*this, loop, probe).empty()) {
            next = other;
            break;
          }
        }
        if (next)
          loop.emitRemark() << "pipelining with " << next->getName() << " instead of "
                            << strategy->getName() << ": " << why;
      }
      continue;
    }
    for (const std::string &remark : plan.remarks)
      loop.emitRemark() << remark;
    Builder b(loop.getContext());
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr(kStrategyKey, b.getStringAttr(strategy->getName())),
        b.getNamedAttr(kStagesKey, b.getI64IntegerAttr(plan.stages)),
        b.getNamedAttr(kInFlightKey, b.getI64IntegerAttr(plan.inFlight))};
    strategy->printSchedule(plan, b, entries);
    return b.getDictionaryAttr(entries);
  }
  return loop.emitOpError() << "no pipelining strategy of backend '" << backend_.getName()
                            << "' can run this loop";
}

FailureOr<KernelLowering::ScheduledLoop> KernelLowering::readSchedule(PipelinedOp loop) {
  auto schedule = loop->getAttrOfType<DictionaryAttr>(kScheduleAttr);
  if (!schedule)
    return loop.emitOpError() << "has no schedule ('" << kScheduleAttr
                              << "'): run tile-plan-pipelines before tile-lower-to-gpu";
  auto name = schedule.getAs<StringAttr>(kStrategyKey);
  auto stages = schedule.getAs<IntegerAttr>(kStagesKey);
  auto inFlight = schedule.getAs<IntegerAttr>(kInFlightKey);
  if (!name || !stages || !inFlight)
    return loop.emitOpError() << "'" << kScheduleAttr
                              << "' must be {strategy = \"<name>\", stages = <i64>, in_flight = "
                                 "<i64>, and the strategy's own entries}, got "
                              << schedule;
  ScheduledLoop scheduled;
  std::vector<const PipelineStrategy *> strategies = backend_.getPipelineStrategies(cc_);
  for (const PipelineStrategy *strategy : strategies)
    if (strategy->getName() == name.getValue())
      scheduled.strategy = strategy;
  if (!scheduled.strategy) {
    InFlightDiagnostic error = loop.emitOpError()
                               << "schedule names strategy '" << name.getValue()
                               << "', which backend '" << backend_.getName()
                               << "' does not provide (it provides: ";
    llvm::interleaveComma(strategies, error,
                          [&](const PipelineStrategy *s) { error << s->getName(); });
    return error << ")";
  }
  scheduled.plan = planPipelined(loop);
  std::string why = scheduled.strategy->tryPlan(*this, loop, scheduled.plan);
  if (!why.empty())
    return loop.emitOpError() << "schedule names strategy '" << name.getValue()
                              << "', which cannot run this loop: " << why;
  PipelinePlan &plan = scheduled.plan;
  if (stages.getInt() != plan.stages)
    return loop.emitOpError() << "schedule says " << stages.getInt()
                              << " stages, but the loop's staged buffers have " << plan.stages;
  if (inFlight.getInt() < 0 || inFlight.getInt() > plan.inFlight)
    return loop.emitOpError() << "schedule keeps " << inFlight.getInt()
                              << " MMA groups in flight; this loop allows 0 to " << plan.inFlight;
  plan.inFlight = inFlight.getInt();
  SmallVector<NamedAttribute> own;
  for (NamedAttribute entry : schedule) {
    StringRef key = entry.getName().strref();
    if (key != kStrategyKey && key != kStagesKey && key != kInFlightKey)
      own.push_back(entry);
  }
  std::string invalid =
      scheduled.strategy->parseSchedule(DictionaryAttr::get(loop.getContext(), own), plan);
  if (!invalid.empty())
    return loop.emitOpError() << invalid;
  plan.remarks.clear();
  return scheduled;
}

DictionaryAttr KernelLowering::planKernelSchedule() {
  Builder b(kernel_.getContext());
  SmallVector<NamedAttribute> entries;
  if (persistent_)
    entries.push_back(b.getNamedAttr(kPersistentKey, b.getUnitAttr()));
  if (persistent_ && kernel_.getStreamK()) {
    if (std::optional<std::string> why = whyNoStreamK())
      kernel_.emitRemark() << "stream-K not applied (the kernel stays persistent): " << *why;
    else
      entries.push_back(b.getNamedAttr(kStreamKKey, b.getUnitAttr()));
  }
  // Multicast is a warp-specialized loop's (its schedule says whether).
  auto topLevel = kernel_.getBodyBlock().getOps<PipelinedOp>();
  bool specialized = false;
  if (!topLevel.empty())
    if (auto schedule = (*topLevel.begin())->getAttrOfType<DictionaryAttr>(kScheduleAttr))
      for (const PipelineStrategy *strategy : backend_.getPipelineStrategies(cc_))
        if (strategy->specializesWarps() &&
            schedule.getAs<StringAttr>(kStrategyKey) == strategy->getName())
          specialized = true;
  if (kernel_.getMulticast() && !specialized)
    kernel_.emitRemark() << "multicast not applied: no warp-specialized pipelined loop (it "
                            "needs bulk tensor copies, mbarriers and an asynchronous MMA)";
  return b.getDictionaryAttr(entries);
}

LogicalResult KernelLowering::readKernelStreamK() {
  auto schedule = kernel_->getAttrOfType<DictionaryAttr>(kScheduleAttr);
  if (!schedule && kernel_.getStreamK() && persistent_)
    return kernel_.emitOpError() << "asks for stream-K but has no schedule ('" << kScheduleAttr
                                 << "'): run tile-plan-pipelines before tile-lower-to-gpu";
  streamK_ = persistent_ && schedule && schedule.get(kStreamKKey);
  return success();
}

LogicalResult planPipelines(KernelOp kernel, const Backend &backend,
                            const ComputeCapability &cc) {
  KernelLowering planner(kernel, backend, cc);
  planner.prepareForPlanning();
  WalkResult result = kernel.walk([&](PipelinedOp loop) {
    FailureOr<DictionaryAttr> schedule = planner.planSchedule(loop);
    if (failed(schedule))
      return WalkResult::interrupt();
    loop->setAttr(kScheduleAttr, *schedule);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  kernel->setAttr(kScheduleAttr, planner.planKernelSchedule());
  return success();
}

} // namespace tessera::lowering
