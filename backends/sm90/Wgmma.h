//===- Wgmma.h - Hopper's wgmma.mma_async atoms -----------------*- C++ -*-===//
//
// This file declares the sm90 family's MMA atoms, with their lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_WGMMA_H
#define TESSERA_BACKENDS_SM90_WGMMA_H

#include <vector>

#include "backends/Backend.h"

namespace tessera {

/// wgmma.mma_async.sync.aligned.m64nNk16 with f16 and bf16 inputs, f32
/// accumulators, B from shared memory through a matrix descriptor and A
/// either through one too (_SS) or from registers (_RS) (PTX ISA
/// §9.7.15.5): sm_90a only.
const std::vector<MmaAtom> &getSm90WgmmaAtoms();

} // namespace tessera

#endif // TESSERA_BACKENDS_SM90_WGMMA_H
