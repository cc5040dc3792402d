//===- decode_parts.cc - How many parts a decode step splits keys into ----===//

#include "examples/decode_parts.h"

#include <algorithm>

namespace tessera::examples {

int64_t DecodeParts(int64_t blocks, int64_t keys, int64_t resident, int64_t maxParts,
                    int64_t minKeys) {
  // A block's cost beyond its keys, in keys: about what one SM streams while
  // a block fills and drains its pipeline and writes its partial results.
  constexpr int64_t kBlockKeys = 256;
  blocks = std::max<int64_t>(1, blocks);
  resident = std::max<int64_t>(1, resident);
  const int64_t most =
      std::clamp<int64_t>(keys / std::max<int64_t>(1, minKeys), 1, std::max<int64_t>(1, maxParts));
  int64_t best = 1, bestCost = -1;
  for (int64_t parts = 1; parts <= most; ++parts) {
    const int64_t waves = (blocks * parts + resident - 1) / resident;
    const int64_t cost = waves * ((keys + parts - 1) / parts + kBlockKeys);
    if (bestCost < 0 || cost < bestCost) best = parts, bestCost = cost;
  }
  return best;
}

}  // namespace tessera::examples
