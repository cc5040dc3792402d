//===- Sm100Backend.cpp - The Blackwell backend (sm_100, sm_100a) ---------===//
//
// This file implements the experimental Blackwell datacenter backend
// (B200, compute capability 10.0). It is compiled and assembled in CI, never
// executed here: no Blackwell GPU is lent to this project. Blackwell keeps
// Ampere's warp-level MMA (mma.sync, ldmatrix, PTX ISA §9.7.14) and cp.async,
// Hopper's bulk tensor copies, mbarriers, clusters and stmatrix (so sm90's
// TMA warp-specialized strategy runs its tcgen05 gemms); it has no wgmma
// (sm_90a only). Its own MMA, tcgen05.mma with accumulators in tensor
// memory (PTX ISA §9.7.16), is architecture-specific (sm_100a). Capability
// data from the CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability".
//
//===----------------------------------------------------------------------===//

#include "backends/common/NVVMLowering.h"
#include "backends/common/Pipelines.h"
#include "backends/sm100/CtaPair.h"
#include "backends/sm100/Tcgen05Mma.h"
#include "backends/sm80/AsyncCopyPipeline.h"
#include "backends/sm80/MmaSync.h"
#include "backends/sm90/TmaWarpSpecialized.h"
#include "contract/Backend.h"

namespace tessera {
namespace {

/// B200 (10.0): 228 KiB shared memory per SM, 227 KiB per block; PTX ISA
/// 8.6 is the first with sm_100 and sm_100a.
const TargetCapabilities kSm100 = [] {
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
  caps.mmaShapes = {"m16n8k16", "m16n8k8", "m8n8k4", "m16n8k32.e4m3"};
  caps.ptxFeature = "+ptx86";
  return caps;
}();

class Sm100Backend final : public Backend {
public:
  llvm::StringRef getName() const override { return "sm100"; }
  std::vector<ComputeCapability> getServedCapabilities() const override {
    return {{10, 0, false}, {10, 0, true}};
  }
  const TargetCapabilities &getCapabilities(const ComputeCapability &) const override {
    return kSm100;
  }
  void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
    addCommonNVVMLowering(pm, cc);
  }
  /// tcgen05.mma first where the target is architecture-specific
  /// (sm_100a), then Ampere's warp-level atoms.
  std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &cc) const override {
    std::vector<MmaAtom> atoms;
    if (cc.archSpecific)
      atoms = getSm100Tcgen05Atoms();
    for (const MmaAtom &atom : getWarpMmaPreference(/*withFp8=*/true))
      atoms.push_back(atom);
    return atoms;
  }
  /// The CTA-pair form first where the tile allows it (CtaPair.h).
  std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &) const override {
    return {&sm100::ctaPairPipeline(), &sm90::tmaWarpSpecializedPipeline(),
            &sm80::asyncCopyPipeline(), &common::inOrderPipeline()};
  }
};

} // namespace

void registerSm100Backend(BackendRegistry &registry) {
  registry.add(std::make_unique<Sm100Backend>());
}

} // namespace tessera
