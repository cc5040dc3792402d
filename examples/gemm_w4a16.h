//===- gemm_w4a16.h - The 4-bit weight GEMM, for reuse ----------*- C++ -*-===//
//
// Declares the W4A16 GEMM of examples/gemm_w4a16.cc so the conformance
// suite and the benchmarks build it with other knobs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_GEMM_W4A16_H_
#define TESSERA_EXAMPLES_GEMM_W4A16_H_

#include <array>
#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// 4-bit weights per int32, and the rows of W that share a scale.
inline constexpr int64_t kW4PerWord = 8;
inline constexpr int64_t kW4Group = 128;

/// The eight weights of a packed word as exact f32 values, the nibble q at
/// bits 4i to 4i + 3 giving `(q - 8) * 16^e` with e = i for i < 5 and
/// i - 5 above: multiply by UnpackedScale(i) (16^-e, exact) for q - 8.
///
/// Unpacked without integer-to-float conversions (a quarter of the FMA
/// rate): a field kept in place (`w & (0xF << 4e)`) and put into the
/// mantissa of 2^23 (`| 0x4B000000`, the bits of 2^23 as f32) reads as the
/// float 2^23 + q * 16^e; subtracting 2^23 + 8 * 16^e leaves (q - 8) *
/// 16^e. Fields fit the 23-bit mantissa for e <= 4, so nibbles 5 to 7 come
/// from the word shifted right by 20. `(w | 2^23's bits) & (field | 2^23's
/// bits)` is one logical operation with an immediate, so a weight costs a
/// logical operation and an add.
inline std::array<Scalar, kW4PerWord> UnpackW4(const Scalar& word) {
  constexpr int64_t kExponent23 = 0x4B000000;
  Scalar low = word | Scalar(double(kExponent23));
  Scalar high = ShiftRightLogical(word, Scalar(20.0)) | Scalar(double(kExponent23));
  std::array<Scalar, kW4PerWord> weights = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < kW4PerWord; ++i) {
    int e = i < 5 ? i : i - 5;
    int64_t field = int64_t(0xF) << (4 * e);
    weights[i] = Bitcast((i < 5 ? low : high) & Scalar(double(field | kExponent23)), f32) -
                 Scalar(8388608.0 + 8.0 * double(int64_t(1) << (4 * e)));
  }
  return weights;
}

/// 16^-e for nibble i of UnpackW4.
inline double UnpackedScale(int i) { return 1.0 / double(int64_t(1) << (4 * (i < 5 ? i : i - 5))); }

/// States (inside Launch's body) that Wq holds K / 8 words a column and S
/// one row per group of 128 rows, K being X's second dimension.
inline void RequireW4A16Shapes(KernelBuilder& T, const Tensor& X, const Tensor& Wq, const Tensor& S,
                               SourceLoc loc = {}) {
  T.Require(Wq.dim(0) * kW4PerWord == X.dim(1), loc);
  T.Require(And(S.dim(0) * kW4Group >= X.dim(1), (S.dim(0) - 1) * kW4Group < X.dim(1)), loc);
}

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

/// The knobs of the decode form (examples/gemv_w4a16.cc): `rows` of X per
/// block (each block reads its columns' weights once for all of them),
/// `bn` columns, `words` packed rows of Wq (8 * words rows of W) per k-tile,
/// which divide or are a multiple of the 16 words of a group.
struct W4A16DecodeConfig {
  // One row, 2048 rows of W by 32 columns a step (each thread's 32 words
  // share one k-tile's addressing and barrier), eight warps: the fastest of
  // the variants (benchmarks/variants.cc) at M = 1.
  int64_t rows = 1, bn = 32, words = 256;
  int stages = 3, threads = 256;

  static W4A16DecodeConfig ForTarget(const std::string& target) {
    W4A16DecodeConfig c;
    // No cp.async: two stages of half the depth (sm_60's 48 KiB a block).
    if (target == "sm_60" || target == "sm_70") c.stages = 2, c.words = 32;
    return c;
  }
};

/// The same product as GemmW4A16 (same arguments, same Y) for few rows of
/// X (decode: M of 1 to a few), on the CUDA cores: no tile of dequantized
/// weights, each weight unpacked in registers and multiplied into every row.
/// Weights are not rounded to f16 (unlike GemmW4A16's f16 tile).
Kernel GemvW4A16(Dim M, Dim N, Dim K, const W4A16DecodeConfig& config, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_GEMM_W4A16_H_
