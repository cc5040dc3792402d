//===- mla_decode.h - DeepSeek's multi-head latent attention decode -*- C++ -*-===//
//
// Declares the split pass of examples/mla_decode.cc and its knobs, for the
// workloads and the benchmarks (the combine is FlashDecodingCombine at the
// latent width).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_MLA_DECODE_H_
#define TESSERA_EXAMPLES_MLA_DECODE_H_

#include <cstdint>
#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The split pass's knobs.
struct MlaDecodeConfig {
  /// Q, the latent cache and O's type (bf16 or f16).
  DType dtype = bf16;
  /// The latent width (the value's dimension) and the rotary part that
  /// follows it in Q and the cache: scores take latent + rope dimensions.
  int64_t latentDim = 512, ropeDim = 64;
  /// Query heads per block (the tile's rows), keys per step, stages,
  /// threads, and the cache's rows per page (a multiple of `bn`).
  int64_t heads = 16, bn = 64;
  int stages = 2, threads = 128;
  int64_t pageSize = 64;
  /// A kernel for one new token (Sq = 1, a precondition), without the loop
  /// over tokens.
  bool oneToken = false;

  static MlaDecodeConfig ForTarget(const std::string& target);
};

/// The most parts the MLA combine takes on `target` (its partial outputs of
/// one head, 512 f32 a part, stay in shared memory).
int64_t MlaDecodeMaxParts(const std::string& target);

/// The split pass of MLA decode in the absorbed form: every query head
/// attends over one latent cache per sequence, KV [pages, pageSize,
/// latent + rope] (the keys are whole rows, the values their first `latent`
/// columns), paged through Table [B, max pages] (i32) with lengths Lens [B]
/// (i32). Q [B, Sq, H, latent + rope] (Sq new tokens, causal among
/// themselves: token t sees keys j <= Lens - Sq + t). The grid is (P parts
/// of the keys, ceil(H / heads) groups of heads, B); each block reads its
/// part of the cache once for all its heads. OP [B, Sq, H, P, latent] (f32)
/// gets each part's normalized output, LSEP [B, Sq, P, H] (f32) its natural
/// LSE. Arguments: Q, KV, Table, Lens, OP, LSEP, scale (a positive f32).
Kernel MlaDecode(const MlaDecodeConfig& c, const std::string& name = "mla_decode");

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_MLA_DECODE_H_
