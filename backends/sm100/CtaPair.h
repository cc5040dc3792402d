//===- CtaPair.h - The CTA-pair (2-SM) form of sm100's gemms ----*- C++ -*-===//
//
// Blackwell's tcgen05.mma.cta_group::2 (PTX ISA §9.7.16.10.9) runs one MMA of
// M = 256 on the tensor cores of two SMs: the blocks of a cluster of two, a
// pair. Each block holds 128 rows of A and half of B's N columns in its own
// shared memory, at the same offsets, and 128 rows of the accumulator in
// its own tensor memory; the even-ranked block (the leader) issues the MMAs
// for both. Each block so loads half of the B tile its M tile shares with
// its peer's, and its tensor cores read half of it.
//
// The form is the strategy `tcgen05-pair` (Tcgen05PairPipeline.cpp): it
// plans and emits the loop, and the tcgen05 atoms (Tcgen05Mma.cpp) read the
// schedule it wrote to issue every tcgen05 instruction of the kernel with
// .cta_group::2 (a kernel never mixes the two groups).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM100_CTAPAIR_H
#define TESSERA_BACKENDS_SM100_CTAPAIR_H

#include "contract/Backend.h"
#include "contract/PipelineStrategy.h"
#include "ir/TileDialect.h"

namespace tessera::sm100 {

/// The name of the CTA-pair strategy in a loop's schedule.
inline constexpr llvm::StringLiteral kCtaPairStrategy = "tcgen05-pair";

/// Whether a loop of `kernel` is scheduled in the CTA-pair form.
bool runsAsCtaPair(tile::KernelOp kernel);

/// Whether `atom` is one of the tcgen05.mma atoms (Tcgen05Mma.cpp).
bool isTcgen05Atom(const MmaAtom &atom);

/// The strategy the sm100 backend lists first (Tcgen05PairPipeline.cpp).
const PipelineStrategy &ctaPairPipeline();

} // namespace tessera::sm100

#endif // TESSERA_BACKENDS_SM100_CTAPAIR_H
