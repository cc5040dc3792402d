//===- mla_decode.cc - Multi-head latent attention for decode ------------===//
//
// DeepSeek-V3's attention at decode time, in the absorbed form: the key and
// value projections are folded into the queries and the output, so every
// query head attends over the same latent cache, 512 latent plus 64 rotary
// dimensions a token. A block takes a group of query heads of one sequence
// as its tile's rows and one part of the keys (split as flash-decoding
// splits them, examples/flash_decoding.cc), so the cache is read once per
// group of heads, not once per head:
//
//   S  = Q[:, :512] K[:, :512]^T + Q[:, 512:] K[:, 512:]^T   (two GEMMs)
//   O += softmax(S) K[:, :512]                              (the latent is V)
//
// The latent tile of a step is both the keys' first part and the values.
// The cache is paged (vLLM's block table, 64 rows a page); the combine is
// flash-decoding's at the latent width.
//
//   bazel run //examples:mla_decode -- --target=sm_90a --emit=ptx
//   bazel run //examples:mla_decode     # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/mla_decode.h"

#include "examples/common/example.h"
#include "examples/flash_decoding.h"
#include "examples/online_softmax.h"

namespace tessera::examples {
MlaDecodeConfig MlaDecodeConfig::ForTarget(const std::string& target) {
  // 16 heads on 4 warps of mma.sync (O is 64 registers a thread); steps
  // that fit each target's shared memory beside Q's 18 KiB. 64 heads on 8
  // warps (benchmarks/variants.cc: O's rows over two warps, its columns
  // over four) read the cache a quarter as often for 128 heads, but leave
  // three quarters of the rows empty for DeepSeek's 16 a GPU; wgmma would
  // need two warpgroups splitting O's columns, which the layouts do not do.
  MlaDecodeConfig c;
  c.heads = 16;
  c.threads = 128;
  const bool small = target == "sm_60" || target == "sm_61";  // 48 KiB a block
  c.bn = target == "sm_90a" ? 64 : small ? 16 : 32;
  c.stages = target == "sm_80" ? 3 : 2;
  return c;
}

int64_t MlaDecodeMaxParts(const std::string& target) {
  // 64 KiB of partial outputs where a block has 96 KiB or more.
  return target == "sm_70" || target == "sm_80" || target == "sm_90a" ? 32 : 16;
}

Kernel MlaDecode(const MlaDecodeConfig& c, const std::string& name) {
  const int64_t L = c.latentDim, R = c.ropeDim, BM = c.heads, BN = c.bn;
  KernelBuilder T(name);
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), H = Dim::Dynamic("H");
  Dim P = Dim::Dynamic("P");
  auto Q = T.Tensor("Q", {B, Sq, H, L + R}, c.dtype);
  auto KV = T.Tensor("KV", {Dim::Dynamic("PAGES"), c.pageSize, L + R}, c.dtype);
  auto Table = T.Tensor("Table", {B, Dim::Dynamic("MP")}, i32);
  auto Lens = T.Tensor("Lens", {B}, i32);
  auto OP = T.Tensor("OP", {B, Sq, H, P, L}, f32), LSEP = T.Tensor("LSEP", {B, Sq, P, H}, f32);
  // The scale must be positive: the row maximum is taken before scaling.
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({P, CeilDiv(H, BM), B}, c.threads, [&](Index part, Index hb, Index b) {
    // A step's keys lie in one page.
    T.Require(Index(c.pageSize % BN) == Index(0));
    Index sq = Q.dim(1), heads = Q.dim(2), skv = Lens(b), parts = OP.dim(3), h0 = hb * BM;
    auto qn = T.AllocShared({BM, L}, c.dtype, "qn"), qr = T.AllocShared({BM, R}, c.dtype, "qr");
    auto kn = T.AllocShared({BN, L}, c.dtype, "kn"), kr = T.AllocShared({BN, R}, c.dtype, "kr");
    auto s = T.AllocFragment({BM, BN}, f32, "s"), p = T.AllocFragment({BM, BN}, c.dtype, "p");
    OnlineSoftmax state = AllocOnlineSoftmax(T, BM, L, scale);
    const Buffer &o = state.o, &m = state.m, &mx = state.mx, &l = state.l;
    auto token = [&](Index t) {
      // This token's keys [0, end), and this block's steps of them.
      Index end = skv - sq + t + 1;
      DecodePart keys = DecodePartOf(Max(end, Index(0)), part, parts, BN);
      Index steps = keys.steps, perPart = keys.perPart, first = keys.first;
      // Rows past the last head read zero and are not written.
      T.Copy(Q.Tile(b, t, h0, 0).Along({2, 3}).Until(heads), qn);
      T.Copy(Q.Tile(b, t, h0, L).Along({2, 3}).Until(heads), qr);
      T.Clear(o);
      T.Clear(l);
      T.Fill(m, -kInf);
      T.Pipelined(Min(perPart, steps - first), c.stages, [&](Index j) {
        Index col0 = (first + j) * BN;
        // Rows of the last page past the sequence's end read as zero: a
        // reused page may hold anything there (NaN times P's 0 is NaN).
        Index page = Table(b, col0 / c.pageSize), row = col0 % c.pageSize;
        Index rowsEnd = row + (end - col0);
        T.Copy(KV.Tile(page, row, 0).Along({1, 2}).Until(rowsEnd), kn);
        T.Copy(KV.Tile(page, row, L).Along({1, 2}).Until(rowsEnd), kr);
        T.Clear(s);
        T.Gemm(qn, kn, s, /*transposeA=*/false, /*transposeB=*/true);
        T.Gemm(qr, kr, s, /*transposeA=*/false, /*transposeB=*/true);
        MaskKeysPastEnd(T, s, BM, BN, col0, end);
        OnlineSoftmaxStep(T, state, s, p, kn, c.dtype, BN);
      });
      // An empty part: output 0, LSE -infinity (weight 0 in the combine).
      FinishOnlineSoftmax(T, state, -kInf);
      T.Copy(o, OP.Tile(b, t, h0, part, 0).Along({2, 4}).Until(heads));
      T.Copy(mx, LSEP.Tile(b, t, part, h0).Along({3}).Until(heads));
    };
    // One token: the key loop at the kernel's top level (on sm_90a it may
    // then be warp-specialized, with TMA loads).
    if (c.oneToken) {
      T.Require(Q.dim(1) == Index(1));
      token(Index(0));
    } else {
      T.Serial(sq, token);
    }
  });
  return T.Build();
}

Example MlaDecodeCombineExample() {
  return {"mla_decode_combine", [](const std::string& target) {
            return FlashDecodingCombine(bf16, MlaDecodeConfig().latentDim, "mla_decode_combine",
                                        MlaDecodeMaxParts(target));
          }};
}

Example MlaDecodeExample() {
  return {"mla_decode",
          [](const std::string& target) { return MlaDecode(MlaDecodeConfig::ForTarget(target)); },
          {MlaDecodeCombineExample()}};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::MlaDecodeExample())
