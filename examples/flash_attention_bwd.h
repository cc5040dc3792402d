//===- flash_attention_bwd.h - FlashAttention's backward pass ---*- C++ -*-===//
//
// The backward pass of examples/flash_attention.h, deterministic: three
// kernels and no atomics, so the same inputs give bit-identical gradients.
//
//   pre    D = rowsum(dO * O) per query row (f32 [B, H, Sq])
//   dq     per block of query rows, over the key blocks they see:
//          P = exp(scale Q K^T - LSE), dP = dO V^T, dS = P (dP - D),
//          dQ = scale dS K
//   dkdv   per block of key rows, over the query heads of its group and
//          the query blocks that see it: the same P and dS transposed,
//          dV = sum P^T dO, dK = scale sum dS^T Q (GQA: summed over the
//          group's query heads in a fixed order)
//
// P is recomputed from the forward pass's LSE (natural log; +infinity for a
// row that saw no key, which gives P = 0). Each kernel recomputes the scores
// it needs instead of sharing dS through memory.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_FLASH_ATTENTION_BWD_H_
#define TESSERA_EXAMPLES_FLASH_ATTENTION_BWD_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// One configuration of the backward kernels.
struct FlashAttentionBwdConfig {
  /// Q, K, V, O, dO and the gradients' type (f16 or bf16) and head dimension.
  DType dtype = f16;
  int64_t headDim = 128;
  /// Query row i sees key j only when j <= i + Skv - Sq (as the forward).
  bool causal = false;
  /// Query rows and key rows per block (dq: bm query rows a block, bn keys a
  /// step; dkdv: bn key rows a block, bm query rows a step), the loops'
  /// stages and the blocks' threads.
  int64_t bm = 64, bn = 64;
  int stages = 2, threads = 128;
  /// A packed batch of sequences of different lengths (FlashAttention's
  /// varlen form; see FlashAttention's `varlen`).
  bool varlen = false;

  /// The knobs for a target: mma.sync and wgmma targets 64 x 64 blocks over
  /// 4 warps (one warpgroup on sm_90a), sm_70 32 and the FMA targets 16.
  static FlashAttentionBwdConfig ForTarget(const std::string& target, DType dtype = f16,
                                           int64_t headDim = 128, bool causal = false);
};

/// The kernels' entry names: "<base>_pre", "<base>_dq" and "<base>" (dK and
/// dV), base "flash_attention_bwd_[varlen_]<dtype>_d<D>[_causal]".
std::string FlashAttentionBwdName(const FlashAttentionBwdConfig& c);

/// D [B, H, Sq] (f32) = rowsum(dO * O) for O and dO [B, Sq, H, D].
/// Arguments: O, dO, D.
Kernel FlashAttentionBwdPre(const FlashAttentionBwdConfig& c, const std::string& name);

/// dQ [B, Sq, H, D]. Arguments: Q, K, V, dO, LSE [B, H, Sq], D [B, H, Sq],
/// dQ and `scale` (the forward's, positive).
Kernel FlashAttentionBwdDq(const FlashAttentionBwdConfig& c, const std::string& name);

/// dK and dV [B, Skv, Hkv, D]. Arguments: Q, K, V, dO, LSE, D, dK, dV and
/// `scale`.
///
/// With `varlen`, the packed batch of the forward's varlen form: Q, O, dO
/// and dQ [Tq, H, D], K, V, dK and dV [Tk, Hkv, D], LSE and D [H, Tq], and
/// the cumulative lengths CuQ and CuK (i32, B + 1 entries) after D:
///   pre   O, dO, D (rows are independent: no lengths)
///   dq    Q, K, V, dO, LSE, D, CuQ, CuK, dQ, max_seqlen_q, scale
///   dkdv  Q, K, V, dO, LSE, D, CuQ, CuK, dK, dV, max_seqlen_k, scale
/// max_seqlen_q and max_seqlen_k (i32) are at least the longest sequence's
/// queries and keys.
Kernel FlashAttentionBwdDkDv(const FlashAttentionBwdConfig& c, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_FLASH_ATTENTION_BWD_H_
