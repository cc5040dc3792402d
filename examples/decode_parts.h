//===- decode_parts.h - How many parts a decode step splits keys into -----===//
//
// Flash-decoding and MLA decode split each sequence's keys into P parts
// (examples/flash_decoding.h, examples/mla_decode.h): a block per (part,
// sequence, key head or head group), then a combine. The launcher picks P
// from the problem and the device; this is that choice, apart from the
// kernels so that a launcher without the compiler (the runtime alone) has it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_DECODE_PARTS_H_
#define TESSERA_EXAMPLES_DECODE_PARTS_H_

#include <cstdint>

namespace tessera::examples {

/// The split count P of a decode step: `blocks` blocks a part (sequences x
/// key heads, or x head groups), `keys` keys in the longest sequence,
/// `resident` blocks of the split kernel at once on the device
/// (runtime::LoadedKernel::resident_blocks; the SM count where unknown).
/// The P of least estimated time: blocks x P blocks run in
/// ceil(blocks x P / resident) waves, each as long as a part's keys plus a
/// block's fixed cost (its pipeline's fill and drain, its query tile's load
/// and its partial results' writes, counted as keys); parts of at least
/// `minKeys` keys, at most `maxParts`; the fewest parts among equals.
int64_t DecodeParts(int64_t blocks, int64_t keys, int64_t resident, int64_t maxParts,
                    int64_t minKeys = 256);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_DECODE_PARTS_H_
