//===- Dp4a.h - Pascal's dp4a atoms (sm_61, sm_62) --------------*- C++ -*-===//
//
// This file declares the sm60 family's integer MMA atoms, with their
// lowering: dp4a, four byte products and an add per instruction.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM60_DP4A_H
#define TESSERA_BACKENDS_SM60_DP4A_H

#include <vector>

#include "contract/Backend.h"

namespace tessera {

/// dp4a.s32.s32 and dp4a.u32.u32 (PTX ISA, integer arithmetic: dp4a;
/// sm_61+): per thread and accumulator element, the dot product of four bytes of A and four of
/// B along K added to an i32 (wrapping). Per-thread atoms (the SIMT
/// accumulator distribution, operands from shared memory) of
/// shape 1 x 1 x 4, in order of preference: SM61_DP4A_1x1x4_S32S8S8S32,
/// SM61_DP4A_1x1x4_S32U8U8S32.
const std::vector<MmaAtom> &getSm61Dp4aAtoms();

} // namespace tessera

#endif // TESSERA_BACKENDS_SM60_DP4A_H
