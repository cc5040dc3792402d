//===- fp8_gemm.h - The FP8 GEMM example's kernel, for reuse ----*- C++ -*-===//
//
// Declares the FP8 GEMM of examples/fp8_gemm.cc (per-tensor scales, e4m3
// output) so the benchmarks build it with other knobs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_FP8_GEMM_H_
#define TESSERA_EXAMPLES_FP8_GEMM_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The knobs of the FP8 GEMM.
struct Fp8GemmConfig {
  int64_t bm = 128, bn = 128, bk = 64;
  int stages = 3, threads = 128;
  /// Grouped raster order over this many tile rows.
  int64_t group = 8;
  bool persistent = false;
  /// The ping-pong schedule (two tiles per block, KernelBuilder::PingPong)
  /// and clusters of `multicastBlocks` sharing B's tiles
  /// (KernelBuilder::Multicast), where the target has them.
  bool pingpong = false;
  bool multicast = false;
  int64_t multicastBlocks = 2;

  /// sm_90a: 128 x 256 x 128 tiles, two warpgroups, 4 stages, persistent;
  /// elsewhere the defaults above.
  static Fp8GemmConfig ForTarget(const std::string& target);
};

/// D (M x N, e4m3) = e4m3(scale_out * scale_a * scale_b * A B^T), A (M x K)
/// and B (N x K) e4m3; arguments A, B, scale_a, scale_b, scale_out, D.
Kernel Fp8Gemm(Dim M, Dim N, Dim K, const Fp8GemmConfig& c, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_FP8_GEMM_H_
