//===- Wgmma.h - Hopper's wgmma.mma_async atoms -----------------*- C++ -*-===//
//
// This file declares the sm90 family's MMA atoms, with their lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_WGMMA_H
#define TESSERA_BACKENDS_SM90_WGMMA_H

#include <vector>

#include "contract/Backend.h"

namespace tessera {

/// wgmma.mma_async.sync.aligned.m64nNkK (PTX ISA §9.7.15.5), B from shared
/// memory through a matrix descriptor and A either through one too (_SS) or
/// from registers (_RS, 16-bit inputs): f16 and bf16 (k16; f16 also with f16
/// accumulators), TF32 (k8), FP8 e4m3/e5m2 (k32, f32 or f16 accumulators),
/// s8/u8 (k32, s32): sm_90a only.
const std::vector<MmaAtom> &getSm90WgmmaAtoms();

} // namespace tessera

#endif // TESSERA_BACKENDS_SM90_WGMMA_H
