//===- Sm60Backend.cpp - The Pascal backend (sm_60, sm_61, sm_62) --------===//
//
// This file implements the Pascal backend: no tensor cores, no asynchronous
// copies; GEMMs are FMA on CUDA cores, and on sm_61/sm_62 int8 GEMMs dp4a
// (four byte products per instruction). Capability data from the CUDA C++
// Programming Guide, "Technical Specifications per Compute Capability".
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "backends/common/Pipelines.h"
#include "backends/common/MmaAtoms.h"
#include "backends/common/NVVMLowering.h"
#include "backends/sm60/Dp4a.h"

namespace tessera {
namespace {

/// Pascal GP100 (6.0): 64 KiB shared memory per SM, 48 KiB per block.
const TargetCapabilities kSm60 = [] {
  TargetCapabilities caps;
  caps.sharedMemoryPerBlock = 48 * 1024;
  caps.sharedMemoryPerSM = 64 * 1024;
  // shfl.sync (warp reductions) needs PTX ISA 6.0; LLVM's default for sm_60
  // is older.
  caps.ptxFeature = "+ptx60";
  return caps;
}();

/// Pascal GP10x (6.1, 6.2): 96 KiB shared memory per SM, 48 KiB per block.
const TargetCapabilities kSm61 = [] {
  TargetCapabilities caps = kSm60;
  caps.sharedMemoryPerSM = 96 * 1024;
  return caps;
}();

class Sm60Backend final : public Backend {
public:
  llvm::StringRef getName() const override { return "sm60"; }
  std::vector<ComputeCapability> getServedCapabilities() const override {
    return {{6, 0, false}, {6, 1, false}, {6, 2, false}};
  }
  const TargetCapabilities &getCapabilities(const ComputeCapability &cc) const override {
    return cc.minor == 0 ? kSm60 : kSm61;
  }
  void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
    addCommonNVVMLowering(pm, cc);
  }
  /// Pascal has no tensor cores: gemms are SIMT FMA, except i8/u8 gemms
  /// with i32 accumulators on GP10x (6.1, 6.2), which have dp4a (GP100,
  /// 6.0, does not).
  std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &cc) const override {
    std::vector<MmaAtom> atoms;
    if (cc.minor != 0)
      atoms = getSm61Dp4aAtoms();
    atoms.push_back(getSimtFmaAtom());
    return atoms;
  }
  std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &) const override {
    return {&common::registerDoubleBufferPipeline(), &common::inOrderPipeline()};
  }
};

} // namespace

void registerSm60Backend(BackendRegistry &registry) {
  registry.add(std::make_unique<Sm60Backend>());
}

} // namespace tessera
