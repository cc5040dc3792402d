//===- PlanPipelines.cpp - The tile-plan-pipelines pass -------------------===//
//
// Decides each tile.pipelined loop's schedule before anything is lowered:
// the backend's first pipelining strategy that can run the loop, its
// stages, the MMA groups it keeps in flight and the ping-pong schedule,
// written into the loop as `tile.schedule` (lowering/PipelineSchedule.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

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
      if (!backend || failed(lowering::planPipelines(kernel, *backend, cc)))
        return signalPassFailure();
    }
  }
};

} // namespace
