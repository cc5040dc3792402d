//===- flash_attention.h - The FlashAttention example, for reuse -*- C++ -*-===//
//
// Declares the FlashAttention forward kernel of examples/flash_attention.cc
// so the conformance suite and the benchmarks build the same kernel with
// other knobs (type, head dimension, causal mask, blocks).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_FLASH_ATTENTION_H_
#define TESSERA_EXAMPLES_FLASH_ATTENTION_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// What the FlashAttention kernel computes, and its tuning knobs.
struct FlashAttentionConfig {
  /// Q, K, V and O's type (f16 or bf16) and the head dimension (64, 128 or
  /// 256; any multiple of 16 compiles).
  DType dtype = f16;
  int64_t headDim = 128;
  /// V's and O's head dimension where it differs from Q's and K's
  /// (DeepSeek-V3's prefill: 192 for Q K^T, 128 for V); 0: headDim.
  int64_t valueDim = 0;
  /// Query row i sees key j only when j <= i + Skv - Sq (aligned bottom
  /// right, as FlashAttention-2 aligns it when Sq != Skv).
  bool causal = false;
  /// Query rows per block, keys per step of the key loop, its stages and
  /// the block's threads.
  int64_t bm = 128, bn = 64;
  int stages = 2, threads = 128;
  /// A packed batch of sequences of different lengths (FlashAttention's
  /// varlen form) instead of B sequences of one length.
  bool varlen = false;

  /// The knobs for a target and problem: on sm_90a 128 query rows and 128
  /// keys a step over two consumer warpgroups (64 keys above head dimension
  /// 128); on the other mma.sync targets the fastest spill-free blocks timed
  /// per head dimension and mask (64 or 128 rows, 64 or 128 keys, 128 or 256
  /// threads), and above 128 64 rows, 32 keys and 4 warps; sm_70 32 rows of
  /// f16 (16 above 128, causal or bf16); sm_60 (FMA) and other targets 16 rows.
  static FlashAttentionConfig ForTarget(const std::string& target, DType dtype = f16,
                                        int64_t headDim = 128, bool causal = false);
};

/// The kernel's entry name for a configuration, e.g.
/// "flash_attention_bf16_d128_causal", "flash_attention_varlen_f16_d64",
/// "flash_attention_f16_d192_v128" (a value head dimension of its own).
std::string FlashAttentionName(const FlashAttentionConfig& c);

/// Multi-head attention forward, FlashAttention-2's algorithm: for Q
/// [B, Sq, H, D], K and V [B, Skv, Hkv, D] (Hkv divides H; query head h
/// reads key head h / (H / Hkv)), O [B, Sq, H, D] = softmax(scale Q K^T +
/// mask) V and LSE [B, H, Sq] (f32) = the natural log-sum-exp of each row of
/// scale Q K^T + mask (+infinity for a row that sees no key, whose O is 0).
/// Arguments in order: Q, K, V, O, LSE and `scale` (a positive f32). B, Sq,
/// Skv, H and Hkv are dynamic; D is the config's. With `valueDim` Dv, V is
/// [B, Skv, Hkv, Dv] and O [B, Sq, H, Dv].
///
/// With `varlen`, sequences of different lengths packed end to end: Q and O
/// [Tq, H, D], K and V [Tk, Hkv, D], LSE [H, Tq]; CuQ and CuK (i32, B + 1
/// entries each) their cumulative lengths, sequence b's queries rows
/// [CuQ[b], CuQ[b + 1]) and its keys [CuK[b], CuK[b + 1]); the causal mask
/// is aligned bottom right per sequence. Arguments: Q, K, V, O, LSE, CuQ,
/// CuK, max_seqlen_q (i32, at least the longest query sequence: rows past
/// it are not computed) and scale. A block reads and writes only its
/// sequence's rows of Q, O and LSE; the K and V rows past its keys, up to
/// the end of the key tile, are read and masked (their P is 0, but a
/// non-finite value there would reach O as 0 times it).
Kernel FlashAttention(const FlashAttentionConfig& c, const std::string& name = "");

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_FLASH_ATTENTION_H_
