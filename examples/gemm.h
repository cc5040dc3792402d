//===- gemm.h - The GEMM example's kernel, for reuse ------------*- C++ -*-===//
//
// Declares the GEMM kernel of examples/gemm.cc so the conformance suite and
// the benchmarks build the same kernel with other knobs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_GEMM_H_
#define TESSERA_EXAMPLES_GEMM_H_

#include <optional>
#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The knobs of the GEMM kernel.
struct GemmConfig {
  DType dtype = f16;
  /// The accumulator's type (f32; f16 for f16 and FP8 inputs; f64 for f64;
  /// i32 for i8 and u8), C's type (A's when unset) and the precision of f32
  /// products (Precision::kTF32: tensor cores).
  DType acc = f32;
  std::optional<DType> out;
  Precision precision = Precision::kIEEE;
  bool transposeB = false;
  /// Tile and loop: the fastest of the variants timed on the H200
  /// (benchmarks/RESULTS.md): 4 warps, each a 64 x 64 accumulator.
  int64_t bm = 128, bn = 128, bk = 32;
  int stages = 4, threads = 128;
  /// Grouped raster order over this many tile rows (0: plain order).
  int64_t group = 8;
  /// The ping-pong schedule (KernelBuilder::PingPong): two tiles per block
  /// where the target has it.
  bool pingpong = false;
  /// A persistent kernel (KernelBuilder::Persistent), and with stream-K
  /// (KernelBuilder::StreamK).
  bool persistent = false;
  bool streamK = false;
  /// Clusters of `multicastBlocks` (2, 4 or 8) blocks along x sharing B's
  /// tiles by multicast (KernelBuilder::Multicast; a grid launch, a
  /// persistent or a stream-K one).
  bool multicast = false;
  int64_t multicastBlocks = 2;
  /// Tiles on the M or N edge in a loop body of their own
  /// (KernelBuilder::EdgeLoop; the cp.async strategy).
  bool edgeLoop = false;

  /// The tuned defaults for a target: on sm_90a two warpgroups, each one
  /// 64 x 256 wgmma accumulator (128 x 256 x 64 tiles, 4 stages, 192 KiB of
  /// shared memory), persistent; on sm_70 256 threads;
  /// elsewhere the defaults above.
  static GemmConfig ForTarget(const std::string& target) {
    GemmConfig c;
    if (target == "sm_90a") {
      c.bm = 128, c.bn = 256, c.bk = 64;
      c.stages = 4, c.threads = 256, c.persistent = true;
    } else if (target == "sm_70") {
      // Eight warps of 64 x 32: m8n8k4's operands are not shared between
      // quadpairs, so smaller warp tiles keep the registers in bounds.
      c.threads = 256;
    }
    return c;
  }

  /// ForTarget's schedule for A and B of `dtype` accumulated in `acc`,
  /// written to C of `out`: B stored N x K (the K-major form 8-bit and TF32
  /// tensor cores read; every type alike, so one workload fits all), k-tiles of
  /// the same bytes as the f16 defaults' (128 bytes on sm_90a, 64 elsewhere);
  /// f64 on 64 x 64 tiles of 128 threads (its accumulators take two
  /// registers each).
  static GemmConfig ForType(const std::string& target, DType dtype, DType acc, DType out,
                            Precision precision = Precision::kIEEE) {
    GemmConfig c = ForTarget(target);
    c.dtype = dtype, c.acc = acc, c.out = out, c.precision = precision;
    int64_t bytes = dtype == f64 ? 8 : dtype == f32 ? 4 : (dtype == f16 || dtype == bf16) ? 2 : 1;
    c.transposeB = true;
    c.bk = (target == "sm_90a" ? 128 : 64) / bytes;
    if (dtype == f64) c.bm = c.bn = 64, c.threads = 128, c.persistent = false;
    return c;
  }

  /// The ping-pong schedule's configuration: on sm_90a 128 x 128 x 64 tiles,
  /// one consumer warpgroup each (two m64n128 wgmmas per k-step), 6 stages
  /// (192 KiB), two tiles per block; elsewhere ForTarget's (the schedule
  /// does not apply there).
  static GemmConfig PingPongForTarget(const std::string& target) {
    GemmConfig c = ForTarget(target);
    c.pingpong = true, c.persistent = false;
    if (target == "sm_90a") {
      c.bm = 128, c.bn = 128, c.bk = 64;
      c.stages = 6, c.threads = 128;
    }
    return c;
  }
};

/// C (M x N) = A (M x K) * B (K x N, or N x K when transposed).
Kernel Gemm(Dim M, Dim N, Dim K, const GemmConfig& c, const std::string& name = "gemm");

/// The activation of a fused GEMM epilogue.
enum class Activation { kNone, kGeluTanh, kGeluErf, kRelu, kSilu };

/// C = act(A * B + bias) (+ R): the epilogue runs on the f32 accumulator in
/// registers before the one store of C; `residual` adds a tensor R (M x N)
/// read in the accumulator's own layout.
struct Epilogue {
  Activation activation = Activation::kGeluTanh;
  bool residual = false;
  /// tanh GELU in an equivalent form with fewer multiplies, h + h tanh(h (c1
  /// + c2 h^2)) with h = v / 2, instead of the papers' 0.5 v (1 + tanh(
  /// sqrt(2/pi) (v + 0.044715 v^3))). Fewer instructions, but ptxas spills
  /// in it and it runs slower, so it is off by default.
  bool compactGelu = false;
};

/// The GEMM with a fused epilogue (examples/gemm_bias_gelu.cc).
Kernel GemmEpilogue(Dim M, Dim N, Dim K, const GemmConfig& c, const Epilogue& epilogue,
                    const std::string& name);

/// C = GELU(A * B + bias) with the epilogue fused (tanh or erf GELU).
inline Kernel GemmBiasGelu(Dim M, Dim N, Dim K, const GemmConfig& c, bool tanhForm,
                           const std::string& name) {
  return GemmEpilogue(M, N, K, c,
                      {tanhForm ? Activation::kGeluTanh : Activation::kGeluErf, false}, name);
}

/// Gemm with M, N, K dynamic and N, K promised multiples of 8.
Kernel GemmDynamic(const GemmConfig& c, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_GEMM_H_
