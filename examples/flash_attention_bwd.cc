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
#include <iterator>

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
  return absl::StrCat("flash_attention_bwd_", c.dtype == bf16 ? "bf16" : "f16", "_d", c.headDim,
                      c.causal ? "_causal" : "");
}

namespace {

/// The tensors every backward kernel reads: Q, K, V, dO and the forward's
/// LSE, with the dynamic dimensions shared.
struct BwdTensors {
  Dim B, Sq, Skv, H, Hkv;
  Tensor Q, K, V, dO, LSE, D;
};

BwdTensors DeclareInputs(KernelBuilder& T, const FlashAttentionBwdConfig& c) {
  const int64_t D = c.headDim;
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), Skv = Dim::Dynamic("Skv");
  Dim H = Dim::Dynamic("H"), Hkv = Dim::Dynamic("Hkv");
  BwdTensors t{B,
               Sq,
               Skv,
               H,
               Hkv,
               T.Tensor("Q", {B, Sq, H, D}, c.dtype),
               T.Tensor("K", {B, Skv, Hkv, D}, c.dtype),
               T.Tensor("V", {B, Skv, Hkv, D}, c.dtype),
               T.Tensor("dO", {B, Sq, H, D}, c.dtype),
               T.Tensor("LSE", {B, H, Sq}, f32),
               T.Tensor("D", {B, H, Sq}, f32)};
  return t;
}

}  // namespace

Kernel FlashAttentionBwdPre(const FlashAttentionBwdConfig& c, const std::string& name) {
  const int64_t D = c.headDim, BM = 32;
  KernelBuilder T(name);
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
  auto dQ = T.Tensor("dQ", {t.B, t.Sq, t.H, D}, c.dtype);
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({CeilDiv(t.Sq, BM), t.H, t.B}, c.threads, [&](Index bx, Index h, Index b) {
    RequireHeadGroups(T, t.Q, t.K);
    Index sq = t.Q.dim(1), skv = t.K.dim(1), row0 = bx * BM;
    Index kvHead = h / (t.Q.dim(2) / t.K.dim(2));
    // Keys [0, end), as the forward: up to the block's last row's diagonal.
    Index end = skv;
    if (c.causal) {
      Index shifted = Min(sq + skv, row0 + BM + skv);
      end = shifted - Min(shifted, sq);
    }
    auto qs = T.AllocShared({BM, D}, c.dtype, "qs"), dos = T.AllocShared({BM, D}, c.dtype, "dos");
    auto lses = T.AllocShared({1, BM}, f32, "lses"), ds = T.AllocShared({1, BM}, f32, "ds");
    auto ks = T.AllocShared({BN, D}, c.dtype, "ks"), vs = T.AllocShared({BN, D}, c.dtype, "vs");
    auto s = T.AllocFragment({BM, BN}, f32, "s"), dp = T.AllocFragment({BM, BN}, f32, "dp");
    auto dsh = T.AllocFragment({BM, BN}, c.dtype, "dsh");
    auto dq = T.AllocFragment({BM, D}, f32, "dq");
    Scalar log2Scale = scale * kLog2e;
    T.Copy(t.Q.Tile(b, row0, h, 0).Along({1, 3}), qs);
    T.Copy(t.dO.Tile(b, row0, h, 0).Along({1, 3}), dos);
    T.Copy(t.LSE.Tile(b, h, row0).Along({1, 2}), lses);
    T.Copy(t.D.Tile(b, h, row0).Along({1, 2}), ds);
    T.Clear(dq);
    T.Pipelined(CeilDiv(end, Index(BN)), c.stages, [&](Index j) {
      Index col0 = j * BN;
      T.Copy(t.K.Tile(b, col0, kvHead, 0).Along({1, 3}), ks);
      T.Copy(t.V.Tile(b, col0, kvHead, 0).Along({1, 3}), vs);
      T.Clear(s);
      T.Gemm(qs, ks, s, /*transposeA=*/false, /*transposeB=*/true);
      T.Clear(dp);
      T.Gemm(dos, vs, dp, /*transposeA=*/false, /*transposeB=*/true);
      // P = exp2(c S - LSE log2 e); 0 where the LSE is +infinity (no key).
      T.Parallel({BM, BN}, [&](Index i, Index k) {
        s(i, k) = Exp2(s(i, k) * log2Scale - lses(0, i) * kLog2e);
      });
      MaskScores(T, s, BM, BN, row0, col0, sq, skv, c.causal, 0.0);
      // dS = P (dP - D), in the operand's type for dQ += dS K.
      T.Parallel({BM, BN}, [&](Index i, Index k) {
        dsh(i, k) = Cast(s(i, k) * (dp(i, k) - ds(0, i)), c.dtype);
      });
      T.Gemm(dsh, ks, dq);
    });
    T.Parallel({BM, D}, [&](Index i, Index d) { dq(i, d) = dq(i, d) * scale; });
    T.Copy(dq, dQ.Tile(b, row0, h, 0).Along({1, 3}));
  });
  return T.Build();
}

Kernel FlashAttentionBwdDkDv(const FlashAttentionBwdConfig& c, const std::string& name) {
  const int64_t D = c.headDim, BM = c.bm, BN = c.bn;
  KernelBuilder T(name);
  RequireHeadDim(T, D);
  BwdTensors t = DeclareInputs(T, c);
  auto dK = T.Tensor("dK", {t.B, t.Skv, t.Hkv, D}, c.dtype);
  auto dV = T.Tensor("dV", {t.B, t.Skv, t.Hkv, D}, c.dtype);
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({CeilDiv(t.Skv, BN), t.Hkv, t.B}, c.threads, [&](Index bx, Index kvHead, Index b) {
    RequireHeadGroups(T, t.Q, t.K);
    Index sq = t.Q.dim(1), skv = t.K.dim(1), col0 = bx * BN;
    Index group = t.Q.dim(2) / t.K.dim(2);
    // Query blocks that see a key of this block: all, or when causal from
    // the first row whose diagonal reaches col0 (row >= col0 + Sq - Skv).
    Index first = Index(0);
    if (c.causal) first = (col0 + sq - Min(col0 + sq, skv)) / BM;
    Index blocks = CeilDiv(sq, Index(BM)) - Min(first, CeilDiv(sq, Index(BM)));
    auto ks = T.AllocShared({BN, D}, c.dtype, "ks"), vs = T.AllocShared({BN, D}, c.dtype, "vs");
    auto qs = T.AllocShared({BM, D}, c.dtype, "qs"), dos = T.AllocShared({BM, D}, c.dtype, "dos");
    auto lses = T.AllocShared({1, BM}, f32, "lses"), ds = T.AllocShared({1, BM}, f32, "ds");
    auto st = T.AllocFragment({BN, BM}, f32, "st"), dpt = T.AllocFragment({BN, BM}, f32, "dpt");
    auto pt = T.AllocFragment({BN, BM}, c.dtype, "pt");
    auto dst = T.AllocFragment({BN, BM}, c.dtype, "dst");
    auto dk = T.AllocFragment({BN, D}, f32, "dk"), dv = T.AllocFragment({BN, D}, f32, "dv");
    Scalar log2Scale = scale * kLog2e;
    T.Copy(t.K.Tile(b, col0, kvHead, 0).Along({1, 3}), ks);
    T.Copy(t.V.Tile(b, col0, kvHead, 0).Along({1, 3}), vs);
    T.Clear(dk);
    T.Clear(dv);
    // One step a (query head of the group, query block) pair, heads outer.
    T.Pipelined(group * blocks, c.stages, [&](Index step) {
      Index h = kvHead * group + step / blocks;
      Index row0 = (first + step % blocks) * BM;
      T.Copy(t.Q.Tile(b, row0, h, 0).Along({1, 3}), qs);
      T.Copy(t.dO.Tile(b, row0, h, 0).Along({1, 3}), dos);
      T.Copy(t.LSE.Tile(b, h, row0).Along({1, 2}), lses);
      T.Copy(t.D.Tile(b, h, row0).Along({1, 2}), ds);
      T.Clear(st);
      T.Gemm(ks, qs, st, /*transposeA=*/false, /*transposeB=*/true);
      T.Clear(dpt);
      T.Gemm(vs, dos, dpt, /*transposeA=*/false, /*transposeB=*/true);
      // P^T: element (k, i) is key col0 + k for query row0 + i. Rows past
      // Sq read Q, dO, LSE and D as zero, so their terms vanish.
      T.Parallel({BN, BM}, [&](Index k, Index i) {
        st(k, i) = Exp2(st(k, i) * log2Scale - lses(0, i) * kLog2e);
      });
      if (c.causal) {
        // Key k is seen by query i when k < i + shift (the forward's mask).
        Index shift = row0 + skv + 1 - (sq + col0);
        T.If(row0 + skv + 1 < sq + col0 + BN, [&] {
          T.Parallel({BN, BM}, [&](Index k, Index i) {
            Scalar seen = ToScalar(k, i32) < ToScalar(i, i32) + ToScalar(shift, i32);
            st(k, i) = Select(seen, st(k, i), 0.0);
          });
        });
      }
      T.Parallel({BN, BM}, [&](Index k, Index i) {
        pt(k, i) = Cast(st(k, i), c.dtype);
        dst(k, i) = Cast(st(k, i) * (dpt(k, i) - ds(0, i)), c.dtype);
      });
      T.Gemm(pt, dos, dv);
      T.Gemm(dst, qs, dk);
    });
    T.Parallel({BN, D}, [&](Index k, Index d) { dk(k, d) = dk(k, d) * scale; });
    T.Copy(dk, dK.Tile(b, col0, kvHead, 0).Along({1, 3}));
    T.Copy(dv, dV.Tile(b, col0, kvHead, 0).Along({1, 3}));
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
                   {"bm", "query rows a block (dq) or a step (dK/dV)"},
                   {"bn", "key rows a step (dq) or a block (dK/dV)"},
                   {"stages", "stages of the loops"},
                   {"threads", "threads per block"}};
  example.configure = [suffix](const std::string& target, KnobValues& knobs) {
    FlashAttentionBwdConfig c =
        FlashAttentionBwdConfig::ForTarget(target, knobs.Float16("dtype", f16),
                                           knobs.Int("head-dim", 128), knobs.Bool("causal", false));
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
