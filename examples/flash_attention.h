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
  /// Query row i sees key j only when j <= i + Skv - Sq (aligned bottom
  /// right, as FlashAttention-2 aligns it when Sq != Skv).
  bool causal = false;
  /// Query rows per block, keys per step of the key loop, its stages and
  /// the block's threads.
  int64_t bm = 128, bn = 64;
  int stages = 2, threads = 128;

  /// The knobs for a target and problem: on sm_90a 128 query rows and 128
  /// keys a step over two consumer warpgroups; on the other mma.sync targets
  /// the fastest spill-free blocks timed per head dimension and mask (64 or
  /// 128 rows, 64 or 128 keys, 128 or 256 threads); at head dimension 256
  /// 64 rows, 32 keys and 4 warps everywhere; sm_70 32 rows of f16 (16 at
  /// 256, causal or bf16); sm_60 (FMA) and other targets 16 rows.
  static FlashAttentionConfig ForTarget(const std::string& target, DType dtype = f16,
                                        int64_t headDim = 128, bool causal = false);
};

/// The kernel's entry name for a configuration, e.g.
/// "flash_attention_bf16_d128_causal".
std::string FlashAttentionName(const FlashAttentionConfig& c);

/// Multi-head attention forward, FlashAttention-2's algorithm: for Q
/// [B, Sq, H, D], K and V [B, Skv, Hkv, D] (Hkv divides H; query head h
/// reads key head h / (H / Hkv)), O [B, Sq, H, D] = softmax(scale Q K^T +
/// mask) V and LSE [B, H, Sq] (f32) = the natural log-sum-exp of each row of
/// scale Q K^T + mask (+infinity for a row that sees no key, whose O is 0).
/// Arguments in order: Q, K, V, O, LSE and `scale` (a positive f32). B, Sq,
/// Skv, H and Hkv are dynamic; D is the config's.
Kernel FlashAttention(const FlashAttentionConfig& c, const std::string& name = "");

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_FLASH_ATTENTION_H_
