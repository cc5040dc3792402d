//===- SimtGemm.h - The loop of SIMT-style gemm atoms -----------*- C++ -*-===//
//
// This file declares the loop that atoms computing one accumulator element
// per thread share (the SIMT FMA atom, sm60's dp4a, a plugin's own): A and
// B read from shared memory, each thread's chunks of a distributed C kept
// in its registers, K walked a fixed number of k at a time. The atom says
// how it reads its operands for one step and how it combines them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_SIMTGEMM_H
#define TESSERA_BACKENDS_COMMON_SIMTGEMM_H

#include "contract/AtomLowering.h"

namespace tessera::lowering {

/// The operands of one step at k..k+kStep-1 of row `index` of A or column
/// `index` of B.
using SimtOperandLoader =
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value k, mlir::Value index)>;
/// An accumulator element after one step on operands `a` and `b`.
using SimtUpdate = llvm::function_ref<mlir::Value(llvm::ArrayRef<mlir::Value> a,
                                                  llvm::ArrayRef<mlir::Value> b, mlir::Value acc)>;

/// Lowers `gemm` with `atom`, a SIMT-style atom: fails unless A and B are
/// shared buffers and C a distributed fragment; else, after a barrier, a
/// loop over K in steps of `kStep` (K a multiple; the atom checks) that,
/// for each chunk of C this thread owns, calls `loadA` once and, for each
/// element of the chunk, `loadB` and `update` on the element's register.
mlir::LogicalResult lowerSimtGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                  const MmaAtom &atom, int64_t kStep, SimtOperandLoader loadA,
                                  SimtOperandLoader loadB, SimtUpdate update);

} // namespace tessera::lowering

#endif // TESSERA_BACKENDS_COMMON_SIMTGEMM_H
