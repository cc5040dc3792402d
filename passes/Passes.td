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

    A reduction's result over an MMA accumulator, and the 1-D fragments used
    with it, take the accumulator's `row_slice` (each thread holds the rows
    it owns) where they are used only by reductions, fills, 1-D loops over
    their rows, reads at the row in loops over the accumulator and copies to
    a tensor tile (one writer per row); other
    reduction results are `replicated`, with a remark where the source is an
    MMA accumulator.
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
    per vector, so tiles that overhang the tensor are handled. Each
    `tile.pipelined` loop goes to the backend strategy its `tile.schedule`
    names (`tile-plan-pipelines` writes it); a loop without one, or whose
    schedule the loop cannot take, is an error on the loop.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def TilePlanPipelines : Pass<"tile-plan-pipelines", "::mlir::ModuleOp"> {
  let summary = "Decides the schedule and stages of every tile.pipelined loop";
  let description = [{
    Asks the target's backend for its pipelining strategies in order of
    preference (register double buffering, cp.async multi-stage, TMA warp
    specialization, in order). Each strategy says how many copies of the
    loop's staged buffers it keeps; the first that can run the loop with
    them is the loop's, written as a `tile.schedule` attribute
    `{strategy = "<name>", stages = S, in_flight = F[, its own entries]}`,
    and its stage count goes onto the buffers the loop stages. While the
    kernel does not fit the block's shared memory, each loop gives up a
    stage and is decided again. A schedule already on a loop (written by
    hand) is checked, not replaced. Where the backend's first choice cannot
    run a loop that stages copies, a remark names the strategy used instead
    and why. Runs before `tile-plan-shared-memory`, which places the
    buffers, and `tile-lower-to-gpu`, which hands each loop to its strategy.
  }];
  let dependentDialects = ["::tessera::tile::TileDialect"];
}

def TilePlanSharedMemory : Pass<"tile-plan-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Places shared buffers in the block's shared memory";
  let description = [{
    Gives every `tile.alloc_shared` an `offset` (aligned to 128 bytes, the
    shared memory line size) for the stages `tile-plan-pipelines` gave the
    buffers a loop stages, records the kernel's total in the
    `tile.shared_memory_bytes` attribute and checks it against the backend's
    per-block limit. Over the limit is a compile-time error that names every
    buffer, its size and the limit.
  }];
  let dependentDialects = ["::tessera::tile::TileDialect"];
}

#endif // TESSERA_PASSES_PASSES_TD
