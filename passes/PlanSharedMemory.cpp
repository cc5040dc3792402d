//===- PlanSharedMemory.cpp - Place shared buffers, check the limit -------===//
//
// This file implements tile-plan-shared-memory: every shared buffer gets an
// offset in the block's dynamic shared memory, at the stages tile-plan-
// pipelines gave the buffers its loops stage, and the total is checked
// against the backend's per-block limit at compile time, naming the buffers.
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "passes/Passes.h"
#include "passes/SharedMemoryLayout.h"

#include "mlir/IR/Builders.h"

namespace tessera {
#define GEN_PASS_DEF_TILEPLANSHAREDMEMORY
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

struct PlanSharedMemory : tessera::impl::TilePlanSharedMemoryBase<PlanSharedMemory> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](KernelOp kernel) -> WalkResult {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return WalkResult::interrupt();
      return failed(planKernel(kernel, cc, *backend))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult planKernel(KernelOp kernel, const ComputeCapability &cc, const Backend &backend) {
    const TargetCapabilities &caps = backend.getCapabilities(cc);
    SmallVector<std::pair<AllocSharedOp, int64_t>> buffers;
    addReductionScratch(kernel);
    int64_t total = placeSharedBuffers(kernel, &buffers);
    if (total <= caps.sharedMemoryPerBlock)
      return success();
    InFlightDiagnostic diag = kernel.emitError()
                              << "kernel '" << kernel.getSymName() << "' needs " << total
                              << " bytes of shared memory, over the " << caps.sharedMemoryPerBlock
                              << "-byte per-block limit of " << cc.str() << ": ";
    llvm::interleaveComma(buffers, diag, [&](const auto &entry) {
      auto [alloc, bytes] = entry;
      diag << (alloc.getName() ? *alloc.getName() : StringRef("<unnamed>")) << " ("
           << alloc.getType() << ", " << bytes << " bytes)";
    });
    for (auto &[alloc, bytes] : buffers)
      diag.attachNote(alloc.getLoc())
          << "shared buffer of " << bytes << " bytes allocated here ("
          << (alloc.getName() ? *alloc.getName() : StringRef("<unnamed>")) << ")";
    return failure();
  }
};

} // namespace
