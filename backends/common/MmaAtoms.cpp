//===- MmaAtoms.cpp - MMA atoms shared by several backends ----------------===//
//
// This file defines the shared atom tables.
//
//===----------------------------------------------------------------------===//

#include "backends/common/MmaAtoms.h"

namespace tessera {

const std::vector<MmaAtom> &getSm80MmaSyncAtoms() {
  static const auto *atoms = new std::vector<MmaAtom>{
      {"SM80_16x8x16_F32F16F16F32_TN", 16, 8, 16, {"f16"}, 32},
      {"SM80_16x8x16_F32BF16BF16F32_TN", 16, 8, 16, {"bf16"}, 32},
  };
  return *atoms;
}

const std::vector<MmaAtom> &getSm90WgmmaAtoms() {
  static const auto *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {"SM90_64xNx16_F32F16F16F32_SS", 64, 8, 16, {"f16"}, 128},
        {"SM90_64xNx16_F32BF16BF16F32_SS", 64, 8, 16, {"bf16"}, 128},
    };
    for (MmaAtom &atom : *list) {
      atom.maxN = 256;
      atom.readsSharedAsync = true;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
