//===- TmaWarpSpecializedSchedule.cpp - The strategy's schedule entries ---===//
//
// This file implements how the TMA warp-specialized strategy writes its own
// entries into a loop's schedule attribute and reads them back:
//
//   {strategy = "tma-warp-specialized", stages = 4, in_flight = 0,
//    mma_overlap, warpgroup_turns = 2}
//
// `ping_pong`, `multicast = N`, `mma_overlap`, `warpgroup_turns = W` and
// `hold_accumulators` (WarpSpecializedParams). A schedule written by hand is
// checked here: an entry the strategy does not take or one of the wrong type
// (parseSchedule), or one that asks for more than planning found the loop
// can take (checkSchedule), is an error on the loop.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/TmaWarpSpecialized.h"

#include <iterator>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::sm90 {

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kPingPongKey = "ping_pong";
constexpr llvm::StringLiteral kMulticastKey = "multicast";
constexpr llvm::StringLiteral kMmaOverlapKey = "mma_overlap";
constexpr llvm::StringLiteral kWarpgroupTurnsKey = "warpgroup_turns";
constexpr llvm::StringLiteral kHoldAccumulatorsKey = "hold_accumulators";

/// The strategy's entries: a unit attribute or an i64 each.
struct Entry {
  llvm::StringLiteral key;
  bool unit;
};
constexpr Entry kEntries[] = {{kPingPongKey, true},
                              {kMulticastKey, false},
                              {kMmaOverlapKey, true},
                              {kWarpgroupTurnsKey, false},
                              {kHoldAccumulatorsKey, true}};
constexpr llvm::StringLiteral kEntriesForm = "[ping_pong][, multicast = <i64>][, mma_overlap][, "
                                             "warpgroup_turns = <i64>][, hold_accumulators]";
} // namespace

const WarpSpecializedParams &warpSpecializedParams(const PipelineLoopPlan &plan) {
  static const WarpSpecializedParams kNone;
  // Only this strategy's tryPlan and parseSchedule set the params of the
  // plans it is handed.
  if (const StrategyParams *params = plan.params.get())
    return *static_cast<const WarpSpecializedParams *>(params);
  return kNone;
}

void TmaWarpSpecializedPipeline::printSchedule(
    const PipelineLoopPlan &plan, Builder &b,
    llvm::SmallVectorImpl<NamedAttribute> &entries) const {
  const WarpSpecializedParams &params = warpSpecializedParams(plan);
  if (params.pingPong)
    entries.push_back(b.getNamedAttr(kPingPongKey, b.getUnitAttr()));
  if (params.multicastBlocks)
    entries.push_back(b.getNamedAttr(kMulticastKey, b.getI64IntegerAttr(params.multicastBlocks)));
  if (params.mmaOverlap)
    entries.push_back(b.getNamedAttr(kMmaOverlapKey, b.getUnitAttr()));
  if (params.warpgroupTurns)
    entries.push_back(
        b.getNamedAttr(kWarpgroupTurnsKey, b.getI64IntegerAttr(params.warpgroupTurns)));
  if (params.holdAccumulators)
    entries.push_back(b.getNamedAttr(kHoldAccumulatorsKey, b.getUnitAttr()));
}

std::string TmaWarpSpecializedPipeline::parseSchedule(DictionaryAttr entries,
                                                      PipelineLoopPlan &plan) const {
  auto find = [](StringRef key) {
    return llvm::find_if(kEntries, [&](const Entry &e) { return e.key == key; });
  };
  for (NamedAttribute entry : entries)
    if (find(entry.getName().strref()) == std::end(kEntries))
      return "schedule entry '" + entry.getName().str() + "' is not one that strategy '" +
             getName().str() + "' takes (" + kEntriesForm.str() + ")";
  for (const Entry &known : kEntries) {
    Attribute value = entries.get(known.key);
    if (!value || (known.unit ? isa<UnitAttr>(value) : isa<IntegerAttr>(value)))
      continue;
    std::string got;
    llvm::raw_string_ostream os(got);
    os << value;
    return "schedule entry '" + known.key.str() + "' of strategy '" + getName().str() +
           "' must be " + (known.unit ? "a unit attribute" : "an i64") + ", got " + got + " (" +
           kEntriesForm.str() + ")";
  }
  auto params = std::make_shared<WarpSpecializedParams>();
  params->pingPong = entries.get(kPingPongKey) != nullptr;
  if (auto multicast = entries.getAs<IntegerAttr>(kMulticastKey))
    params->multicastBlocks = multicast.getInt();
  params->mmaOverlap = entries.get(kMmaOverlapKey) != nullptr;
  if (auto turns = entries.getAs<IntegerAttr>(kWarpgroupTurnsKey))
    params->warpgroupTurns = turns.getInt();
  params->holdAccumulators = entries.get(kHoldAccumulatorsKey) != nullptr;
  plan.params = std::move(params);
  return "";
}

std::string TmaWarpSpecializedPipeline::checkSchedule(const PipelineLoopPlan &possible,
                                                      const PipelineLoopPlan &asked) const {
  const WarpSpecializedParams &can = warpSpecializedParams(possible);
  const WarpSpecializedParams &wants = warpSpecializedParams(asked);
  if (wants.pingPong && !can.pingPong)
    return "schedule asks for ping-pong, which this loop cannot take";
  if (wants.multicastBlocks != 0 && wants.multicastBlocks != can.multicastBlocks)
    return "schedule multicasts over " + std::to_string(wants.multicastBlocks) +
           " blocks; this loop can take " + std::to_string(can.multicastBlocks) + " (0: none)";
  if (wants.mmaOverlap && !can.mmaOverlap)
    return "schedule asks for mma_overlap, which this loop cannot take";
  if (wants.warpgroupTurns != 0 &&
      (!wants.mmaOverlap || wants.warpgroupTurns != can.warpgroupTurns))
    return "schedule has " + std::to_string(wants.warpgroupTurns) +
           " warpgroups take turns; this loop can take " + std::to_string(can.warpgroupTurns) +
           " (0: none), with mma_overlap";
  if (wants.holdAccumulators && !can.holdAccumulators)
    return "schedule asks for hold_accumulators, which this loop cannot take";
  if (wants.holdAccumulators && (wants.pingPong || wants.multicastBlocks != 0))
    return "schedule asks for hold_accumulators with ping_pong or multicast, which it does not "
           "combine with";
  return "";
}

} // namespace tessera::sm90
