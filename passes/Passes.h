//===- Passes.h - Architecture-independent tile passes ----------*- C++ -*-===//
//
// This file declares the tile-level passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_PASSES_PASSES_H
#define TESSERA_PASSES_PASSES_H

#include "lowering/TileQueries.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace scf {
class SCFDialect;
} // namespace scf
namespace memref {
class MemRefDialect;
} // namespace memref
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
} // namespace mlir

namespace tessera {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Adds the cleanup that follows the lowering to the gpu dialect (folding,
/// canonicalization, CSE).
void addLoweredCleanup(mlir::OpPassManager &pm);

/// Adds the tile-level pipeline (layout inference, shared memory planning,
/// lowering to the gpu dialect) to `pm`.
void addTilePipeline(mlir::OpPassManager &pm);

} // namespace tessera

#endif // TESSERA_PASSES_PASSES_H
