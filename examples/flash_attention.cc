//===- flash_attention.cc - FlashAttention forward, multi-head ------------===//
//
// FlashAttention-2's forward pass. Each block takes BM query rows of one
// (batch, head) and walks the keys in steps of BN: S = Q K^T in an f32
// accumulator, masked from global row and column indices (keys past Skv,
// and above the diagonal when causal), the online softmax in log2 units
// (running row maximum m of c S, c = scale log2(e), and sum l; P =
// exp2(c S - m), one fused multiply-add an element; O = O alpha + P V),
// O / l and the row's log-sum-exp at the end. With a causal mask the
// key loop stops at the block's last visible key. Grouped-query attention
// reads key head h / (H / Hkv). Sequence lengths of any size: tiles are
// slices of the [batch, seq, heads, dim] tensors, bounds-checked per slice.
//
//   bazel run //examples:flash_attention -- --target=sm_90a --emit=ptx
//   bazel run //examples:flash_attention     # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/flash_attention.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "examples/common/example.h"
#include "examples/online_softmax.h"

namespace tessera::examples {

FlashAttentionConfig FlashAttentionConfig::ForTarget(const std::string& target, DType dtype,
                                                     int64_t headDim, bool causal) {
  FlashAttentionConfig c;
  c.dtype = dtype, c.headDim = headDim, c.causal = causal;
  const bool wide = headDim > 128;
  static const char* const kMmaSync[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
  if (std::find(std::begin(kMmaSync), std::end(kMmaSync), target) != std::end(kMmaSync)) {
    // 8 warps of 16 rows (4 of 16 rows at D = 256): S, P and O of a warp fit
    // in registers without spilling.
    c.bm = wide ? 64 : 128, c.bn = wide ? 32 : 64, c.threads = wide ? 128 : 256;
    // D <= 128: the fastest of the candidates timed on an H200 at sequence
    // 4096 (benchmarks/variants.cc) that ptxas does not spill, as {bm, bn,
    // threads}; on sm_90a each consumer warpgroup holds 64 query rows.
    struct Blocks {
      int64_t bm, bn;
      int threads;
    };
    const bool hopper = target == "sm_90a";
    Blocks pick = hopper          ? Blocks{128, 128, 256}
                  : headDim <= 64 ? (causal ? Blocks{128, 64, 256} : Blocks{64, 64, 128})
                                  : (causal ? Blocks{64, 64, 128} : Blocks{128, 128, 256});
    if (!wide) c.bm = pick.bm, c.bn = pick.bn, c.threads = pick.threads;
    // D of 160 to 256 on sm_90a: FlashAttention-3's warp-specialized form
    // too, two consumer warpgroups of 64 rows and 64 keys a step (spill-free
    // at the consumers' 168 registers up to D = 192; at 256 ptxas spills a
    // few words, which costs less than the 4-warp blocks' mma.sync).
    if (hopper && wide) c.bm = 128, c.bn = 64, c.threads = 256;
  } else if (target == "sm_70" || target == "sm_72") {
    // m8n8k4 quadpairs for f16 over 4 warps: 32 rows; 16 where ptxas
    // spills at 32 (D = 256, causal masks, bf16's FMA gemms).
    c.bm = wide || causal || dtype == bf16 ? 16 : 32, c.bn = wide ? 32 : 64, c.threads = 128;
  } else {
    // FMA (sm_60) and any other target: 16 rows whose row values every
    // thread holds, in 48 KiB of shared memory.
    c.bm = 16, c.bn = wide ? 32 : 64, c.threads = 128;
  }
  return c;
}

std::string FlashAttentionName(const FlashAttentionConfig& c) {
  return absl::StrCat("flash_attention_", c.varlen ? "varlen_" : "",
                      c.dtype == bf16 ? "bf16" : "f16", "_d", c.headDim,
                      c.valueDim && c.valueDim != c.headDim ? absl::StrCat("_v", c.valueDim) : "",
                      c.causal ? "_causal" : "");
}

namespace {

/// V's and O's head dimension.
int64_t ValueDim(const FlashAttentionConfig& c) { return c.valueDim ? c.valueDim : c.headDim; }

/// Where one block's query rows and their keys lie: the sequence's lengths,
/// the block's first row (of the sequence), the keys [0, end) the key loop
/// covers and the tiles of Q, K or V, O and LSE at a row or key of the
/// sequence.
struct BlockRows {
  Index sq = Index(0), skv = Index(0), row0 = Index(0), end = Index(0);
  std::function<TileRef(const Tensor&, Index)> queries, keys;
  std::function<TileRef(Index)> lse;
};

/// One block of the forward pass over `rows`: Q's tile, the key loop with
/// the online softmax, O and the LSE.
void ForwardBlock(KernelBuilder& T, const FlashAttentionConfig& c, const Tensor& Q, const Tensor& K,
                  const Tensor& V, const Tensor& O, const Tensor& LSE, const Scalar& scale,
                  const BlockRows& rows) {
  const int64_t D = c.headDim, DV = ValueDim(c), BM = c.bm, BN = c.bn;
  auto qs = T.AllocShared({BM, D}, c.dtype, "qs");
  auto ks = T.AllocShared({BN, D}, c.dtype, "ks"), vs = T.AllocShared({BN, DV}, c.dtype, "vs");
  auto s = T.AllocFragment({BM, BN}, f32, "s"), p = T.AllocFragment({BM, BN}, c.dtype, "p");
  OnlineSoftmax state = AllocOnlineSoftmax(T, BM, DV, scale);
  const Buffer &o = state.o, &m = state.m, &mx = state.mx, &l = state.l;
  T.Copy(rows.queries(Q, rows.row0), qs);
  T.Clear(o);
  T.Clear(l);
  T.Fill(m, -kInf);
  T.Pipelined(CeilDiv(rows.end, Index(BN)), c.stages, [&](Index j) {
    Index col0 = j * BN;
    T.Copy(rows.keys(K, col0), ks);
    T.Copy(rows.keys(V, col0), vs);
    T.Clear(s);
    T.Gemm(qs, ks, s, /*transposeA=*/false, /*transposeB=*/true);
    MaskScores(T, s, BM, BN, rows.row0, col0, rows.sq, rows.skv, c.causal, -kInf);
    OnlineSoftmaxStep(T, state, s, p, vs, c.dtype, BN);
  });
  // A row that saw no key: O = 0, LSE = +inf (FlashAttention-2's
  // convention, so a backward pass's exp(S - LSE) is 0).
  FinishOnlineSoftmax(T, state, kInf);
  T.Copy(o, rows.queries(O, rows.row0));
  T.Copy(mx, rows.lse(rows.row0));
}

/// Keys [0, end) that query rows [row0, row0 + bm) see: all, or up to the
/// last row's diagonal, clamped at 0 without a negative index: end =
/// max(0, min(Skv, row0 + bm + Skv - Sq)).
Index VisibleKeys(const FlashAttentionConfig& c, const Index& sq, const Index& skv,
                  const Index& row0) {
  if (!c.causal) return skv;
  Index shifted = Min(sq + skv, row0 + c.bm + skv);
  return shifted - Min(shifted, sq);
}

/// The fixed-length batch: Q [B, Sq, H, D], K and V [B, Skv, Hkv, D].
void FixedLengthForward(KernelBuilder& T, const FlashAttentionConfig& c) {
  const int64_t D = c.headDim, BM = c.bm;
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), Skv = Dim::Dynamic("Skv");
  Dim H = Dim::Dynamic("H"), Hkv = Dim::Dynamic("Hkv");
  auto Q = T.Tensor("Q", {B, Sq, H, D}, c.dtype);
  auto K = T.Tensor("K", {B, Skv, Hkv, D}, c.dtype);
  auto V = T.Tensor("V", {B, Skv, Hkv, ValueDim(c)}, c.dtype);
  auto O = T.Tensor("O", {B, Sq, H, ValueDim(c)}, c.dtype), LSE = T.Tensor("LSE", {B, H, Sq}, f32);
  // The scale must be positive: the row maximum is taken before scaling.
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({CeilDiv(Sq, BM), H, B}, c.threads, [&](Index bx, Index h, Index b) {
    // Query head h reads key head h / (H / Hkv): a launch whose key heads do
    // not divide the query heads is refused, naming both.
    RequireHeadGroups(T, Q, K);
    BlockRows rows;
    rows.sq = Q.dim(1), rows.skv = K.dim(1), rows.row0 = bx * BM;
    Index kvHead = h / (Q.dim(2) / K.dim(2));
    rows.end = VisibleKeys(c, rows.sq, rows.skv, rows.row0);
    rows.queries = [&](const Tensor& t, Index row) { return t.Tile(b, row, h, 0).Along({1, 3}); };
    rows.keys = [&](const Tensor& t, Index key) { return t.Tile(b, key, kvHead, 0).Along({1, 3}); };
    rows.lse = [&](Index row) { return LSE.Tile(b, h, row).Along({2}); };
    ForwardBlock(T, c, Q, K, V, O, LSE, scale, rows);
  });
}

/// The packed batch: sequence b's queries are rows [CuQ[b], CuQ[b + 1]) of
/// Q [Tq, H, D] and its keys rows [CuK[b], CuK[b + 1]) of K and V [Tk,
/// Hkv, D]; the grid covers the longest sequence (max_seqlen_q) and B + 1
/// sequences (CuQ's length; the last is empty). Q's tile and the outputs end
/// at the sequence's end; K and V tiles are whole (a bulk tensor copy on
/// sm_90a) and the keys past the sequence's end are masked, so their P is
/// exactly 0.
void VarlenForward(KernelBuilder& T, const FlashAttentionConfig& c) {
  const int64_t D = c.headDim, BM = c.bm;
  Dim Tq = Dim::Dynamic("Tq"), Tk = Dim::Dynamic("Tk"), B1 = Dim::Dynamic("B1");
  Dim H = Dim::Dynamic("H"), Hkv = Dim::Dynamic("Hkv");
  auto Q = T.Tensor("Q", {Tq, H, D}, c.dtype);
  auto K = T.Tensor("K", {Tk, Hkv, D}, c.dtype), V = T.Tensor("V", {Tk, Hkv, ValueDim(c)}, c.dtype);
  auto O = T.Tensor("O", {Tq, H, ValueDim(c)}, c.dtype), LSE = T.Tensor("LSE", {H, Tq}, f32);
  auto CuQ = T.Tensor("CuQ", {B1}, i32), CuK = T.Tensor("CuK", {B1}, i32);
  Dim maxSq = T.SizeArg("max_seqlen_q");
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({CeilDiv(maxSq, BM), H, B1}, c.threads, [&](Index bx, Index h, Index b) {
    RequireHeadGroups(T, Q, K, /*headAxis=*/1);
    Index kvHead = h / (Q.dim(1) / K.dim(1));
    // Past the last sequence CuQ and CuK read 0: an empty sequence.
    Index qStart = CuQ(b), qStop = Max(CuQ(b + 1), qStart);
    Index kStart = CuK(b), kStop = Max(CuK(b + 1), kStart);
    BlockRows rows;
    rows.sq = qStop - qStart, rows.skv = kStop - kStart, rows.row0 = bx * BM;
    // No step for a block past its sequence's rows: its keys are multiplied
    // by 0 (a loop under a branch would not be warp-specialized).
    Index active = Min(rows.sq - Min(rows.sq, rows.row0), Index(1));
    rows.end = VisibleKeys(c, rows.sq, rows.skv, rows.row0) * active;
    rows.queries = [&](const Tensor& t, Index row) {
      return t.Tile(qStart + row, h, 0).Along({0, 2}).Until(qStop);
    };
    rows.keys = [&](const Tensor& t, Index key) {
      return t.Tile(kStart + key, kvHead, 0).Along({0, 2});
    };
    rows.lse = [&](Index row) { return LSE.Tile(h, qStart + row).Along({1}).Until(qStop); };
    ForwardBlock(T, c, Q, K, V, O, LSE, scale, rows);
  });
}

}  // namespace

Kernel FlashAttention(const FlashAttentionConfig& c, const std::string& name) {
  KernelBuilder T(name.empty() ? FlashAttentionName(c) : name);
  RequireHeadDim(T, c.headDim);
  if (c.valueDim) RequireHeadDim(T, c.valueDim);
  if (c.varlen)
    VarlenForward(T, c);
  else
    FixedLengthForward(T, c);
  return T.Build();
}

Example FlashAttentionExample() {
  Example example{"flash_attention", [](const std::string& target) {
                    return FlashAttention(FlashAttentionConfig::ForTarget(target),
                                          "flash_attention");
                  }};
  example.knobs = {{"dtype", "f16 or bf16"},
                   {"head-dim", "64, 128 or 256 (any multiple of 16 compiles)"},
                   {"value-dim", "V's and O's head dimension (default: head-dim)"},
                   {"causal", "mask keys after the query (true or false)"},
                   {"varlen", "a packed batch of sequences of different lengths (true or false)"},
                   {"bm", "query rows per block"},
                   {"bn", "keys per step of the key loop"},
                   {"stages", "stages of the key loop"},
                   {"threads", "threads per block"}};
  // With knobs the kernel is flash_attention_<dtype>_d<D>[_causal], whose
  // workloads (conformance and benchmark shapes) fit its interface.
  example.configure = [](const std::string& target, KnobValues& knobs) {
    DType dtype = knobs.Float16("dtype", f16);
    int64_t headDim = knobs.Int("head-dim", 128);
    FlashAttentionConfig c =
        FlashAttentionConfig::ForTarget(target, dtype, headDim, knobs.Bool("causal", false));
    c.varlen = knobs.Bool("varlen", false);
    c.valueDim = knobs.Int("value-dim", 0);
    ApplyTileKnobs(knobs, c);
    return FlashAttention(c);
  };
  return example;
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::FlashAttentionExample())
