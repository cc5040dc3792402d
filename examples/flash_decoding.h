//===- flash_decoding.h - Split-KV attention for decode ---------*- C++ -*-===//
//
// Declares the two kernels of examples/flash_decoding.cc (the split pass
// and the combine) and their knobs, for the workloads and the benchmarks.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_FLASH_DECODING_H_
#define TESSERA_EXAMPLES_FLASH_DECODING_H_

#include <cstdint>
#include <limits>
#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The split pass's knobs.
struct FlashDecodingConfig {
  /// Q, K, V and O's type (f16 or bf16) and the head dimension.
  DType dtype = f16;
  int64_t headDim = 128;
  /// Query heads per block: the heads that share one key head (H / Hkv)
  /// must fit (a precondition); the rest of the tile's rows idle.
  int64_t heads = 16;
  /// Keys per step of the key loop, its stages, and the block's threads.
  int64_t bn = 64;
  int stages = 4, threads = 128;
  /// A kernel for one new token (Sq = 1, a precondition), without the loop
  /// over tokens.
  bool oneToken = false;
  /// New tokens a pass over the keys serves (each with its own query tile
  /// and online softmax): Sq tokens read the keys and values
  /// ceil(Sq / tokensPerPass) times.
  int64_t tokensPerPass = 4;
  /// Rows of a page of the paged cache (a multiple of `bn`), or 0 for
  /// contiguous K and V.
  int64_t pageSize = 0;

  static FlashDecodingConfig ForTarget(const std::string& target);
};

/// A decode block's share of a token's keys: the token sees `keys` keys in
/// steps of `bn`, the steps split into `parts` runs of `perPart`, and part
/// `part` starts at step `first` (its count: Min(perPart, steps - first)).
struct DecodePart {
  Index steps, perPart, first;
};
inline DecodePart DecodePartOf(const Index& keys, const Index& part, const Index& parts,
                               int64_t bn) {
  Index steps = CeilDiv(keys, Index(bn)), perPart = CeilDiv(steps, parts);
  return {steps, perPart, Min(steps, part * perPart)};
}

/// Scores of keys at or past `end` to -infinity in the step of `bn` keys
/// from `col0` (only a token's last step holds any): S is [rows, bn].
inline void MaskKeysPastEnd(KernelBuilder& T, const Buffer& s, int64_t rows, int64_t bn,
                            const Index& col0, const Index& end) {
  T.If(col0 + bn > end, [&] {
    T.Parallel({rows, bn}, [&](Index i, Index k) {
      s(i, k) = Select(ToScalar(k, i32) < ToScalar(end - col0, i32), s(i, k),
                       -std::numeric_limits<double>::infinity());
    });
  });
}

/// The most splits the combine takes (the P of the partial results).
inline constexpr int64_t kMaxDecodingSplits = 64;

/// The split pass: for Q [B, Sq, H, D] (Sq new tokens, each seeing the keys
/// up to its own position: key j for j <= Skv - Sq + s), K and V [B, Skv,
/// Hkv, D], each block takes one key head of one sequence, all H / Hkv
/// query heads that share it, and one of P parts of the keys (P, the
/// splits, is the extent of the partial results: the launcher chooses it,
/// see examples/decode_parts.h): OP [B, Sq, H, P, D] (f32)
/// gets each part's normalized output, LSEP [B, Sq, P, H] (f32) its natural
/// log-sum-exp (-infinity for a part with no key). With one part and one
/// new token (P = 1, Sq = 1) the pass writes the final O [B, Sq, H, D]
/// (`dtype`) and LSE [B, Sq, H] (f32) itself, as the combine would, and the
/// launcher skips the combine.
/// Arguments: Q, K, V, OP, LSEP, O, LSE, scale (a positive f32). Paged
/// (config.pageSize): K and V are page pools [pages, pageSize, Hkv, D], and
/// Table [B, max pages] (i32: the sequence's pages in order) and Lens [B]
/// (i32: its length, Skv) follow V; a sequence shorter than Sq leaves its
/// first tokens with no key (O = 0).
Kernel FlashDecoding(const FlashDecodingConfig& c, const std::string& name = "flash_decoding");

/// The combine: O [B, Sq, H, D] (`dtype`) and LSE [B, Sq, H] (f32) from the
/// split pass's OP and LSEP, each part weighted by exp(its LSE - the total
/// LSE); a token whose parts are all empty gets O = 0 and LSE +infinity.
/// Arguments: OP, LSEP, O, LSE. At most `maxParts` parts (the partial
/// outputs of one head stay in shared memory: maxParts x headDim x 4 bytes).
Kernel FlashDecodingCombine(DType dtype, int64_t headDim,
                            const std::string& name = "flash_decoding_combine",
                            int64_t maxParts = kMaxDecodingSplits);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_FLASH_DECODING_H_
