//===- gemm_split_k.h - The split-K GEMM, for reuse -------------*- C++ -*-===//
//
// Declares the split-K GEMM of examples/gemm_split_k.cc so the conformance
// suite and the benchmarks build it with other knobs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_GEMM_SPLIT_K_H_
#define TESSERA_EXAMPLES_GEMM_SPLIT_K_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The knobs of the split-K GEMM: tiles, pipeline, and how many ranges K
/// is split into (the grid's z extent).
struct SplitKConfig {
  int64_t bm = 64, bn = 128, bk = 32;
  int stages = 4, threads = 128;
  int64_t splits = 4;

  /// On sm_90a two consumer warpgroups on 128 x 128 tiles and K split in
  /// two: the fastest of the variants timed at 128 x 8192 x 8192 and
  /// 256 x 4096 x 14336 (RESULTS.md, run 195).
  static SplitKConfig ForTarget(const std::string& target) {
    SplitKConfig c;
    if (target == "sm_90a") c.bm = 128, c.bk = 64, c.threads = 256, c.splits = 2;
    if (target == "sm_70") c.threads = 256;
    return c;
  }
};

/// C (M x N, f32) += A (M x K, f16) B (K x N, f16), K split into
/// `config.splits` ranges whose partial products meet in C by atomic adds.
Kernel GemmSplitK(Dim M, Dim N, Dim K, const SplitKConfig& config, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_GEMM_SPLIT_K_H_
