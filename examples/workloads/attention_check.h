//===- attention_check.h - Attention rows against float64 -------*- C++ -*-===//
//
// Private to examples/workloads: the inputs and the float64 check of one
// attention row that the FlashAttention and flash-decoding workloads share.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_WORKLOADS_ATTENTION_CHECK_H_
#define TESSERA_EXAMPLES_WORKLOADS_ATTENTION_CHECK_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/launch.h"

namespace tessera::workloads::internal {

/// What a kernel computes: its element type, head dimension and mask; the
/// values' (and the output's) dimension where it is not d: MLA's 512 of
/// the 576 its scores take (the first dv of a key's columns), or with
/// `ownValues` a V tensor of its own with rows of dv (DeepSeek's prefill:
/// d 192, dv 128).
struct AttentionVariant {
  std::string kernel;
  runtime::DType dtype;
  int64_t d;
  bool causal;
  int64_t dv = 0;
  bool ownValues = false;
};

/// The elements of one key's row of V: dv for a V of its own, else d.
inline int64_t ValueRow(const AttentionVariant& v) { return v.ownValues && v.dv ? v.dv : v.d; }

/// Batch, lengths and heads of one problem.
struct AttentionProblem {
  int64_t b, sq, skv, h, hkv;
};

/// A tensor of 16-bit values uniform in [-1, 1), stored as bits.
struct Bits16 {
  runtime::DType dtype;
  std::vector<uint16_t> bits;
  Bits16(runtime::DType t, std::vector<uint16_t> b) : dtype(t), bits(std::move(b)) {}
  Bits16(runtime::DType t, int64_t count, Random& random) : dtype(t), bits(count) {
    for (uint16_t& x : bits)
      x = t == runtime::DTYPE_F16 ? FloatToHalfBits(random.Uniform())
                                  : FloatToBf16Bits(random.Uniform());
  }
  double operator[](int64_t i) const {
    return dtype == runtime::DTYPE_F16 ? HalfBitsToFloat(bits[i]) : Bf16BitsToFloat(bits[i]);
  }
};

/// Q [B, Sq, H, D], K and V [B, Skv, Hkv, D] (V's rows ValueRow) of random
/// values in [-1, 1) (drawn in that order), on the host and the device, and
/// a scale that is not 1/sqrt(D) (so a kernel that ignores its scale
/// argument fails).
struct AttentionInputs {
  Bits16 q, k, val;
  runtime::DeviceBuffer dq, dk, dv;
  double scale;
  /// The tensor arguments Q, K and V.
  std::vector<runtime::KernelArg> Args(const AttentionVariant& v, const AttentionProblem& p) const;
};
absl::StatusOr<AttentionInputs> MakeAttentionInputs(const AttentionVariant& v,
                                                    const AttentionProblem& p, Random& random);

/// Query row `i` of head `h` of sequence `b` against float64: O [B, Sq, H,
/// D] (16-bit bits) and LSE [B, H, Sq]. Causal rows see keys j <= i + Skv -
/// Sq; a row that sees none has O = 0 and LSE = +infinity.
void CheckAttentionRow(const AttentionVariant& v, const AttentionProblem& p, double scale,
                       const Bits16& q, const Bits16& k, const Bits16& val,
                       const std::vector<uint16_t>& out, const std::vector<float>& lse, int64_t b,
                       int64_t h, int64_t i, Report& report);

/// Rows [cu[b], cu[b + 1]) of a packed tensor of `rowElements` values a
/// row: sequence b of a varlen batch.
Bits16 SequenceRows(const Bits16& packed, const std::vector<int32_t>& cu, size_t b,
                    int64_t rowElements);

/// Every row (b, h, i) of O and LSE, or `sampled` rows drawn from `random`.
void CheckAttentionRows(const AttentionVariant& v, const AttentionProblem& p, double scale,
                        const Bits16& q, const Bits16& k, const Bits16& val,
                        const std::vector<uint16_t>& out, const std::vector<float>& lse,
                        int64_t sampled, Random& random, Report& report);

}  // namespace tessera::workloads::internal

#endif  // TESSERA_EXAMPLES_WORKLOADS_ATTENTION_CHECK_H_
