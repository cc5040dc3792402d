//===- Sm90Backend.cpp - The Hopper backend (sm_90, sm_90a) --------------===//
//
// This file implements the Hopper backend: the bulk tensor copy engine
// (cp.async.bulk.tensor, PTX ISA §9.7.9.25.5), mbarrier (§9.7.13.15),
// thread block clusters, and on sm_90a warpgroup MMA (wgmma.mma_async,
// §9.7.15). Capability data from the CUDA C++ Programming Guide,
// "Technical Specifications per Compute Capability".
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "backends/common/Pipelines.h"
#include "backends/sm80/AsyncCopyPipeline.h"
#include "backends/sm90/TmaWarpSpecialized.h"
#include "backends/common/MmaAtoms.h"
#include "backends/common/NVVMLowering.h"
#include "backends/sm80/MmaSync.h"
#include "backends/sm90/Wgmma.h"

namespace tessera {
namespace {

/// H100 / H200 (9.0): 228 KiB shared memory per SM, 227 KiB per block.
const TargetCapabilities kSm90 = [] {
  TargetCapabilities caps;
  caps.sharedMemoryPerBlock = 227 * 1024;
  caps.sharedMemoryPerSM = 228 * 1024;
  caps.hasAsyncCopy = true;
  caps.hasLdmatrix = true;
  caps.hasStmatrix = true;
  caps.hasTanhApprox = true;
  caps.hasScopedMemoryOrder = true;
  caps.hasRedF16x2 = true;
  caps.hasRedBf16x2 = true;
  caps.hasBulkTensorCopy = true;
  caps.hasFp8Convert = true;
  caps.hasVectorRedF32 = true;
  caps.hasMbarrier = true;
  caps.hasClusters = true;
  caps.hasGridDependencyControl = true;
  caps.mmaShapes = {"m16n8k16", "m16n8k8", "m8n8k4"};
  // PTX ISA 8.1: the vector reductions (red.global.add.v2/v4.f32).
  caps.ptxFeature = "+ptx81";
  return caps;
}();

/// sm_90a adds the architecture-specific warpgroup MMA and setmaxnreg.
const TargetCapabilities kSm90a = [] {
  TargetCapabilities caps = kSm90;
  caps.hasWarpgroupMma = true;
  // On the H200 a 128 x 256 tile's 128 KiB of partials cost about 14 of its
  // 64-deep k-steps (4.2 MFLOP each).
  caps.streamKFlopsPerPartialByte = 448;
  return caps;
}();

class Sm90Backend final : public Backend {
public:
  llvm::StringRef getName() const override { return "sm90"; }
  std::vector<ComputeCapability> getServedCapabilities() const override {
    return {{9, 0, false}, {9, 0, true}};
  }
  const TargetCapabilities &getCapabilities(const ComputeCapability &cc) const override {
    return cc.archSpecific ? kSm90a : kSm90;
  }
  void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
    addCommonNVVMLowering(pm, cc);
  }
  std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &cc) const override {
    // wgmma first where the architecture-specific target has it; mma.sync
    // covers tiles it cannot (fewer than 64 rows per warpgroup).
    std::vector<MmaAtom> atoms;
    if (getCapabilities(cc).hasWarpgroupMma)
      atoms = getSm90WgmmaAtoms();
    const std::vector<MmaAtom> &mmaSync = getSm80MmaSyncAtoms();
    atoms.insert(atoms.end(), mmaSync.begin(), mmaSync.end());
    atoms.push_back(getSm80DmmaAtom());
    atoms.push_back(getSimtFmaAtom());
    return atoms;
  }
  std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &) const override {
    return {&sm90::tmaWarpSpecializedPipeline(), &sm80::asyncCopyPipeline(),
            &common::inOrderPipeline()};
  }
};

} // namespace

void registerSm90Backend(BackendRegistry &registry) {
  registry.add(std::make_unique<Sm90Backend>());
}

} // namespace tessera
