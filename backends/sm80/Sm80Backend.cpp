//===- Sm80Backend.cpp - The Ampere backend (sm_80, sm_86, sm_87, sm_89) -===//
//
// This file implements the Ampere backend (and Ada, sm_89, which shares its
// instruction set): cp.async (PTX ISA §9.7.9.25), ldmatrix (§9.7.14.5.15)
// and mma.sync (§9.7.14.5.8: m16n8k16 f16/bf16, m16n8k8 TF32, m16n8k32
// s8/u8; m8n8k4 f64). Capability data from the CUDA C++
// Programming Guide, "Technical Specifications per Compute Capability".
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "backends/common/Pipelines.h"
#include "backends/sm80/AsyncCopyPipeline.h"
#include "backends/common/MmaAtoms.h"
#include "backends/sm80/MmaSync.h"
#include "backends/common/NVVMLowering.h"
#include "llvm/ADT/STLExtras.h"

namespace tessera {
namespace {

TargetCapabilities ampereBase() {
  TargetCapabilities caps;
  caps.hasAsyncCopy = true;
  caps.hasLdmatrix = true;
  caps.hasTanhApprox = true;
  caps.hasScopedMemoryOrder = true;
  caps.hasRedF16x2 = true;
  caps.mmaShapes = {"m16n8k16", "m16n8k8", "m8n8k4"};
  return caps;
}

/// A100 / Orin (8.0, 8.7): 164 KiB shared memory per SM, 163 KiB per block.
const TargetCapabilities kSm80 = [] {
  TargetCapabilities caps = ampereBase();
  caps.sharedMemoryPerBlock = 163 * 1024;
  caps.sharedMemoryPerSM = 164 * 1024;
  return caps;
}();

/// GA10x / AD10x (8.6, 8.9): 100 KiB shared memory per SM, 99 KiB per block.
const TargetCapabilities kSm86 = [] {
  TargetCapabilities caps = ampereBase();
  caps.sharedMemoryPerBlock = 99 * 1024;
  caps.sharedMemoryPerSM = 100 * 1024;
  return caps;
}();

/// AD10x (8.9) adds FP8 mma.sync (m16n8k32 e4m3/e5m2, PTX ISA 8.4).
const TargetCapabilities kSm89 = [] {
  TargetCapabilities caps = kSm86;
  caps.mmaShapes.push_back("m16n8k32.e4m3");
  caps.ptxFeature = "+ptx84";
  return caps;
}();

class Sm80Backend final : public Backend {
public:
  llvm::StringRef getName() const override { return "sm80"; }
  std::vector<ComputeCapability> getServedCapabilities() const override {
    return {{8, 0, false}, {8, 6, false}, {8, 7, false}, {8, 9, false}};
  }
  const TargetCapabilities &getCapabilities(const ComputeCapability &cc) const override {
    if (cc.minor == 9)
      return kSm89;
    return (cc.minor == 0 || cc.minor == 7) ? kSm80 : kSm86;
  }
  void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
    addCommonNVVMLowering(pm, cc);
  }
  std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &cc) const override {
    return getWarpMmaPreference(
        llvm::is_contained(getCapabilities(cc).mmaShapes, "m16n8k32.e4m3"));
  }
  std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &) const override {
    return {&sm80::asyncCopyPipeline(), &common::inOrderPipeline()};
  }
};

} // namespace

std::vector<MmaAtom> getWarpMmaPreference(bool withFp8) {
  std::vector<MmaAtom> atoms = getSm80MmaSyncAtoms();
  if (withFp8) {
    const std::vector<MmaAtom> &fp8 = getSm89Fp8MmaAtoms();
    atoms.insert(atoms.end(), fp8.begin(), fp8.end());
  }
  atoms.push_back(getSm80DmmaAtom());
  atoms.push_back(getSimtFmaAtom());
  return atoms;
}

void registerSm80Backend(BackendRegistry &registry) {
  registry.add(std::make_unique<Sm80Backend>());
}

} // namespace tessera
