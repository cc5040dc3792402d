//===- MmaAtoms.h - MMA atoms shared by several backends --------*- C++ -*-===//
//
// This file declares the instruction atoms more than one architecture
// family has, as data (CuTe-style names), so each backend lists them in its
// own order of preference without repeating them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_MMAATOMS_H
#define TESSERA_BACKENDS_COMMON_MMAATOMS_H

#include <vector>

#include "backends/Backend.h"

namespace tessera {

/// mma.sync.aligned.m16n8k16 with f16 and bf16 inputs and f32 accumulators
/// (PTX ISA §9.7.14.5.8), operands loaded by ldmatrix: Ampere and later.
const std::vector<MmaAtom> &getSm80MmaSyncAtoms();

/// wgmma.mma_async.sync.aligned.m64nNk16 with f16 and bf16 inputs, f32
/// accumulators, B from shared memory through a matrix descriptor and A
/// either through one too (_SS) or from registers (_RS) (PTX ISA
/// §9.7.15.5): sm_90a only.
const std::vector<MmaAtom> &getSm90WgmmaAtoms();

} // namespace tessera

#endif // TESSERA_BACKENDS_COMMON_MMAATOMS_H
