//===- online_softmax.h - FlashAttention's online softmax -------*- C++ -*-===//
//
// The online softmax over blocks of keys that the attention examples share
// (examples/flash_attention.cc, examples/flash_decoding.cc): per query row
// a running maximum m (in log2 units) and sum l, the output rescaled as
// each block raises the maximum, and O / l with the row's log-sum-exp at
// the end. Also the checks FlashAttention's forward and backward kernels
// share: the head dimensions they take and grouped key heads.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_ONLINE_SOFTMAX_H_
#define TESSERA_EXAMPLES_ONLINE_SOFTMAX_H_

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "frontend/Tessera.h"

namespace tessera::examples {

/// The attention examples' constants: masked scores are -infinity, and
/// exp(x) is computed as exp2(x log2 e).
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kLog2e = 1.4426950408889634;

/// Refuses, at build, a head dimension `d` the attention GEMMs' k-step
/// cannot take: a multiple of 16 (a tensor-core k-step) from 16 to 256. The
/// error names the size to pad Q, K and V to; `loc` is the caller's line.
inline void RequireHeadDim(KernelBuilder& T, int64_t d, SourceLoc loc = {}) {
  if (d <= 0 || d % 16 != 0 || d > 256)
    T.Error(absl::StrCat("head dimension ", d, " cannot be taken: it must be a multiple of 16 (",
                         "a tensor-core k-step) from 16 to 256; pad Q, K and V to ",
                         std::clamp<int64_t>((d + 15) / 16 * 16, 16, 256)),
            loc);
}

/// Refuses, at launch, key heads that do not divide the query heads (query
/// head h reads key head h / (H / Hkv)) for Q [.., H, D] and K [.., Hkv, D]
/// whose heads are dimension `headAxis`: Hkv > 0 and H % Hkv == 0, the
/// runtime's error naming both. In Launch's body; `loc` is the caller's line.
inline void RequireHeadGroups(KernelBuilder& T, const Tensor& q, const Tensor& k, int headAxis = 2,
                              SourceLoc loc = {}) {
  T.Require(k.dim(headAxis) > Index(0), loc);
  T.Require(q.dim(headAxis) % k.dim(headAxis) == Index(0), loc);
}

/// The fragments of one tile of query rows: O [rows, D] (f32); m, the
/// running row maximum of c S (c = scale log2 e); mx, the block's maximum,
/// then the rescale factor, then the LSE; l, the running row sum, then its
/// inverse. `log2Scale` is c.
struct OnlineSoftmax {
  Buffer o, m, mx, l;
  int64_t rows, headDim;
  Scalar log2Scale;
};

/// Allocates the online softmax's fragments for `rows` query rows and an
/// output `headDim` wide (O, then m, mx and l); its exponent scale is
/// `scale` log2 e.
inline OnlineSoftmax AllocOnlineSoftmax(KernelBuilder& T, int64_t rows, int64_t headDim,
                                        const Scalar& scale) {
  auto o = T.AllocFragment({rows, headDim}, f32, "o");
  auto m = T.AllocFragment({rows}, f32, "m");    // running row maximum (log2 units)
  auto mx = T.AllocFragment({rows}, f32, "mx");  // block maximum, then alpha, then LSE
  auto l = T.AllocFragment({rows}, f32, "l");    // running row sum, then its inverse
  return OnlineSoftmax{o, m, mx, l, rows, headDim, scale * kLog2e};
}

/// One block of keys: S (scores, masked to -infinity) in `s` [rows, bn];
/// rescales O and l to the new maximum, P = exp2(c S - m) (one FMA and one
/// exp2 an element) into `p` (the P V operand's type), and O += P V.
inline void OnlineSoftmaxStep(KernelBuilder& T, const OnlineSoftmax& st, const Buffer& s,
                              const Buffer& p, const Buffer& vs, DType dtype, int64_t bn) {
  const Buffer &o = st.o, &m = st.m, &mx = st.mx, &l = st.l;
  const Scalar log2Scale = st.log2Scale;
  T.ReduceMax(s, mx);
  T.Parallel({st.rows}, [&](Index i) {
    // A row that has seen no key keeps its maximum at 0, not -inf, so
    // that exp2 gives 0 there and never NaN.
    Scalar top = Max(m(i), mx(i) * log2Scale);
    top = Select(top == -kInf, 0.0, top);
    mx(i) = Exp2(m(i) - top);
    l(i) = l(i) * mx(i);
    m(i) = top;
  });
  T.Parallel({st.rows, st.headDim}, [&](Index i, Index d) { o(i, d) = o(i, d) * mx(i); });
  // One fused multiply-add and one exp2 an element.
  T.Parallel({st.rows, bn}, [&](Index i, Index k) { s(i, k) = Exp2(s(i, k) * log2Scale - m(i)); });
  T.ReduceSum(s, l, /*clear=*/false);
  // P apart from the exponentials: on sm_90a the previous block's P V
  // may still be reading P while they run.
  T.Parallel({st.rows, bn}, [&](Index i, Index k) { p(i, k) = Cast(s(i, k), dtype); });
  T.Gemm(p, vs, o);
}

/// The attention mask of one [rows, bn] block of scores `s` for query rows
/// from row0 and keys from col0 of lengths sq and skv: row row0 + i sees key
/// col0 + k when k < skv - col0 and, when causal, k <= i + row0 + skv - sq -
/// col0 (aligned bottom right); other elements become `fill`. Only blocks
/// with a masked element run it (the key tail, and when causal the blocks
/// the diagonal crosses, tested without a negative index); the limit is per
/// row, each element one 32-bit compare (lengths are below 2^31) and one
/// select.
inline void MaskScores(KernelBuilder& T, const Buffer& s, int64_t rows, int64_t bn,
                       const Index& row0, const Index& col0, const Index& sq, const Index& skv,
                       bool causal, double fill) {
  Index left = skv - col0, shift = row0 + skv + 1 - (sq + col0);
  Scalar masked = col0 + bn > skv;
  if (causal) masked = Or(masked, row0 + skv + 1 < sq + col0 + bn);
  T.If(masked, [&] {
    T.Parallel({rows, bn}, [&](Index i, Index k) {
      Scalar limit = ToScalar(left, i32);
      if (causal) {
        Scalar diagonal = ToScalar(i, i32) + ToScalar(shift, i32);
        limit = Select(diagonal < limit, diagonal, limit);
      }
      s(i, k) = Select(ToScalar(k, i32) < limit, s(i, k), fill);
    });
  });
}

/// After the last block: O / l, and the natural LSE = ln(2^m l) in mx. A
/// row that saw no key has l = 0: O = 0 and LSE `emptyLse`.
inline void FinishOnlineSoftmax(KernelBuilder& T, const OnlineSoftmax& st, double emptyLse) {
  const double kLn2 = 0.6931471805599453;
  const Buffer &o = st.o, &m = st.m, &mx = st.mx, &l = st.l;
  T.Parallel({st.rows}, [&](Index i) {
    Scalar seenAny = l(i) > 0.0;
    mx(i) = Select(seenAny, m(i) * kLn2 + Log(l(i)), emptyLse);
    l(i) = Select(seenAny, 1.0 / l(i), 0.0);
  });
  T.Parallel({st.rows, st.headDim}, [&](Index i, Index d) { o(i, d) = o(i, d) * l(i); });
}

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_ONLINE_SOFTMAX_H_
