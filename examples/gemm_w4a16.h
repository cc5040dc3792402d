//===- gemm_w4a16.h - The 4-bit weight GEMM, for reuse ----------*- C++ -*-===//
//
// Declares the W4A16 GEMM of examples/gemm_w4a16.cc so the conformance
// suite and the benchmarks build it with other knobs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_GEMM_W4A16_H_
#define TESSERA_EXAMPLES_GEMM_W4A16_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// 4-bit weights per int32, and the rows of W that share a scale.
inline constexpr int64_t kW4PerWord = 8;
inline constexpr int64_t kW4Group = 128;

/// The knobs of the W4A16 GEMM: the k-tile `bk` divides the group (128)
/// and is a multiple of 8.
struct W4A16Config {
  int64_t bm = 64, bn = 128, bk = 64;
  int stages = 2, threads = 128;

  static W4A16Config ForTarget(const std::string& target) {
    W4A16Config c;
    if (target == "sm_70") c.threads = 256;
    return c;
  }
};

/// Y (M x N, f16) = X (M x K, f16) times W, whose 4-bit weights Wq (K/8 x
/// N, i32) scaled per 128 rows by S (ceil(K/128) x N, f16) give
/// W[k, n] = (nibble - 8) * S[k / 128, n].
Kernel GemmW4A16(Dim M, Dim N, Dim K, const W4A16Config& config, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_GEMM_W4A16_H_
