//===- flash_decoding.cc - Attention for decode, split over the keys ------===//
//
// Flash-decoding: attention of a few new tokens per sequence (Sq, 1 to 8)
// against a long key/value cache. One block per (sequence, query) pair
// would leave the GPU idle at small batches, so the keys are split too:
//
//   - the split pass (FlashDecoding): a block takes one key head of one
//     sequence with every query head that shares it (grouped-query
//     attention: the H / Hkv heads are the rows of its tile, so each key and
//     value byte is read once per key head) and one of P parts of the keys.
//     It runs FlashAttention's online softmax over its part and writes the
//     part's normalized output and log-sum-exp;
//   - the combine (FlashDecodingCombine): a block per (sequence, token,
//     head) weights each part by exp(its LSE - the largest), sums, and
//     divides by the weights' sum.
//
// The new tokens are causal among themselves: token t (0-based) sees keys
// 0 to Skv - Sq + t. Parts are whole steps of `bn` keys; a part past the
// token's last key is empty (LSE -infinity, weight 0).
//
//   bazel run //examples:flash_decoding -- --target=sm_90a --emit=ptx
//   bazel run //examples:flash_decoding     # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/flash_decoding.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "examples/common/example.h"
#include "examples/online_softmax.h"

namespace tessera::examples {
namespace {

/// The architecture number of `target` ("sm_61": 61, "sm_90a": 90).
int SmNumber(const std::string& target) {
  int sm = 0;
  if (absl::StartsWith(target, "sm_") && target.size() >= 5)
    (void)absl::SimpleAtoi(target.substr(3, 2), &sm);
  return sm;
}

}  // namespace

FlashDecodingConfig FlashDecodingConfig::ForTarget(const std::string& target) {
  FlashDecodingConfig c;
  // Targets without cp.async load each step in the loop: two stages.
  if (target == "sm_60" || target == "sm_70") c.stages = 2;
  // Before sm_80 each thread holds every row of the row vectors (m, l) and
  // the loop double-buffers in registers: one token a pass.
  if (SmNumber(target) < 80) c.tokensPerPass = 1;
  return c;
}

Kernel FlashDecoding(const FlashDecodingConfig& c, const std::string& name) {
  const int64_t D = c.headDim, BM = c.heads, BN = c.bn;
  KernelBuilder T(name);
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), Skv = Dim::Dynamic("Skv");
  Dim H = Dim::Dynamic("H"), Hkv = Dim::Dynamic("Hkv"), P = Dim::Dynamic("P");
  const bool paged = c.pageSize > 0;
  auto Q = T.Tensor("Q", {B, Sq, H, D}, c.dtype);
  // Contiguous K and V [B, Skv, Hkv, D], or page pools [pages, page size,
  // Hkv, D] with a block table [B, max pages] and lengths [B] (i32).
  std::vector<Dim> kvShape = {B, Skv, Hkv, D};
  if (paged) kvShape = {Dim::Dynamic("PAGES"), c.pageSize, Hkv, D};
  auto K = T.Tensor("K", kvShape, c.dtype), V = T.Tensor("V", kvShape, c.dtype);
  std::optional<Tensor> Table, Lens;
  if (paged) {
    Table = T.Tensor("Table", {B, Dim::Dynamic("MP")}, i32);
    Lens = T.Tensor("Lens", {B}, i32);
  }
  auto OP = T.Tensor("OP", {B, Sq, H, P, D}, f32), LSEP = T.Tensor("LSEP", {B, Sq, P, H}, f32);
  // The final results, written here when the keys are not split (P = 1: no
  // combine), else by the combine.
  auto O = T.Tensor("O", {B, Sq, H, D}, c.dtype), LSE = T.Tensor("LSE", {B, Sq, H}, f32);
  // The scale must be positive: the row maximum is taken before scaling.
  Scalar scale = T.ScalarArg("scale", f32);
  T.Launch({P, Hkv, B}, c.threads, [&](Index part, Index g, Index b) {
    // Key heads divide the query heads, a group fits the tile's rows, and
    // every token sees a key.
    T.Require(Q.dim(2) % K.dim(2) == Index(0));
    T.Require(Q.dim(2) <= K.dim(2) * BM);
    // Paged: a step's keys lie in one page. A sequence shorter than Sq
    // leaves its first tokens without keys (O = 0).
    if (paged)
      T.Require(Index(c.pageSize % BN) == Index(0));
    else
      T.Require(K.dim(1) >= Q.dim(1));
    Index sq = Q.dim(1), skv = paged ? (*Lens)(b) : K.dim(1), parts = OP.dim(3);
    Index group = Q.dim(2) / K.dim(2), h0 = g * group;
    // A pass over the keys serves one token (oneToken) or tokensPerPass:
    // each has its own query tile and online softmax.
    const int64_t count = c.oneToken ? 1 : c.tokensPerPass;
    std::vector<Buffer> qs;
    for (int64_t u = 0; u < count; ++u)
      qs.push_back(T.AllocShared({BM, D}, c.dtype, u ? absl::StrCat("qs", u) : "qs"));
    // The keys and values of a step. The kernel for several tokens has two
    // key loops (one token alone, passes of several) in the two branches of
    // a tile.if: each stages its own buffers (a buffer copied in two loops
    // is staged by neither), which share their space.
    struct Step {
      Buffer ks, vs;
    };
    std::vector<Step> kv = {
        {T.AllocShared({BN, D}, c.dtype, "ks"), T.AllocShared({BN, D}, c.dtype, "vs")}};
    if (count > 1)
      kv.push_back(
          {T.AllocShared({BN, D}, c.dtype, "ks_n"), T.AllocShared({BN, D}, c.dtype, "vs_n")});
    auto s = T.AllocFragment({BM, BN}, f32, "s"), p = T.AllocFragment({BM, BN}, c.dtype, "p");
    std::vector<OnlineSoftmax> states;
    for (int64_t u = 0; u < count; ++u) states.push_back(AllocOnlineSoftmax(T, BM, D, scale));
    // One step of `bn` keys from col0, for a token whose keys end at `end`.
    auto loadStep = [&](const Step& step, const Index& col0, const Index& end) {
      const Buffer &ks = step.ks, &vs = step.vs;
      if (paged) {
        // Rows of the last page past the sequence's end read as zero: a
        // reused page may hold anything there (NaN times P's 0 is NaN).
        Index page = (*Table)(b, col0 / c.pageSize), row = col0 % c.pageSize;
        Index rowsEnd = row + (end - col0);
        T.Copy(K.Tile(page, row, g, 0).Along({1, 3}).Until(rowsEnd), ks);
        T.Copy(V.Tile(page, row, g, 0).Along({1, 3}).Until(rowsEnd), vs);
      } else {
        T.Copy(K.Tile(b, col0, g, 0).Along({1, 3}), ks);
        T.Copy(V.Tile(b, col0, g, 0).Along({1, 3}), vs);
      }
    };
    auto scoreStep = [&](const Step& step, int64_t u, const Index& col0, const Index& end) {
      T.Clear(s);
      T.Gemm(qs[u], step.ks, s, /*transposeA=*/false, /*transposeB=*/true);
      MaskKeysPastEnd(T, s, BM, BN, col0, end);
      OnlineSoftmaxStep(T, states[u], s, p, step.vs, c.dtype, BN);
    };
    // Tokens t0 to t0 + n - 1 over one pass of the keys: the last one's
    // keys [0, end) split into parts, each token's scores masked past its
    // own end (a part past it: LSE -infinity). A pass of several tokens
    // scores every step for each (a gemm under a branch of a pipelined
    // body is not supported), those past Sq on a copy of the last token's
    // query, and writes those below Sq.
    auto pass = [&](const Index& t0, int64_t n) {
      std::vector<Index> t, ends;
      for (int64_t u = 0; u < n; ++u) {
        t.push_back(t0 + u);
        ends.push_back(skv - sq + t.back() + 1);
        // The group's heads are the tile's rows; rows past them read zero
        // and are not written.
        Index source = n == 1 ? t[u] : Min(t[u], sq - 1);
        T.Copy(Q.Tile(b, source, h0, 0).Along({2, 3}).Until(h0 + group), qs[u]);
        T.Clear(states[u].o);
        T.Clear(states[u].l);
        T.Fill(states[u].m, -kInf);
      }
      Index end = n == 1 ? ends[0] : skv - sq + Min(t0 + n, sq);
      DecodePart keys = DecodePartOf(end, part, parts, BN);
      Index steps = keys.steps, perPart = keys.perPart, first = keys.first;
      T.Pipelined(Min(perPart, steps - first), c.stages, [&](Index j) {
        Index col0 = (first + j) * BN;
        const Step& step = kv[n == 1 ? 0 : 1];
        loadStep(step, col0, end);
        for (int64_t u = 0; u < n; ++u) scoreStep(step, u, col0, ends[u]);
      });
      for (int64_t u = 0; u < n; ++u) {
        auto finish = [&] {
          // An empty part: output 0, LSE -infinity (weight 0 in the combine).
          FinishOnlineSoftmax(T, states[u], -kInf);
          const Buffer &o = states[u].o, &mx = states[u].mx, &l = states[u].l;
          auto partial = [&] {
            T.Copy(o, OP.Tile(b, t[u], h0, part, 0).Along({2, 4}).Until(h0 + group));
            T.Copy(mx, LSEP.Tile(b, t[u], part, h0).Along({3}).Until(h0 + group));
          };
          // One token and one part: the final O and LSE, +infinity for a
          // token that saw no key (as the combine gives). Passes of several
          // tokens always leave the combine to the launcher (less code
          // under their registers' pressure).
          if (n > 1)
            return partial();
          T.If((sq == Index(1)) & (parts == Index(1)),
               [&] {
                 T.Parallel({BM}, [&](Index i) { mx(i) = Select(l(i) > 0.0, mx(i), kInf); });
                 T.Copy(o, O.Tile(b, t[u], h0, 0).Along({2, 3}).Until(h0 + group));
                 T.Copy(mx, LSE.Tile(b, t[u], h0).Along({2}).Until(h0 + group));
               },
               partial);
        };
        if (n == 1)
          finish();
        else
          T.If(t[u] < sq, finish);
      }
    };
    // One token: the key loop at the kernel's top level (on sm_90a it may
    // then be warp-specialized, with TMA loads). Else one token alone, or
    // passes of tokensPerPass tokens, each reading the keys and values once.
    if (c.oneToken) {
      T.Require(Q.dim(1) == Index(1));
      pass(Index(0), 1);
    } else if (count == 1) {
      T.Serial(sq, [&](Index t) { pass(t, 1); });
    } else {
      T.If(
          sq == Index(1), [&] { pass(Index(0), 1); },
          [&] { T.Serial(CeilDiv(sq, Index(count)), [&](Index i) { pass(i * count, count); }); });
    }
  });
  return T.Build();
}

Kernel FlashDecodingCombine(DType dtype, int64_t D, const std::string& name, int64_t maxParts) {
  const int64_t BP = maxParts;
  KernelBuilder T(name);
  Dim B = Dim::Dynamic("B"), Sq = Dim::Dynamic("Sq"), H = Dim::Dynamic("H"), P = Dim::Dynamic("P");
  auto OP = T.Tensor("OP", {B, Sq, H, P, D}, f32), LSEP = T.Tensor("LSEP", {B, Sq, P, H}, f32);
  auto O = T.Tensor("O", {B, Sq, H, D}, dtype), LSE = T.Tensor("LSE", {B, Sq, H}, f32);
  T.Launch({H, Sq, B}, 128, [&](Index h, Index t, Index b) {
    T.Require(LSEP.dim(2) <= Index(BP));
    Index parts = LSEP.dim(2);
    auto weight = T.AllocFragment({1, BP}, f32, "weight");
    auto top = T.AllocFragment({1}, f32, "top"), total = T.AllocFragment({1}, f32, "total");
    auto lses = T.AllocShared({BP, 1}, f32, "lses"),
         weights = T.AllocShared({1, BP}, f32, "weights");
    auto os = T.AllocShared({BP, D}, f32, "os");
    auto out = T.AllocFragment({1, D}, dtype, "out");
    // The head's column of LSEP, then along a row (reductions take the
    // last axis).
    T.Copy(LSEP.Tile(b, t, 0, h).Along({2, 3}), lses);
    T.Copy(OP.Tile(b, t, h, 0, 0).Along({3, 4}), os);
    T.Parallel({1, BP},
               [&](Index i, Index q) { weight(i, q) = Select(q < parts, lses(q, 0), -kInf); });
    T.ReduceMax(weight, top);
    // A token that sees no key (a paged sequence shorter than Sq) has no
    // part with a finite LSE: O = 0.
    T.Parallel({1}, [&](Index i) { top(i) = Select(top(i) == -kInf, 0.0, top(i)); });
    T.Parallel({1, BP}, [&](Index i, Index q) { weight(i, q) = Exp(weight(i, q) - top(i)); });
    T.ReduceSum(weight, total);
    T.Copy(weight, weights);
    T.Parallel({1, D}, [&](Index i, Index d) {
      Scalar sum(0.0);
      for (int64_t q = 0; q < BP; ++q) sum = sum + weights(0, q) * os(q, d);
      out(i, d) = Cast(Select(total(i) > 0.0, sum / total(i), 0.0), dtype);
    });
    // A token that sees no key: LSE +infinity (FlashAttention's convention).
    T.Parallel({1},
               [&](Index i) { top(i) = Select(total(i) > 0.0, top(i) + Log(total(i)), kInf); });
    T.Copy(out, O.Tile(b, t, h, 0).Along({2, 3}));
    T.Copy(top, LSE.Tile(b, t, h).Along({2}));
  });
  return T.Build();
}

Example FlashDecodingCombineExample() {
  return {"flash_decoding_combine",
          [](const std::string&) { return FlashDecodingCombine(f16, 128); }};
}

Example FlashDecodingOneExample() {
  return {"flash_decoding_one",
          [](const std::string& target) {
            FlashDecodingConfig c = FlashDecodingConfig::ForTarget(target);
            c.oneToken = true;
            // 64 rows on sm_90a: wgmma, so the key loop is warp-specialized.
            if (target == "sm_90a") c.heads = 64;
            return FlashDecoding(c, "flash_decoding_one");
          },
          {FlashDecodingCombineExample()}};
}

namespace {

/// The paged split pass for pages of `pageSize` rows (16: vLLM's default,
/// 64, 256), as `name`.
Example PagedExample(const std::string& name, int64_t pageSize) {
  return {name,
          [name, pageSize](const std::string& target) {
            FlashDecodingConfig c = FlashDecodingConfig::ForTarget(target);
            c.pageSize = pageSize;
            // sm_70's quadpair MMAs spill at 64 keys a step with the table;
            // a step's keys lie in one page.
            if (target == "sm_70") c.bn = 32;
            c.bn = std::min(c.bn, pageSize);
            // One token a pass for 16-key steps (pages of 16): their gemm
            // takes the SIMT atom, with the row vectors in every thread.
            if (c.bn < 32) c.tokensPerPass = 1;
            return FlashDecoding(c, name);
          },
          {FlashDecodingCombineExample()}};
}

}  // namespace

Example FlashDecodingPagedExample() { return PagedExample("flash_decoding_paged", 64); }
Example FlashDecodingPaged16Example() { return PagedExample("flash_decoding_paged16", 16); }
Example FlashDecodingPaged256Example() { return PagedExample("flash_decoding_paged256", 256); }

Example FlashDecodingExample() {
  return {"flash_decoding",
          [](const std::string& target) {
            return FlashDecoding(FlashDecodingConfig::ForTarget(target));
          },
          {FlashDecodingCombineExample()}};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::FlashDecodingExample())
