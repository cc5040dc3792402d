//===- flash_attention_bwd.cc - FlashAttention's backward pass ------------===//
//
// Three kernels (see flash_attention_bwd.h): the row sums D, then dQ per
// query block and dK, dV per key block, each recomputing P from the
// forward's LSE in log2 units (P = exp2(c S - LSE log2 e), c = scale log2 e:
// one multiply-add and one exp2 an element). A key block's gradients sum the
// query heads of its group and the query blocks in a fixed order, so the
// result does not depend on scheduling: no atomics anywhere.
//
//===----------------------------------------------------------------------===//

#include "examples/flash_attention_bwd.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/common/example.h"
#include "examples/online_softmax.h"

namespace tessera::examples {

FlashAttentionBwdConfig FlashAttentionBwdConfig::ForTarget(const std::string& target, DType dtype,
                                                           int64_t headDim, bool causal) {
  FlashAttentionBwdConfig c;
  c.dtype = dtype, c.headDim = headDim, c.causal = causal;
  static const char* const kMma[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
  if (std::find(std::begin(kMma), std::end(kMma), target) != std::end(kMma)) {
    // Four warps of 16 rows (one warpgroup of 64 on sm_90a); the key block's
    // dK and dV accumulators take 2 x 64 x D / 128 registers a thread.
    c.bm = 64, c.bn = 64, c.threads = 128;
  } else if (target == "sm_70" || target == "sm_72") {
    c.bm = 32, c.bn = 32, c.threads = 128;
  } else {
    c.bm = 16, c.bn = 16, c.threads = 128;
  }
  return c;
}

std::string FlashAttentionBwdName(const FlashAttentionBwdConfig& c) {
  return absl::StrCat("flash_attention_bwd_", c.varlen ? "varlen_" : "",
                      c.dtype == bf16 ? "bf16" : "f16", "_d", c.headDim, c.causal ? "_causal" : "");
}

namespace {

/// The tensors every backward kernel reads: Q, K, V, dO, the forward's LSE
/// and D, with the dynamic dimensions shared; with varlen also the
/// cumulative lengths CuQ and CuK.
struct BwdTensors {
  Dim H, Hkv;
  Tensor Q, K, V, dO, LSE, D;
  std::optional<Tensor> CuQ, CuK;
};

BwdTensors DeclareInputs(KernelBuilder& T, const FlashAttentionBwdConfig& c) {
  const int64_t D = c.headDim;
  Dim H = Dim::Dynamic("H"), Hkv = Dim::Dynamic("Hkv");
  if (c.varlen) {
    Dim Tq = Dim::Dynamic("Tq"), Tk = Dim::Dynamic("Tk"), B1 = Dim::Dynamic("B1");
    BwdTensors t{H,
                 Hkv,
                 T.Tensor("Q", {Tq, H, D}, c.dtype),
                 T.Tensor("K", {Tk, Hkv, D}, c.dtype),
                 T.Tensor("V", {Tk, Hkv, D}, c.dtype),
                 T.Tensor("dO", {Tq, H, D}, c.dtype),
                 T.Tensor("LSE", {H, Tq}, f32),
                 T.Tensor("D", {H, Tq}, f32)};
    t.CuQ = T.Tensor("CuQ", {B1}, i32);
    t.CuK = T.Tensor("CuK", {B1}, i32);
    return t;
  }
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), Skv = Dim::Dynamic("Skv");
  return BwdTensors{H,
                    Hkv,
                    T.Tensor("Q", {B, Sq, H, D}, c.dtype),
                    T.Tensor("K", {B, Skv, Hkv, D}, c.dtype),
                    T.Tensor("V", {B, Skv, Hkv, D}, c.dtype),
                    T.Tensor("dO", {B, Sq, H, D}, c.dtype),
                    T.Tensor("LSE", {B, H, Sq}, f32),
                    T.Tensor("D", {B, H, Sq}, f32)};
}

/// One sequence of the batch as a block sees it: its lengths and the tiles
/// at its rows. Query rows (Q, dO, dQ), key rows (K, V, dK, dV) and the
/// row values (LSE, D: a [1, rows] tile). `bounded` tiles end at the
/// sequence's end in a packed batch (elements past it read as zero and are
/// not written); unbounded ones are whole tiles, which past the end read
/// the next sequence's rows (a bulk tensor copy on sm_90a).
struct Sequence {
  Index sq = Index(0), skv = Index(0);
  std::function<TileRef(const Tensor&, Index row, Index head, bool bounded)> queries, keys;
  std::function<TileRef(const Tensor&, Index row, Index head, bool bounded)> rowValues;
};

/// Sequence b of the batch: the fixed-length one ([B, S, heads, D] tensors)
/// or the packed one (sequence b's rows from the cumulative lengths; past
/// the last sequence they read 0, an empty sequence).
Sequence SequenceOf(const FlashAttentionBwdConfig& c, const BwdTensors& t, const Index& b) {
  Sequence seq;
  if (!c.varlen) {
    seq.sq = t.Q.dim(1), seq.skv = t.K.dim(1);
    auto rows = [b](const Tensor& x, Index row, Index head, bool) {
      return x.Tile(b, row, head, 0).Along({1, 3});
    };
    seq.queries = seq.keys = rows;
    seq.rowValues = [b](const Tensor& x, Index row, Index head, bool) {
      return x.Tile(b, head, row).Along({1, 2});
    };
    return seq;
  }
  Index qStart = (*t.CuQ)(b), qStop = Max((*t.CuQ)(b + 1), qStart);
  Index kStart = (*t.CuK)(b), kStop = Max((*t.CuK)(b + 1), kStart);
  seq.sq = qStop - qStart, seq.skv = kStop - kStart;
  auto packed = [](Index start, Index stop) {
    return [start, stop](const Tensor& x, Index row, Index head, bool bounded) {
      TileRef tile = x.Tile(start + row, head, 0).Along({0, 2});
      return bounded ? tile.Until(stop) : tile;
    };
  };
  seq.queries = packed(qStart, qStop);
  seq.keys = packed(kStart, kStop);
  seq.rowValues = [qStart, qStop](const Tensor& x, Index row, Index head, bool bounded) {
    TileRef tile = x.Tile(head, qStart + row);
    return bounded ? tile.Until(qStop, 1) : tile;
  };
  return seq;
}

/// 1 when `first` < `length`, else 0: multiplies a loop count so that a
/// block past its sequence's end runs no step (a loop under a branch would
/// not be warp-specialized).
Index Active(const Index& length, const Index& first) {
  return Min(length - Min(length, first), Index(1));
}

}  // namespace

Kernel FlashAttentionBwdPre(const FlashAttentionBwdConfig& c, const std::string& name) {
  const int64_t D = c.headDim, BM = 32;
  KernelBuilder T(name);
  if (c.varlen) {
    // Rows are independent: the packed batch is one long sequence.
    Dim Tq = Dim::Dynamic("Tq"), H = Dim::Dynamic("H");
    auto O = T.Tensor("O", {Tq, H, D}, c.dtype), dO = T.Tensor("dO", {Tq, H, D}, c.dtype);
    auto Dt = T.Tensor("D", {H, Tq}, f32);
    T.Launch({CeilDiv(Tq, BM), H}, 128, [&](Index bx, Index h) {
      Index row0 = bx * BM;
      auto o = T.AllocFragment({BM, D}, f32, "o"), g = T.AllocFragment({BM, D}, f32, "g");
      auto sum = T.AllocFragment({BM}, f32, "sum");
      T.Copy(O.Tile(row0, h, 0).Along({0, 2}), o);
      T.Copy(dO.Tile(row0, h, 0).Along({0, 2}), g);
      T.Parallel({BM, D}, [&](Index i, Index d) { o(i, d) = o(i, d) * g(i, d); });
      T.ReduceSum(o, sum);
      T.Copy(sum, Dt.Tile(h, row0).Along({1}));
    });
    return T.Build();
  }
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), H = Dim::Dynamic("H");
  auto O = T.Tensor("O", {B, Sq, H, D}, c.dtype), dO = T.Tensor("dO", {B, Sq, H, D}, c.dtype);
  auto Dt = T.Tensor("D", {B, H, Sq}, f32);
  T.Launch({CeilDiv(Sq, BM), H, B}, 128, [&](Index bx, Index h, Index b) {
    Index row0 = bx * BM;
    auto o = T.AllocFragment({BM, D}, f32, "o"), g = T.AllocFragment({BM, D}, f32, "g");
    auto sum = T.AllocFragment({BM}, f32, "sum");
    T.Copy(O.Tile(b, row0, h, 0).Along({1, 3}), o);
    T.Copy(dO.Tile(b, row0, h, 0).Along({1, 3}), g);
    T.Parallel({BM, D}, [&](Index i, Index d) { o(i, d) = o(i, d) * g(i, d); });
    T.ReduceSum(o, sum);
    T.Copy(sum, Dt.Tile(b, h, row0).Along({2}));
  });
  return T.Build();
}

Kernel FlashAttentionBwdDq(const FlashAttentionBwdConfig& c, const std::string& name) {
  const int64_t D = c.headDim, BM = c.bm, BN = c.bn;
  KernelBuilder T(name);
  RequireHeadDim(T, D);
  BwdTensors t = DeclareInputs(T, c);
  const int headAxis = c.varlen ? 1 : 2;
  std::optional<Tensor> dQ;
  if (c.varlen)
    dQ = T.Tensor("dQ", {Dim::Dynamic("Tq"), t.H, D}, c.dtype);
  else
    dQ = T.Tensor("dQ", {Dim::Dynamic("B"), Dim::Dynamic("Sq"), t.H, D}, c.dtype);
  // The grid covers the longest query sequence: Sq, or max_seqlen_q.
  Dim rowsDim = c.varlen ? T.SizeArg("max_seqlen_q") : Dim::Dynamic("Sq");
  Dim batchDim = c.varlen ? Dim::Dynamic("B1") : Dim::Dynamic("B");
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({CeilDiv(rowsDim, BM), t.H, batchDim}, c.threads, [&](Index bx, Index h, Index b) {
    RequireHeadGroups(T, t.Q, t.K, headAxis);
    Sequence seq = SequenceOf(c, t, b);
    Index sq = seq.sq, skv = seq.skv, row0 = bx * BM;
    Index kvHead = h / (t.Q.dim(headAxis) / t.K.dim(headAxis));
    // Keys [0, end), as the forward: up to the block's last row's diagonal.
    Index end = skv;
    if (c.causal) {
      Index shifted = Min(sq + skv, row0 + BM + skv);
      end = shifted - Min(shifted, sq);
    }
    if (c.varlen) end = end * Active(sq, row0);
    auto qs = T.AllocShared({BM, D}, c.dtype, "qs"), dos = T.AllocShared({BM, D}, c.dtype, "dos");
    auto lses = T.AllocShared({1, BM}, f32, "lses"), ds = T.AllocShared({1, BM}, f32, "ds");
    auto ks = T.AllocShared({BN, D}, c.dtype, "ks"), vs = T.AllocShared({BN, D}, c.dtype, "vs");
    auto s = T.AllocFragment({BM, BN}, f32, "s"), dp = T.AllocFragment({BM, BN}, f32, "dp");
    auto dsh = T.AllocFragment({BM, BN}, c.dtype, "dsh");
    auto dq = T.AllocFragment({BM, D}, f32, "dq");
    Scalar log2Scale = scale * kLog2e;
    T.Copy(seq.queries(t.Q, row0, h, true), qs);
    T.Copy(seq.queries(t.dO, row0, h, true), dos);
    T.Copy(seq.rowValues(t.LSE, row0, h, true), lses);
    T.Copy(seq.rowValues(t.D, row0, h, true), ds);
    T.Clear(dq);
    T.Pipelined(CeilDiv(end, Index(BN)), c.stages, [&](Index j) {
      Index col0 = j * BN;
      T.Copy(seq.keys(t.K, col0, kvHead, false), ks);
      T.Copy(seq.keys(t.V, col0, kvHead, false), vs);
      T.Clear(s);
      T.Gemm(qs, ks, s, /*transposeA=*/false, /*transposeB=*/true);
      T.Clear(dp);
      T.Gemm(dos, vs, dp, /*transposeA=*/false, /*transposeB=*/true);
      // P = exp2(c S - LSE log2 e); 0 where the LSE is +infinity (no key).
      T.Parallel({BM, BN}, [&](Index i, Index k) {
        s(i, k) = Exp2(s(i, k) * log2Scale - lses(0, i) * kLog2e);
      });
      // Keys past the sequence's (the next sequence's, in a packed batch)
      // and, when causal, above the diagonal: P = 0.
      MaskScores(T, s, BM, BN, row0, col0, sq, skv, c.causal, 0.0);
      // dS = P (dP - D), in the operand's type for dQ += dS K.
      T.Parallel({BM, BN}, [&](Index i, Index k) {
        dsh(i, k) = Cast(s(i, k) * (dp(i, k) - ds(0, i)), c.dtype);
      });
      T.Gemm(dsh, ks, dq);
    });
    T.Parallel({BM, D}, [&](Index i, Index d) { dq(i, d) = dq(i, d) * scale; });
    T.Copy(dq, seq.queries(*dQ, row0, h, true));
  });
  return T.Build();
}

namespace {

/// Zeroes the elements of P^T [BN, BM] (key k, query i) above the causal
/// diagonal for the key block at col0 and the query rows at row0 (key k is
/// seen by query i when k < i + shift, the forward's mask). Only blocks the
/// diagonal crosses run it.
void MaskTransposed(KernelBuilder& T, const FlashAttentionBwdConfig& c, const Buffer& st,
                    const Index& row0, const Index& col0, const Index& sq, const Index& skv) {
  if (!c.causal) return;
  const int64_t BM = c.bm, BN = c.bn;
  Index shift = row0 + skv + 1 - (sq + col0);
  T.If(row0 + skv + 1 < sq + col0 + BN, [&] {
    T.Parallel({BN, BM}, [&](Index k, Index i) {
      Scalar seen = ToScalar(k, i32) < ToScalar(i, i32) + ToScalar(shift, i32);
      st(k, i) = Select(seen, st(k, i), 0.0);
    });
  });
}

}  // namespace

Kernel FlashAttentionBwdDkDv(const FlashAttentionBwdConfig& c, const std::string& name) {
  const int64_t D = c.headDim, BM = c.bm, BN = c.bn;
  KernelBuilder T(name);
  RequireHeadDim(T, D);
  BwdTensors t = DeclareInputs(T, c);
  const int headAxis = c.varlen ? 1 : 2;
  std::vector<Dim> kShape = {Dim::Dynamic("B"), Dim::Dynamic("Skv"), t.Hkv, D};
  if (c.varlen) kShape = {Dim::Dynamic("Tk"), t.Hkv, D};
  auto dK = T.Tensor("dK", kShape, c.dtype), dV = T.Tensor("dV", kShape, c.dtype);
  // The grid covers the longest key sequence: Skv, or max_seqlen_k.
  Dim keysDim = c.varlen ? T.SizeArg("max_seqlen_k") : Dim::Dynamic("Skv");
  Dim batchDim = c.varlen ? Dim::Dynamic("B1") : Dim::Dynamic("B");
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch(
      {CeilDiv(keysDim, BN), t.Hkv, batchDim}, c.threads, [&](Index bx, Index kvHead, Index b) {
        RequireHeadGroups(T, t.Q, t.K, headAxis);
        Sequence seq = SequenceOf(c, t, b);
        Index sq = seq.sq, skv = seq.skv, col0 = bx * BN;
        Index group = t.Q.dim(headAxis) / t.K.dim(headAxis);
        // Query blocks that see a key of this block: all, or when causal from
        // the first row whose diagonal reaches col0 (row >= col0 + Sq - Skv).
        Index first = Index(0);
        if (c.causal) first = (col0 + sq - Min(col0 + sq, skv)) / BM;
        Index blocks = CeilDiv(sq, Index(BM)) - Min(first, CeilDiv(sq, Index(BM)));
        if (c.varlen) blocks = blocks * Active(skv, col0);
        auto ks = T.AllocShared({BN, D}, c.dtype, "ks"), vs = T.AllocShared({BN, D}, c.dtype, "vs");
        auto qs = T.AllocShared({BM, D}, c.dtype, "qs"),
             dos = T.AllocShared({BM, D}, c.dtype, "dos");
        auto lses = T.AllocShared({1, BM}, f32, "lses"), ds = T.AllocShared({1, BM}, f32, "ds");
        auto st = T.AllocFragment({BN, BM}, f32, "st"), dpt = T.AllocFragment({BN, BM}, f32, "dpt");
        auto pt = T.AllocFragment({BN, BM}, c.dtype, "pt");
        auto dst = T.AllocFragment({BN, BM}, c.dtype, "dst");
        auto dk = T.AllocFragment({BN, D}, f32, "dk"), dv = T.AllocFragment({BN, D}, f32, "dv");
        Scalar log2Scale = scale * kLog2e;
        T.Copy(seq.keys(t.K, col0, kvHead, true), ks);
        T.Copy(seq.keys(t.V, col0, kvHead, true), vs);
        T.Clear(dk);
        T.Clear(dv);
        // One step a (query head of the group, query block) pair, heads outer.
        T.Pipelined(group * blocks, c.stages, [&](Index step) {
          Index h = kvHead * group + step / blocks;
          Index row0 = (first + step % blocks) * BM;
          // Bounded: rows past the sequence's end read as zero (not the next
          // sequence's), so their terms vanish as past Sq in a fixed-length batch.
          T.Copy(seq.queries(t.Q, row0, h, true), qs);
          T.Copy(seq.queries(t.dO, row0, h, true), dos);
          T.Copy(seq.rowValues(t.LSE, row0, h, true), lses);
          T.Copy(seq.rowValues(t.D, row0, h, true), ds);
          T.Clear(st);
          T.Gemm(ks, qs, st, /*transposeA=*/false, /*transposeB=*/true);
          T.Clear(dpt);
          T.Gemm(vs, dos, dpt, /*transposeA=*/false, /*transposeB=*/true);
          // P^T: element (k, i) is key col0 + k for query row0 + i. Rows past
          // the sequence's end read Q, dO, LSE and D as zero, so their terms
          // vanish.
          T.Parallel({BN, BM}, [&](Index k, Index i) {
            st(k, i) = Exp2(st(k, i) * log2Scale - lses(0, i) * kLog2e);
          });
          MaskTransposed(T, c, st, row0, col0, sq, skv);
          T.Parallel({BN, BM}, [&](Index k, Index i) {
            pt(k, i) = Cast(st(k, i), c.dtype);
            dst(k, i) = Cast(st(k, i) * (dpt(k, i) - ds(0, i)), c.dtype);
          });
          T.Gemm(pt, dos, dv);
          T.Gemm(dst, qs, dk);
        });
        T.Parallel({BN, D}, [&](Index k, Index d) { dk(k, d) = dk(k, d) * scale; });
        T.Copy(dk, seq.keys(dK, col0, kvHead, true));
        T.Copy(dv, seq.keys(dV, col0, kvHead, true));
      });
  return T.Build();
}

namespace {

/// One of the three kernels under `config`: `suffix` "" (dK, dV), "_pre"
/// or "_dq", named `name`.
Kernel BwdKernel(const FlashAttentionBwdConfig& config, const std::string& suffix,
                 const std::string& name) {
  if (suffix == "_pre") return FlashAttentionBwdPre(config, name);
  if (suffix == "_dq") return FlashAttentionBwdDq(config, name);
  return FlashAttentionBwdDkDv(config, name);
}

/// The example of one kernel: the default configuration as `name`; with
/// knobs, the family member FlashAttentionBwdName gives (whose workloads
/// fit its dtype, head dimension and mask).
Example BwdExample(const std::string& name, const std::string& suffix) {
  Example example{name, [suffix, name](const std::string& target) {
                    return BwdKernel(FlashAttentionBwdConfig::ForTarget(target), suffix, name);
                  }};
  example.knobs = {{"dtype", "f16 or bf16"},
                   {"head-dim", "64 or 128 (any multiple of 16 compiles)"},
                   {"causal", "mask keys after the query (true or false)"},
                   {"varlen", "a packed batch of sequences of different lengths (true or false)"},
                   {"bm", "query rows a block (dq) or a step (dK/dV)"},
                   {"bn", "key rows a step (dq) or a block (dK/dV)"},
                   {"stages", "stages of the loops"},
                   {"threads", "threads per block"}};
  example.configure = [suffix](const std::string& target, KnobValues& knobs) {
    FlashAttentionBwdConfig c =
        FlashAttentionBwdConfig::ForTarget(target, knobs.Float16("dtype", f16),
                                           knobs.Int("head-dim", 128), knobs.Bool("causal", false));
    c.varlen = knobs.Bool("varlen", false);
    ApplyTileKnobs(knobs, c);
    return BwdKernel(c, suffix, FlashAttentionBwdName(c) + suffix);
  };
  return example;
}

}  // namespace

Example FlashAttentionBwdPreExample() { return BwdExample("flash_attention_bwd_pre", "_pre"); }

Example FlashAttentionBwdDqExample() { return BwdExample("flash_attention_bwd_dq", "_dq"); }

/// The dK/dV kernel; its workloads run the other two first (companions).
Example FlashAttentionBwdExample() {
  Example example = BwdExample("flash_attention_bwd", "");
  example.companions = {FlashAttentionBwdPreExample(), FlashAttentionBwdDqExample()};
  return example;
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::FlashAttentionBwdExample())
