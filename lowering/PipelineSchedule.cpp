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
// tile-plan-pipelines (PipelinePlanning.cpp) decides it, or checks one
// written by hand (a test, a tuner): a strategy the backend lacks, one that
// cannot run the loop, or entries asking for more than the loop can take
// are errors on the loop. tile-lower-to-gpu (readSchedule) reads the
// attribute and hands the loop to that strategy without deciding again.
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
  kernel_.walk([&](ViewOp view) { tensors_[view.getResult()] = viewTypeInfo(view); });
}

LogicalResult KernelLowering::checkPipelinedBody(PipelinedOp loop) {
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
  return success();
}

std::string KernelLowering::tryStrategy(const PipelineStrategy &strategy, PipelinedOp loop,
                                        PipelinePlan &plan) {
  plan = planPipelined(loop);
  // Specialized warps split the whole block into producers and consumers,
  // and the producers start at the kernel's start: not for a loop inside
  // tile.if or tile.serial (the block does not reach it as one at a fixed
  // point), nor in a kernel that has such a loop (whose staged buffers
  // the producers could overwrite early).
  bool nested = false;
  kernel_.walk([&](PipelinedOp other) { nested |= other->getBlock() != &kernel_.getBodyBlock(); });
  if (nested && strategy.specializesWarps())
    return "the kernel has a loop inside tile.if or tile.serial (warp specialization runs loops "
           "at the kernel's top level only)";
  return strategy.tryPlan(*this, loop, plan);
}

DictionaryAttr KernelLowering::printSchedule(const PipelineStrategy &strategy,
                                             const PipelinePlan &plan) {
  Builder b(kernel_.getContext());
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr(kStrategyKey, b.getStringAttr(strategy.getName())),
      b.getNamedAttr(kStagesKey, b.getI64IntegerAttr(plan.stages)),
      b.getNamedAttr(kInFlightKey, b.getI64IntegerAttr(plan.inFlight))};
  strategy.printSchedule(plan, b, entries);
  return b.getDictionaryAttr(entries);
}

FailureOr<KernelLowering::ScheduleEntries>
KernelLowering::readScheduleEntries(PipelinedOp loop, DictionaryAttr schedule) {
  auto name = schedule.getAs<StringAttr>(kStrategyKey);
  auto stages = schedule.getAs<IntegerAttr>(kStagesKey);
  auto inFlight = schedule.getAs<IntegerAttr>(kInFlightKey);
  if (!name || !stages || !inFlight)
    return loop.emitOpError() << "'" << kScheduleAttr
                              << "' must be {strategy = \"<name>\", stages = <i64>, in_flight = "
                                 "<i64>, and the strategy's own entries}, got "
                              << schedule;
  ScheduleEntries read;
  std::vector<const PipelineStrategy *> strategies = backend_.getPipelineStrategies(cc_);
  for (const PipelineStrategy *strategy : strategies)
    if (strategy->getName() == name.getValue())
      read.strategy = strategy;
  if (!read.strategy) {
    InFlightDiagnostic error = loop.emitOpError()
                               << "schedule names strategy '" << name.getValue()
                               << "', which backend '" << backend_.getName()
                               << "' does not provide (it provides: ";
    llvm::interleaveComma(strategies, error,
                          [&](const PipelineStrategy *s) { error << s->getName(); });
    return error << ")";
  }
  read.stages = stages.getInt();
  read.inFlight = inFlight.getInt();
  if (read.stages < 1)
    return loop.emitOpError() << "schedule says " << read.stages
                              << " stages; a loop has at least 1";
  if (read.inFlight < 0)
    return loop.emitOpError() << "schedule keeps " << read.inFlight
                              << " MMA groups in flight; it keeps 0 or more";
  SmallVector<NamedAttribute> own;
  for (NamedAttribute entry : schedule) {
    StringRef key = entry.getName().strref();
    if (key != kStrategyKey && key != kStagesKey && key != kInFlightKey)
      own.push_back(entry);
  }
  read.own = DictionaryAttr::get(loop.getContext(), own);
  PipelinePlan parsed;
  std::string invalid = read.strategy->parseSchedule(read.own, parsed);
  if (!invalid.empty())
    return loop.emitOpError() << invalid;
  read.params = std::move(parsed.params);
  return read;
}

FailureOr<KernelLowering::ScheduledLoop> KernelLowering::readSchedule(PipelinedOp loop) {
  auto schedule = loop->getAttrOfType<DictionaryAttr>(kScheduleAttr);
  if (!schedule)
    return loop.emitOpError() << "has no schedule ('" << kScheduleAttr
                              << "'): run tile-plan-pipelines before tile-lower-to-gpu";
  FailureOr<ScheduleEntries> read = readScheduleEntries(loop, schedule);
  if (failed(read))
    return failure();
  // Planning checked what the schedule asks against the loop; here the
  // loop's buffers must still be staged as it says.
  ScheduledLoop scheduled{read->strategy, planPipelined(loop)};
  PipelinePlan &plan = scheduled.plan;
  if (read->stages != plan.stages)
    return loop.emitOpError() << "schedule says " << read->stages
                              << " stages, but the loop's staged buffers have " << plan.stages
                              << " (tile-plan-pipelines stages them)";
  plan.inFlight = read->inFlight;
  plan.params = read->params;
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

} // namespace tessera::lowering
