//===- MmaSync.h - Ampere's ldmatrix + mma.sync.m16n8k16 atoms --*- C++ -*-===//
//
// This file declares the sm80 family's MMA atoms (with their lowering), and
// the A-fragment registers of m16n8k16 that wgmma's register-A form reads in
// the same layout.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM80_MMASYNC_H
#define TESSERA_BACKENDS_SM80_MMASYNC_H

#include <vector>

#include "contract/AtomLowering.h"
#include "contract/Backend.h"

namespace tessera {

/// mma.sync.aligned (PTX ISA §9.7.14.5.8), operands loaded by ldmatrix:
/// m16n8k16 with f16 and bf16 inputs and f32 accumulators, f16 with f16
/// accumulators, m16n8k8 TF32 and m16n8k32 s8/u8 (s32 accumulators, A and B
/// K-major): Ampere and later.
const std::vector<MmaAtom> &getSm80MmaSyncAtoms();

/// mma.sync.aligned.m16n8k32 with FP8 (e4m3, e5m2) inputs and f32
/// accumulators, A and B K-major (PTX ISA §9.7.14.5.8): Ada (sm_89) and
/// later, PTX ISA 8.4.
const std::vector<MmaAtom> &getSm89Fp8MmaAtoms();

/// mma.sync.aligned.m8n8k4.f64 (DMMA, PTX ISA §9.7.14.5.1), two per m16n8
/// accumulator tile, operands read from shared memory element by element:
/// Ampere and later.
const MmaAtom &getSm80DmmaAtom();

/// The preference list of a target whose best MMA is Ampere's mma.sync:
/// the mma.sync atoms, FP8's where `withFp8` (sm_89 and later), DMMA, and
/// the SIMT atom every backend falls back to.
std::vector<MmaAtom> getWarpMmaPreference(bool withFp8);

namespace lowering {

/// The four b32 registers of m16n8k16's A (a0..a7) for the 16 x 16 tile
/// (mi, ks) of a warp's rows of an A fragment in the whole-row m16n8
/// layout (each pair of adjacent f16/bf16 slots packed into one).
llvm::SmallVector<mlir::Value> fragmentARegisters(GemmLoweringContext &ctx, const BufferInfo &a,
                                                  int64_t mi, int64_t ks);

} // namespace lowering
} // namespace tessera

#endif // TESSERA_BACKENDS_SM80_MMASYNC_H
