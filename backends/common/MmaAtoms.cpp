//===- MmaAtoms.cpp - MMA atoms shared by several backends ----------------===//
//
// This file defines the shared atom tables.
//
//===----------------------------------------------------------------------===//

#include "backends/common/MmaAtoms.h"

namespace tessera {

const std::vector<MmaAtom> &getSm80MmaSyncAtoms() {
  static const auto *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {MmaAtomKind::kWarpMma, "SM80_16x8x16_F32F16F16F32_TN", 16, 8, 16, {"f16"}, 32},
        {MmaAtomKind::kWarpMma, "SM80_16x8x16_F32BF16BF16F32_TN", 16, 8, 16, {"bf16"}, 32},
    };
    // The instruction reads registers: A comes from ldmatrix on a shared
    // buffer, or straight from a fragment in its A layout.
    for (MmaAtom &atom : *list)
      atom.aFromRegisters = true;
    return list;
  }();
  return *atoms;
}

const std::vector<MmaAtom> &getSm90WgmmaAtoms() {
  static const auto *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {MmaAtomKind::kWarpgroupMma, "SM90_64xNx16_F32F16F16F32_SS", 64, 8, 16, {"f16"}, 128},
        {MmaAtomKind::kWarpgroupMma, "SM90_64xNx16_F32BF16BF16F32_SS", 64, 8, 16, {"bf16"}, 128},
        {MmaAtomKind::kWarpgroupMma, "SM90_64xNx16_F32F16F16F32_RS", 64, 8, 16, {"f16"}, 128},
        {MmaAtomKind::kWarpgroupMma, "SM90_64xNx16_F32BF16BF16F32_RS", 64, 8, 16, {"bf16"}, 128},
    };
    for (MmaAtom &atom : *list) {
      atom.maxN = 256;
      atom.readsSharedAsync = true;
      // _RS: A from registers (each warp its 16 rows in the m16n8k16 A
      // layout), B through a descriptor.
      bool rs = llvm::StringRef(atom.name).ends_with("_RS");
      atom.aFromShared = !rs;
      atom.aFromRegisters = rs;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
