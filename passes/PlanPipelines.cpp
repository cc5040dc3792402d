//===- PlanPipelines.cpp - The tile-plan-pipelines pass -------------------===//
//
// Decides each tile.pipelined loop's schedule before shared memory is
// planned and anything is lowered: the backend's first pipelining strategy
// that can run the loop, its stages, the MMA groups it keeps in flight and
// its own entries, written into the loop as `tile.schedule`
// (lowering/PipelinePlanning.cpp, lowering/PipelineSchedule.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/SharedMemoryLayout.h"

#include "lowering/KernelLowering.h"

namespace tessera {
#define GEN_PASS_DEF_TILEPLANPIPELINES
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

struct PlanPipelines : tessera::impl::TilePlanPipelinesBase<PlanPipelines> {
  void runOnOperation() override {
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp kernel) { kernels.push_back(kernel); });
    for (KernelOp kernel : kernels) {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return signalPassFailure();
      // The decisions weigh where the shared buffers would go (the
      // strategies' own shared memory comes after them).
      addReductionScratch(kernel);
      auto place = [&] { return placeSharedBuffers(kernel); };
      if (failed(lowering::planPipelines(kernel, *backend, cc, place)))
        return signalPassFailure();
    }
  }
};

} // namespace
