//===- Pipelines.h - The pipelining strategies every target has -*- C++ -*-===//
//
// Strategies that need no special instruction: register double buffering
// (RegisterDoubleBuffer.cpp; targets without cp.async) and the in-order
// loop (InOrderPipeline.cpp; always correct, every backend's last resort).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_PIPELINES_H
#define TESSERA_BACKENDS_COMMON_PIPELINES_H

#include "contract/PipelineStrategy.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

namespace tessera::common {

/// Two shared stages; iteration k loads iteration k + 1's tiles into
/// registers while it computes on stage k mod 2, then stores them to the
/// other stage (CUTLASS's sm70 mainloop). Named "register-double-buffer".
const PipelineStrategy &registerDoubleBufferPipeline();

/// The loop as written: copies, then compute, a barrier between
/// iterations. Runs any loop. Named "in-order".
const PipelineStrategy &inOrderPipeline();

/// Helpers of strategies that carry a loop's tiles through registers
/// (register double buffering, tests/backends/sm75's single-stage prefetch).
/// This thread's share of the tiles that the copies in `ahead` bring in
/// iteration `iteration` of `loop`, loaded from global memory into
/// registers: one value per copy, in body order. The lowering's value map
/// is left as it was.
llvm::SmallVector<mlir::Value>
loadIterationToRegisters(lowering::PipelineLoweringContext &kl, tile::PipelinedOp loop,
                         const llvm::SmallPtrSetImpl<mlir::Operation *> &ahead,
                         mlir::Value iteration);
/// Stores `tiles` (loadIterationToRegisters') into stage `stage` of the
/// copies' shared buffers; the next barrier is not elided.
void storeRegistersToStage(lowering::PipelineLoweringContext &kl, tile::PipelinedOp loop,
                           const llvm::SmallPtrSetImpl<mlir::Operation *> &ahead,
                           llvm::ArrayRef<mlir::Value> tiles, mlir::Value stage);

} // namespace tessera::common

#endif // TESSERA_BACKENDS_COMMON_PIPELINES_H
