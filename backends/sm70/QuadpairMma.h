//===- QuadpairMma.h - Volta's mma.sync.m8n8k4 atom -------------*- C++ -*-===//
//
// This file declares the sm70 family's MMA atom, with its lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM70_QUADPAIRMMA_H
#define TESSERA_BACKENDS_SM70_QUADPAIRMMA_H

#include "contract/Backend.h"

namespace tessera {

/// mma.sync.aligned.m8n8k4 with f16 inputs and f32 accumulators (PTX ISA
/// §9.7.14.5.1): the four quadpairs of a warp cover 16 x 16 per k-step of 4.
/// It also takes f16 accumulators (when named), summed in f32 within each
/// gemm.
const MmaAtom &getSm70QuadpairAtom();

/// The same with f16 accumulators, `.f16.f16.f16.f16`: C and D four f16x2
/// registers in the instruction's f16 layout (a row per lane), into which
/// the gemm moves the fragment's accumulators and back (XOR shuffles within
/// each quad).
const MmaAtom &getSm70QuadpairF16Atom();

} // namespace tessera

#endif // TESSERA_BACKENDS_SM70_QUADPAIRMMA_H
