//===- LowerToGPU.cpp - The tile-lower-to-gpu pass ------------------------===//
//
// Lowers each tile.kernel to a gpu.func in the module's gpu.module with the
// kernel lowering (lowering/KernelLowering.h). Each tile.pipelined loop goes
// to the strategy its schedule attribute names, which tile-plan-pipelines
// wrote.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "contract/NvvmOps.h"
#include "lowering/KernelLowering.h"

namespace tessera {
#define GEN_PASS_DEF_TILELOWERTOGPU
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

using tessera::lowering::KernelLowering;

struct LowerToGPU : tessera::impl::TileLowerToGPUBase<LowerToGPU> {
  /// The declared dialects and NVVM (the typed instructions; its header is
  /// NvvmOps.cpp's alone, so it is not named in Passes.td).
  void getDependentDialects(DialectRegistry &registry) const override {
    TileLowerToGPUBase::getDependentDialects(registry);
    tessera::lowering::insertNvvmDialect(registry);
  }
  void runOnOperation() override {
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp kernel) { kernels.push_back(kernel); });
    for (KernelOp kernel : kernels) {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return signalPassFailure();
      KernelLowering lowering(kernel, *backend, cc);
      if (failed(lowering.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
