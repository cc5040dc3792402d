//===- PlanSharedMemory.cpp - Place shared buffers, check the limit -------===//
//
// This file implements tile-plan-shared-memory: every shared buffer gets an
// offset in the block's dynamic shared memory, and the total is checked
// against the backend's per-block limit at compile time, naming the buffers.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace tessera {
#define GEN_PASS_DEF_TILEPLANSHAREDMEMORY
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

/// The size of a shared memory line according to NV documentation; buffers
/// start on a line so that vector accesses and swizzles line up.
constexpr int64_t kSharedMemoryLineSizeBytes = 128;

struct PlanSharedMemory : tessera::impl::TilePlanSharedMemoryBase<PlanSharedMemory> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](KernelOp kernel) -> WalkResult {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return WalkResult::interrupt();
      return failed(planKernel(kernel, cc, backend->getCapabilities(cc)))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult planKernel(KernelOp kernel, const ComputeCapability &cc,
                           const TargetCapabilities &caps) {
    int64_t total = 0;
    SmallVector<std::pair<AllocSharedOp, int64_t>> buffers;
    kernel.walk([&](AllocSharedOp alloc) {
      auto type = cast<BufferType>(alloc.getType());
      int64_t bytes = type.getNumElements() * getElementBytes(type.getElementType());
      total = llvm::alignTo(total, kSharedMemoryLineSizeBytes);
      alloc.setOffset(total);
      buffers.emplace_back(alloc, bytes);
      total += bytes;
    });
    OpBuilder builder(kernel);
    kernel->setAttr(kSharedMemoryBytesAttr, builder.getI64IntegerAttr(total));
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
      diag.attachNote(alloc.getLoc()) << "shared buffer of " << bytes << " bytes allocated here";
    return failure();
  }
};

} // namespace
