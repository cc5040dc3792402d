//===- Tcgen05Mma.h - Blackwell's tcgen05.mma atoms -------------*- C++ -*-===//
//
// This file declares the sm100 family's MMA atoms, with their lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM100_TCGEN05MMA_H
#define TESSERA_BACKENDS_SM100_TCGEN05MMA_H

#include <vector>

#include "contract/Backend.h"

namespace tessera {

/// tcgen05.mma.cta_group::1 (PTX ISA §9.7.16.10.9) with M = 128, A and B in
/// swizzled shared memory through matrix descriptors, the accumulator in
/// tensor memory: kind::f16 (f16, bf16; k16) and kind::f8f6f4 (e4m3, e5m2;
/// k32, K-major), f32 accumulators. Architecture-specific: sm_100a. In the
/// CTA-pair form (CtaPair.h) the same atoms issue .cta_group::2, M = 256.
const std::vector<MmaAtom> &getSm100Tcgen05Atoms();

} // namespace tessera

#endif // TESSERA_BACKENDS_SM100_TCGEN05MMA_H
