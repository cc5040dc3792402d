//===- Sm70Backend.cpp - The Volta backend (sm_70, sm_72) ----------------===//
//
// This file implements the Volta backend: first-generation tensor cores
// (mma.sync.aligned.m8n8k4, PTX ISA §9.7.14.5.1), shared memory configurable
// up to 96 KiB per block. Capability data from the CUDA C++ Programming
// Guide, "Technical Specifications per Compute Capability".
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "backends/common/Pipelines.h"
#include "backends/common/MmaAtoms.h"
#include "backends/common/NVVMLowering.h"
#include "backends/sm70/QuadpairMma.h"

namespace tessera {
namespace {

/// Volta: 96 KiB shared memory per SM, all of it available to one block.
const TargetCapabilities kSm70 = [] {
  TargetCapabilities caps;
  caps.sharedMemoryPerBlock = 96 * 1024;
  caps.sharedMemoryPerSM = 96 * 1024;
  caps.mmaShapes = {"m8n8k4"};
  caps.hasScopedMemoryOrder = true;
  caps.hasRedF16x2 = true;
  // mma.sync.aligned.m8n8k4 is PTX ISA 6.4.
  caps.ptxFeature = "+ptx64";
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
  /// Volta's tensor cores: mma.sync.aligned.m8n8k4 (PTX ISA §9.7.14.5.1),
  /// four quadpairs per warp each computing an 8 x 8 x 4 product; f16 only
  /// (Volta has no bf16), with f16 accumulators in the f16 C/D form, SIMT
  /// FMA for the rest.
  std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &) const override {
    return {getSm70QuadpairF16Atom(), getSm70QuadpairAtom(), getSimtFmaAtom()};
  }
  std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &) const override {
    return {&common::registerDoubleBufferPipeline(), &common::inOrderPipeline()};
  }
};

} // namespace

void registerSm70Backend(BackendRegistry &registry) {
  registry.add(std::make_unique<Sm70Backend>());
}

} // namespace tessera
