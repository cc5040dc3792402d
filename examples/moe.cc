//===- moe.cc - A mixture-of-experts layer: route, gather, experts, combine ===//
//
// The MoE feed-forward layer of Mixtral and DeepSeek-V3 with the router's
// top-k choices given: token t goes to experts Ids[t, s] with weights
// Weights[t, s] (s < TOPK), and
//
//   Y[t] = sum_s Weights[t, s] * (silu(X[t] W1[e]^T) * (X[t] W3[e]^T)) W2[e]^T,
//   e = Ids[t, s],
//
// with W13 [E, 2F, H] holding W1 (rows 0..F-1) above W3 (rows F..2F-1), as
// vLLM's fused layer keeps them, and W2 [E, H, F]. Six launches:
//
//   moe_align    Rank[t, s]: the entry's place among its expert's entries
//                (an atomic add on Counts, whose old value it returns);
//   moe_plan     Start[e]: where expert e's rows begin in the permuted rows,
//                each expert padded to whole 128-row blocks (Start[E] is
//                the total), and Group[b]: the expert of row block b (-1
//                past the last);
//   moe_gather   Xp[Start[e] + Rank[t, s]] = X[t], and Counts back to zero;
//   moe          Act = silu(Xp W1[g]^T) * (Xp W3[g]^T) per row block of
//                group g: DeepGEMM's contiguous grouped layout with the
//                gate and up products of one tile in two accumulators and
//                SiLU·mul in the epilogue (the gate and up halves never
//                reach memory);
//   grouped_gemm D = Act W2[g]^T, the contiguous grouped GEMM itself
//                (examples/grouped_gemm.cc);
//   moe_combine  Y[t] = sum_s Weights[t, s] * D[Start[e] + Rank[t, s]], in
//                s order (deterministic: no atomics).
//
// Counts ([E] i32) is a workspace: zero before the first layer, and every
// layer leaves it zero. An id outside [0, E) routes its entry nowhere (an
// expert on another rank under expert parallelism): it adds nothing to Y.
// The rows an entry lands on depend on the atomics' order, the values do
// not: each row is computed alone.
//
//   bazel run //examples:moe -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/moe.h"

#include "examples/common/example.h"
#include "examples/grouped_gemm.h"

namespace tessera::examples {
namespace {

/// One i32 element of `tensor` at `at` set to `value` (a 1-element tile).
void StoreIndex(KernelBuilder &T, const Buffer &one, const Tensor &tensor, const Index &at,
                const Index &value) {
  T.Parallel({1}, [&](Index i) { one(i) = ToScalar(value, i32); });
  T.Copy(one, tensor.Tile(at));
}

/// The gate/up projection's schedule: the grouped GEMM's, half its columns
/// in each of the two accumulators (one tile of the grouped GEMM's size).
GemmConfig UpConfig(const std::string &target) {
  GemmConfig c = GroupedConfig(target, bf16);
  c.bn /= 2;
  return c;
}

}  // namespace

Kernel MoeAlign(const std::string &name) {
  constexpr int64_t kChunk = 1024;
  KernelBuilder T(name);
  Dim n = Dim::Dynamic("N"), experts = Dim::Dynamic("E");
  auto Ids = T.Tensor("Ids", {n}, i32), Rank = T.Tensor("Rank", {n}, i32);
  auto Counts = T.Tensor("Counts", {experts}, i32);
  T.Launch({CeilDiv(n, kChunk)}, 256, [&](Index bx) {
    auto id = T.AllocFragment({kChunk}, i32, "id");
    T.Copy(Ids.Tile(bx * kChunk), id);
    T.Parallel({kChunk}, [&](Index i) {
      // Entries past N and ids outside [0, E) count nowhere: an index
      // outside Counts does nothing.
      Index expert = ToIndex(Select(bx * kChunk + i < Ids.dim(0), id(i), -1));
      id(i) = T.AtomicAdd(Counts, {expert}, 1);
    });
    T.Copy(id, Rank.Tile(bx * kChunk));
  });
  return T.Build();
}

Kernel MoePlan(const std::string &name) {
  KernelBuilder T(name);
  Dim experts = Dim::Dynamic("E"), starts = Dim::Dynamic("E1"), blocks = Dim::Dynamic("MB");
  auto Counts = T.Tensor("Counts", {experts}, i32);
  auto Start = T.Tensor("Start", {starts}, i32), Group = T.Tensor("Group", {blocks}, i32);
  T.Launch({blocks}, 32, [&](Index b) {
    T.Require(Start.dim(0) == Counts.dim(0) + Index(1));
    auto one = T.AllocFragment({1}, i32, "one");
    Var offset = T.Var(Index(0), "offset"), expert = T.Var(Index(-1), "expert");
    Index row = b * kMoeBlockRows;
    // Every block walks the experts' counts for its own row block's
    // expert; block 0 also writes the starts.
    T.Serial(Counts.dim(0), [&](Index e) {
      Index padded = CeilDiv(Counts(e), Index(kMoeBlockRows)) * kMoeBlockRows;
      T.If(And(Index(offset) <= row, row < Index(offset) + padded), [&] { expert = e; });
      T.If(b == Index(0), [&] { StoreIndex(T, one, Start, e, offset); });
      offset += padded;
    });
    T.If(b == Index(0), [&] { StoreIndex(T, one, Start, Counts.dim(0), offset); });
    StoreIndex(T, one, Group, b, expert);
  });
  return T.Build();
}

Kernel MoeGather(const std::string &name) {
  constexpr int64_t kChunk = 2048, kZeros = 256;
  KernelBuilder T(name);
  Dim tokens = Dim::Dynamic("T"), topk = Dim::Dynamic("TOPK"), hidden = Dim::Dynamic("H", 8);
  Dim experts = Dim::Dynamic("E"), starts = Dim::Dynamic("E1"), rows = Dim::Dynamic("MP");
  auto X = T.Tensor("X", {tokens, hidden}, bf16);
  auto Ids = T.Tensor("Ids", {tokens, topk}, i32), Rank = T.Tensor("Rank", {tokens, topk}, i32);
  auto Start = T.Tensor("Start", {starts}, i32), Counts = T.Tensor("Counts", {experts}, i32);
  auto Xp = T.Tensor("Xp", {rows, hidden}, bf16);
  T.Launch({topk, tokens}, 128, [&](Index s, Index t) {
    auto row = T.AllocFragment({1, kChunk}, bf16, "row");
    auto zeros = T.AllocFragment({kZeros}, i32, "zeros");
    Index e = Ids(t, s);
    T.If(And(Index(0) <= e, e < Counts.dim(0)), [&] {
      Index to = Start(e) + Rank(t, s);
      T.Serial(CeilDiv(X.dim(1), Index(kChunk)), [&](Index c) {
        T.Copy(X.Tile(t, c * kChunk), row);
        T.Copy(row, Xp.Tile(to, c * kChunk));
      });
    });
    // moe_plan has read the counts: the next layer's moe_align starts from
    // zero.
    T.If(And(t == Index(0), s == Index(0)), [&] {
      T.Clear(zeros);
      T.Serial(CeilDiv(Counts.dim(0), Index(kZeros)),
               [&](Index c) { T.Copy(zeros, Counts.Tile(c * kZeros)); });
    });
  });
  return T.Build();
}

Kernel MoeUp(const GemmConfig &c, const std::string &name) {
  KernelBuilder T(name);
  Dim rows = Dim::Dynamic("MP", c.bm), hidden = Dim::Dynamic("H", 8), ffn = Dim::Dynamic("F", 8);
  Dim experts = Dim::Dynamic("E"), ffn2 = Dim::Dynamic("F2", 8), blocks = Dim::Dynamic("MB");
  auto Xp = T.Tensor("Xp", {rows, hidden}, c.dtype);
  auto W13 = T.Tensor("W13", {experts, ffn2, hidden}, c.dtype);
  auto Group = T.Tensor("Group", {blocks}, i32);
  auto Act = T.Tensor("Act", {rows, ffn}, c.dtype);
  T.Launch({CeilDiv(ffn, c.bn), CeilDiv(rows, c.bm)}, c.threads, [&](Index x, Index y) {
    T.Require(W13.dim(1) == Act.dim(1) * Index(2));
    std::pair<Index, Index> tile =
        GroupedTileOf(c, x, y, CeilDiv(Act.dim(1), Index(c.bn)), CeilDiv(Act.dim(0), Index(c.bm)));
    Index bx = tile.first, by = tile.second;
    if (c.persistent) T.Persistent();
    // A negative group marks the row blocks past the last expert's: no
    // iteration, and their rows of Act get silu(0) * 0 = 0.
    Index group = Group(by), expert = Max(group, Index(0));
    auto As = T.AllocShared({c.bm, c.bk}, c.dtype, "As");
    auto Gs = T.AllocShared({c.bn, c.bk}, c.dtype, "Gs");
    auto Us = T.AllocShared({c.bn, c.bk}, c.dtype, "Us");
    auto gate = T.AllocFragment({c.bm, c.bn}, c.acc, "gate");
    auto up = T.AllocFragment({c.bm, c.bn}, c.acc, "up");
    T.Clear(gate);
    T.Clear(up);
    T.Pipelined(CeilDiv(Xp.dim(1), Index(c.bk)) * Positive(group + Index(1)), c.stages,
                [&](Index k) {
                  T.Copy(Xp.Tile(by * c.bm, k * c.bk), As);
                  T.Copy(W13.Tile(expert, bx * c.bn, k * c.bk).Along({1, 2}), Gs);
                  T.Copy(W13.Tile(expert, Act.dim(1) + bx * c.bn, k * c.bk).Along({1, 2}), Us);
                  T.Gemm(As, Gs, gate, c.precision, /*transposeA=*/false, /*transposeB=*/true);
                  T.Gemm(As, Us, up, c.precision, /*transposeA=*/false, /*transposeB=*/true);
                });
    auto act = T.AllocFragment({c.bm, c.bn}, c.dtype, "act");
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) {
      Scalar g = gate(i, j);
      act(i, j) = Cast(g / (Scalar(1.0) + Exp(-g)) * up(i, j), c.dtype);
    });
    T.Copy(act, Act.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Kernel MoeCombine(const std::string &name) {
  constexpr int64_t kChunk = 1024;
  KernelBuilder T(name);
  Dim tokens = Dim::Dynamic("T"), topk = Dim::Dynamic("TOPK"), hidden = Dim::Dynamic("H", 8);
  Dim starts = Dim::Dynamic("E1"), rows = Dim::Dynamic("MP");
  auto D = T.Tensor("D", {rows, hidden}, bf16);
  auto Ids = T.Tensor("Ids", {tokens, topk}, i32), Rank = T.Tensor("Rank", {tokens, topk}, i32);
  auto Weights = T.Tensor("Weights", {tokens, topk}, f32);
  auto Start = T.Tensor("Start", {starts}, i32);
  auto Y = T.Tensor("Y", {tokens, hidden}, bf16);
  T.Launch({CeilDiv(hidden, kChunk), tokens}, 128, [&](Index c, Index t) {
    auto sum = T.AllocFragment({1, kChunk}, f32, "sum");
    auto part = T.AllocFragment({1, kChunk}, bf16, "part");
    // The entry's weight, which every element reads: shared, not a fragment.
    auto weight = T.AllocShared({1}, f32, "weight");
    auto y = T.AllocFragment({1, kChunk}, bf16, "y");
    T.Clear(sum);
    T.Serial(Ids.dim(1), [&](Index s) {
      Index e = Ids(t, s);
      T.If(And(Index(0) <= e, e < Start.dim(0) - Index(1)), [&] {
        T.Copy(Weights.Tile(t, s).Along({1}), weight);
        T.Copy(D.Tile(Start(e) + Rank(t, s), c * kChunk), part);
        T.Parallel({1, kChunk}, [&](Index i, Index j) {
          sum(i, j) = sum(i, j) + weight(Index(0)) * Cast(part(i, j), f32);
        });
      });
    });
    T.Parallel({1, kChunk}, [&](Index i, Index j) { y(i, j) = Cast(sum(i, j), bf16); });
    T.Copy(y, Y.Tile(t, c * kChunk));
  });
  return T.Build();
}

Example MoeAlignExample() {
  return {"moe_align", [](const std::string &) { return MoeAlign("moe_align"); }};
}

Example MoePlanExample() {
  return {"moe_plan", [](const std::string &) { return MoePlan("moe_plan"); }};
}

Example MoeGatherExample() {
  return {"moe_gather", [](const std::string &) { return MoeGather("moe_gather"); }};
}

Example MoeCombineExample() {
  return {"moe_combine", [](const std::string &) { return MoeCombine("moe_combine"); }};
}

Example MoeExample() {
  Example example{"moe", [](const std::string &target) { return MoeUp(UpConfig(target), "moe"); }};
  // The down projection is the grouped GEMM in its own configuration (the
  // knobs below are the gate/up kernel's).
  Example down{"grouped_gemm", [](const std::string &target) {
                 return GroupedGemmContiguous(GroupedConfig(target, bf16), "grouped_gemm");
               }};
  example.companions = {MoeAlignExample(), MoePlanExample(), MoeGatherExample(), down,
                        MoeCombineExample()};
  example.knobs = {{"bn", "columns of the gate and of the up product per block"},
                   {"bk", "depth of a k-step"},
                   {"stages", "shared-memory stages of the k-loop"},
                   {"threads", "threads per block"}};
  example.configure = [](const std::string &target, KnobValues &knobs) {
    GemmConfig c = UpConfig(target);
    ApplyTileKnobs(knobs, c);
    c.bk = knobs.Int("bk", c.bk);
    return MoeUp(c, "moe");
  };
  return example;
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::MoeExample())
