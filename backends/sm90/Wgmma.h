//===- Wgmma.h - Hopper's wgmma.mma_async atoms -----------------*- C++ -*-===//
//
// This file declares the sm90 family's MMA atoms, with their lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_WGMMA_H
#define TESSERA_BACKENDS_SM90_WGMMA_H

#include <vector>

#include "contract/AtomLowering.h"
#include "contract/Backend.h"

namespace tessera {

/// wgmma.mma_async.sync.aligned.m64nNkK (PTX ISA §9.7.15.5), B from shared
/// memory through a matrix descriptor and A either through one too (_SS) or
/// from registers (_RS, 16-bit inputs): f16 and bf16 (k16; f16 also with f16
/// accumulators), TF32 (k8), FP8 e4m3/e5m2 (k32, f32 or f16 accumulators),
/// s8/u8 (k32, s32): sm_90a only.
const std::vector<MmaAtom> &getSm90WgmmaAtoms();

namespace lowering {

/// The 64-bit shared-memory matrix descriptors (PTX ISA §9.7.15.5.1.2;
/// tcgen05's, §9.7.16.4.1, keep the fields and add a version) of `steps`
/// operand tiles of swizzled `buffer`, the first starting at (row, col)
/// (`row` a multiple of 8), each next one a k-step (32 bytes) further along
/// K: along the rows when `mnMajor` (16-bit elements only; the buffer's rows
/// run along K, its columns along M or N), along the columns otherwise.
/// `groupStride`: 8-row groups of a K-major operand this many groups apart.
/// `extraHighBits` are or-ed into every descriptor. Only the first is
/// computed in full; the others add their constant byte offset to its
/// start address.
llvm::SmallVector<mlir::Value> sharedMatrixDescriptors(GemmLoweringContext &ctx,
                                                       const BufferInfo &buffer, mlir::Value row,
                                                       mlir::Value col, bool mnMajor, int64_t steps,
                                                       int64_t groupStride = 1,
                                                       uint64_t extraHighBits = 0);

} // namespace lowering

} // namespace tessera

#endif // TESSERA_BACKENDS_SM90_WGMMA_H
