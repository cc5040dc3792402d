//===- Passes.td - Architecture-independent tile passes -----*- tablegen -*-===//
//
// This file declares the passes of the tile level, kept alphabetical. They
// ask the backend named by `tile.target` for limits and preferences and never
// test the architecture's name or number.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_PASSES_PASSES_TD
#define TESSERA_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileLayoutInference : Pass<"tile-layout-inference", "::mlir::ModuleOp"> {
  let summary = "Assigns register distributions to fragments and parallel loops";
  let description = [{
    Gives every `tile.alloc_fragment` and `tile.parallel` a
    `#tile.distribution<threads = T, vector = V>`. Fragments used together
    (in one `tile.parallel`, or copied into each other) share one
    distribution; `V` is the widest that the target's global vector access
    (`TargetCapabilities::globalVectorBytes`) allows for every element type
    in the group and that divides the innermost extent. A fragment used in a
    `tile.parallel` of another shape, or indexed by anything other than the
    loop's own indices, is an error naming the buffer and the loop.
  }];
  let dependentDialects = ["::tessera::tile::TileDialect"];
}

def TileLowerToGPU : Pass<"tile-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lowers tile kernels to gpu.func kernels in a gpu.module";
  let description = [{
    Turns each `tile.kernel` into a `gpu.func` kernel in its own
    `gpu.module`. A tensor argument becomes a global pointer followed by one
    i64 per dynamic dimension; fragments become per-thread arrays (promoted to
    registers by LLVM); shared buffers become views of the block's dynamic
    shared memory at the offsets `tile-plan-shared-memory` assigned. Copies
    move each thread's elements with the widest aligned global access the
    target allows (proved from the offsets' divisibility) and check bounds
    per vector, so tiles that overhang the tensor are handled.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def TilePlanSharedMemory : Pass<"tile-plan-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Places shared buffers in the block's shared memory";
  let description = [{
    Gives every `tile.alloc_shared` an `offset` (aligned to 128 bytes, the
    shared memory line size), records the kernel's total in the
    `tile.shared_memory_bytes` attribute and checks it against the backend's
    per-block limit. Over the limit is a compile-time error that names every
    buffer, its size and the limit.
  }];
  let dependentDialects = ["::tessera::tile::TileDialect"];
}

#endif // TESSERA_PASSES_PASSES_TD
