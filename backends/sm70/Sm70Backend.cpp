//===- Sm70Backend.cpp - The Volta backend (sm_70, sm_72) ----------------===//
//
// This file implements the Volta backend: first-generation tensor cores
// (mma.sync.aligned.m8n8k4, PTX ISA §9.7.14.5.1), shared memory configurable
// up to 96 KiB per block. Capability data from the CUDA C++ Programming
// Guide, "Technical Specifications per Compute Capability".
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "backends/common/NVVMLowering.h"

namespace tessera {
namespace {

/// Volta: 96 KiB shared memory per SM, all of it available to one block.
const TargetCapabilities kSm70 = [] {
  TargetCapabilities caps;
  caps.sharedMemoryPerBlock = 96 * 1024;
  caps.sharedMemoryPerSM = 96 * 1024;
  caps.mmaShapes = {"m8n8k4"};
  return caps;
}();

class Sm70Backend final : public Backend {
public:
  llvm::StringRef getName() const override { return "sm70"; }
  std::vector<ComputeCapability> getServedCapabilities() const override {
    return {{7, 0, false}, {7, 2, false}};
  }
  const TargetCapabilities &getCapabilities(const ComputeCapability &) const override {
    return kSm70;
  }
  void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
    addCommonNVVMLowering(pm, cc);
  }
};

} // namespace

void registerSm70Backend(BackendRegistry &registry) {
  registry.add(std::make_unique<Sm70Backend>());
}

} // namespace tessera
