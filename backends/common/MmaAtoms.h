//===- MmaAtoms.h - The atom every backend has ------------------*- C++ -*-===//
//
// This file declares the SIMT FMA atom, the fallback every backend lists
// last. Each family of tensor-core atoms is declared by the backend that
// introduced its instruction (sm70, sm80, sm90).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_MMAATOMS_H
#define TESSERA_BACKENDS_COMMON_MMAATOMS_H

#include "contract/Backend.h"

namespace tessera {

/// The SIMT fallback: one fused multiply-add per thread (fma.rn.f32, PTX ISA
/// §9.7.3.6), f16/bf16 inputs converted to f32; takes any tile shape.
const MmaAtom &getSimtFmaAtom();

} // namespace tessera

#endif // TESSERA_BACKENDS_COMMON_MMAATOMS_H
