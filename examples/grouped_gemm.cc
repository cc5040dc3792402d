//===- grouped_gemm.cc - Grouped GEMM, DeepGEMM's two layouts --------------===//
//
// One GEMM per group (an MoE layer's experts), every group's B of the same
// shape, in the two layouts DeepGEMM takes:
//
//   contiguous: the rows of all groups' A concatenated, [M, K], each group's
//     rows padded to a multiple of the block's (BM); Group (i32, one entry
//     per block of BM rows) names each row block's group; B is [G, N, K]
//     (K-major, as FP8 tensor cores read it, every type alike); C is [M, N].
//     A row block whose entry is negative (padding) runs no iteration and
//     writes zeros.
//   masked: A is [G, MAXM, K] with Count (i32, G entries) the rows of each
//     group that are valid; C is [G, MAXM, N]. Blocks past a group's count
//     run no iteration; each block's tile of C ends at the count
//     (TileRef::Until), so the rows past it are not written.
//
// The group index is read from data and addresses B's tile (a slice of the
// [G, N, K] tensor: on sm_90a a bulk tensor copy whose first coordinate is
// that index). Each tile is an ordinary GEMM tile of the target's
// schedule otherwise (GemmConfig::ForTarget; persistent on sm_90a).
//
//   bazel run //examples:grouped_gemm -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/grouped_gemm.h"

#include <utility>

#include "examples/common/example.h"
#include "examples/fp8_gemm_blockwise.h"

namespace tessera::examples {

// On sm_90a persistent: each block walks the tiles of every group, the
// group read per tile, its producer reading it for its own loads. The
// grouped raster order (`group` row blocks walked down before moving right)
// lets the blocks running at once share a group's B tiles in L2, where a
// plain raster order reads a group's whole B once per row block.
GemmConfig GroupedConfig(const std::string& target, DType dtype) {
  GemmConfig c = GemmConfig::ForTarget(target);
  c.dtype = dtype, c.transposeB = true;
  // The contiguous layout's row blocks: the workloads' (kBlockRows).
  c.bm = kGroupedBlockRows;
  return c;
}

namespace {

/// acc = A's row block (`aTile(k)`: its K tile at k) times the group's B
/// (N x K, K-major; `bTile(k)`), over the K tiles of `depth`; none where `active` is 0
/// (an idle block: its loop runs no iteration). The loop stays at the
/// kernel's top level, where sm90's warp-specialized strategy runs it.
template <typename ATileAt, typename BTileAt>
Buffer GroupTile(KernelBuilder& T, const GemmConfig& c, Index depth, Index active, ATileAt aTile,
                 BTileAt bTile) {
  auto As = T.AllocShared({c.bm, c.bk}, c.dtype, "As");
  auto Bs = T.AllocShared({c.bn, c.bk}, c.dtype, "Bs");
  auto acc = T.AllocFragment({c.bm, c.bn}, c.acc, "acc");
  T.Clear(acc);
  T.Pipelined(CeilDiv(depth, Index(c.bk)) * active, c.stages, [&](Index k) {
    T.Copy(aTile(k * c.bk), As);
    T.Copy(bTile(k * c.bk), Bs);
    T.Gemm(As, Bs, acc, c.precision, /*transposeA=*/false, /*transposeB=*/true);
  });
  return acc;
}

}  // namespace

Index Positive(const Index& x) { return Min(Max(x, Index(0)), Index(1)); }

std::pair<Index, Index> GroupedTileOf(const GemmConfig& c, const Index& x, const Index& y,
                                      const Index& columns, const Index& rows) {
  if (!c.group) return {x, y};
  return SwizzleBlocks(x, y, columns, rows, c.group);
}

Kernel GroupedGemmContiguous(const GemmConfig& c, const std::string& name) {
  KernelBuilder T(name);
  Dim M = Dim::Dynamic("M", c.bm), N = Dim::Dynamic("N", 8), K = Dim::Dynamic("K", 8);
  Dim G = Dim::Dynamic("G"), MB = Dim::Dynamic("MB");
  auto A = T.Tensor("A", {M, K}, c.dtype), B = T.Tensor("B", {G, N, K}, c.dtype);
  auto Group = T.Tensor("Group", {MB}, i32);
  auto C = T.Tensor("C", {M, N}, c.dtype);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm)}, c.threads, [&](Index x, Index y) {
    std::pair<Index, Index> tile =
        GroupedTileOf(c, x, y, CeilDiv(C.dim(1), c.bn), CeilDiv(C.dim(0), c.bm));
    Index bx = tile.first, by = tile.second;
    if (c.persistent) T.Persistent();
    // The row block's group; a negative entry marks padding rows, whose C
    // rows get zeros.
    Index group = Group(by);
    Buffer acc = GroupTile(
        T, c, A.dim(1), Positive(group + Index(1)), [&](Index k) { return A.Tile(by * c.bm, k); },
        [&](Index k) {
          return B.Tile(Max(group, Index(0)), bx * c.bn, k).Along({1, 2});
        });
    T.Copy(acc, C.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Kernel GroupedGemmMasked(const GemmConfig& c, const std::string& name) {
  KernelBuilder T(name);
  Dim G = Dim::Dynamic("G"), MAXM = Dim::Dynamic("MAXM", 8);
  Dim N = Dim::Dynamic("N", 8), K = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {G, MAXM, K}, c.dtype), B = T.Tensor("B", {G, N, K}, c.dtype);
  auto Count = T.Tensor("Count", {G}, i32);
  auto C = T.Tensor("C", {G, MAXM, N}, c.dtype);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(MAXM, c.bm), G}, c.threads, [&](Index x, Index y, Index g) {
    std::pair<Index, Index> tile =
        GroupedTileOf(c, x, y, CeilDiv(C.dim(2), c.bn), CeilDiv(C.dim(1), c.bm));
    Index bx = tile.first, by = tile.second;
    if (c.persistent) T.Persistent();
    // The group's valid rows: a block past them runs no iteration
    // and writes nothing (its tile of C ends before it starts).
    Index rows = Count(g), row0 = by * c.bm;
    Buffer acc = GroupTile(
        T, c, A.dim(2), Positive(rows - row0),
        [&](Index k) {
          return A.Tile(g, row0, k).Along({1, 2});
        },
        [&](Index k) {
          return B.Tile(g, bx * c.bn, k).Along({1, 2});
        });
    T.Copy(acc, C.Tile(g, row0, bx * c.bn).Along({1, 2}).Until(rows));
  });
  return T.Build();
}

namespace {

/// The group of tile `t`: the first g whose TileEnd[g] (the tiles of groups
/// 0 to g, a running sum) exceeds t, by bisection over the groups (32 halvings
/// cover any count an i32 tensor holds; each is a branch once settled).
Index GroupOfTile(KernelBuilder& T, const Tensor& tileEnd, const Index& t) {
  auto lo = T.Var(Index(0), "lo"), hi = T.Var(tileEnd.dim(0), "hi");
  T.Serial(Index(32), [&](Index) {
    T.If(Index(lo) < Index(hi), [&] {
      Index mid = (Index(lo) + Index(hi)) / Index(2);
      T.If(
          tileEnd(mid) <= t, [&] { lo = mid + Index(1); }, [&] { hi = mid; });
    });
  });
  return lo;
}

}  // namespace

Kernel GroupedGemmPointers(const GemmConfig& c, int64_t align, const std::string& name) {
  KernelBuilder T(name);
  Dim G = Dim::Dynamic("G");
  auto PtrA = T.Tensor("PtrA", {G}, i64), PtrB = T.Tensor("PtrB", {G}, i64);
  auto PtrC = T.Tensor("PtrC", {G}, i64), Sizes = T.Tensor("Sizes", {G, 3}, i32);
  auto TileEnd = T.Tensor("TileEnd", {G}, i32);
  Dim tiles = T.SizeArg("TILES");
  T.Launch({tiles}, c.threads, [&](Index t) {
    // The tile's group, its place among the group's tiles (in the grouped
    // raster order, eight row blocks down before moving right, so the
    // blocks running at once share the group's B columns in L2), and the
    // group's operands: A (m x k), B (n x k, K-major) and C (m x n), each
    // at its own address.
    Index g = GroupOfTile(T, TileEnd, t);
    Index m = Sizes(g, 0), n = Sizes(g, 1), k = Sizes(g, 2);
    Index local = t - TileEnd(g - Index(1));  // a read at -1 gives 0
    Index columns = CeilDiv(n, Index(c.bn)), rows = CeilDiv(m, Index(c.bm));
    // TileEnd counts kGroupedBlockRows x kPointerTileColumns tiles; wider
    // tiles (c.bn) leave the group's last blocks idle: they run no k-step
    // and their tile lies past the group's rows, so they write nothing.
    Index active = Positive(columns * rows - local);
    std::pair<Index, Index> tile =
        SwizzleBlocks(local % columns, local / columns, columns, rows, 8);
    Index bx = tile.first, by = tile.second + (Index(1) - active) * rows;
    ViewLayout layout{{}, align};
    auto A = T.TensorAt(PtrA, {g}, {m, k}, c.dtype, "A", layout);
    auto B = T.TensorAt(PtrB, {g}, {n, k}, c.dtype, "B", layout);
    auto C = T.TensorAt(PtrC, {g}, {m, n}, c.dtype, "C", layout);
    Buffer acc = GroupTile(
        T, c, k, active, [&](Index kk) { return A.Tile(by * c.bm, kk); },
        [&](Index kk) { return B.Tile(bx * c.bn, kk); });
    T.Copy(acc, C.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

GemmConfig PointerGroupedConfig(const std::string& target, DType dtype) {
  GemmConfig c = GroupedConfig(target, dtype);
  // The caller counts 128 x 128 tiles (TileEnd). On sm_90a a block takes
  // 128 x 256 (a warpgroup's m64n256 accumulator: A's tile read once for
  // twice the columns), half the blocks idle; elsewhere 128 x 128. No
  // persistence: each block is one tile (no tensor maps for views, so no
  // bulk copies whose setup a persistent block would amortize).
  c.bn = target == "sm_90a" ? 2 * kPointerTileColumns : kPointerTileColumns;
  c.persistent = false, c.group = 0;
  return c;
}

Fp8GroupedConfig Fp8GroupedConfig::ForTarget(const std::string& target) {
  // sm_90a: two warpgroups of m64n128 wgmmas (the partial and the running
  // sum, 64 registers each), as the dense block-scaled kernel; elsewhere
  // 64-row blocks.
  Fp8GroupedConfig c;
  if (target != "sm_90a") c.bm = 64, c.threads = 128, c.stages = 2;
  return c;
}

Kernel GroupedGemmFp8Contiguous(const Fp8GroupedConfig& c, const std::string& name) {
  KernelBuilder T(name);
  Dim M = Dim::Dynamic("M", kGroupedBlockRows), N = Dim::Dynamic("N", 16);
  Dim K = Dim::Dynamic("K", 16), G = Dim::Dynamic("G"), MB = Dim::Dynamic("MB");
  Dim KB = Dim::Dynamic("KB"), NB = Dim::Dynamic("NB");
  auto A = T.Tensor("A", {M, K}, f8e4m3), SA = T.Tensor("SA", {KB, M}, f32);
  auto B = T.Tensor("B", {G, N, K}, f8e4m3), SB = T.Tensor("SB", {G, NB, KB}, f32);
  auto Group = T.Tensor("Group", {MB}, i32);
  auto D = T.Tensor("D", {M, N}, bf16);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm)}, c.threads, [&](Index x, Index y) {
    T.Require(SB.dim(2) <= Index(kMaxKBlocks));
    std::pair<Index, Index> tile =
        SwizzleBlocks(x, y, CeilDiv(D.dim(1), Index(c.bn)), CeilDiv(D.dim(0), Index(c.bm)), 8);
    Index bx = tile.first, by = tile.second;
    // The row block's group (a 128-row block of the layout); negative for
    // padding, whose D rows get zeros.
    Index group = Group(by * c.bm / kGroupedBlockRows), expert = Max(group, Index(0));
    Buffer acc = BlockScaledProduct(
        T, c.bm, c.bn, c.stages, CeilDiv(A.dim(1), Index(kScaleBlock)) * Positive(group + 1),
        SB.Tile(expert, bx * (c.bn / kScaleBlock), 0).Along({1, 2}),
        [&](Index k) { return A.Tile(by * c.bm, k * kScaleBlock); },
        [&](Index k) {
          return B.Tile(expert, bx * c.bn, k * kScaleBlock).Along({1, 2});
        },
        [&](Index k) { return SA.Tile(k, by * c.bm); });
    auto out = T.AllocFragment({c.bm, c.bn}, bf16, "out");
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) { out(i, j) = Cast(acc(i, j), bf16); });
    T.Copy(out, D.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Kernel GroupedGemmFp8Masked(const Fp8GroupedConfig& c, const std::string& name) {
  KernelBuilder T(name);
  Dim G = Dim::Dynamic("G"), MAXM = Dim::Dynamic("MAXM", 4), N = Dim::Dynamic("N", 16);
  Dim K = Dim::Dynamic("K", 16), KB = Dim::Dynamic("KB"), NB = Dim::Dynamic("NB");
  auto A = T.Tensor("A", {G, MAXM, K}, f8e4m3), SA = T.Tensor("SA", {G, KB, MAXM}, f32);
  auto B = T.Tensor("B", {G, N, K}, f8e4m3), SB = T.Tensor("SB", {G, NB, KB}, f32);
  auto Count = T.Tensor("Count", {G}, i32);
  auto D = T.Tensor("D", {G, MAXM, N}, bf16);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(MAXM, c.bm), G}, c.threads, [&](Index x, Index y, Index g) {
    T.Require(SB.dim(2) <= Index(kMaxKBlocks));
    std::pair<Index, Index> tile =
        SwizzleBlocks(x, y, CeilDiv(D.dim(2), Index(c.bn)), CeilDiv(D.dim(1), Index(c.bm)), 8);
    Index bx = tile.first, row0 = tile.second * c.bm;
    // The group's valid rows: a block past them runs no iteration and
    // writes nothing.
    Index rows = Count(g);
    Buffer acc = BlockScaledProduct(
        T, c.bm, c.bn, c.stages, CeilDiv(A.dim(2), Index(kScaleBlock)) * Positive(rows - row0),
        SB.Tile(g, bx * (c.bn / kScaleBlock), 0).Along({1, 2}),
        [&](Index k) {
          return A.Tile(g, row0, k * kScaleBlock).Along({1, 2});
        },
        [&](Index k) {
          return B.Tile(g, bx * c.bn, k * kScaleBlock).Along({1, 2});
        },
        [&](Index k) {
          return SA.Tile(g, k, row0).Along({1, 2});
        });
    auto out = T.AllocFragment({c.bm, c.bn}, bf16, "out");
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) { out(i, j) = Cast(acc(i, j), bf16); });
    T.Copy(out, D.Tile(g, row0, bx * c.bn).Along({1, 2}).Until(rows));
  });
  return T.Build();
}

Example GroupedGemmExample() {
  Example example{"grouped_gemm", [](const std::string& target) {
                    return GroupedGemmContiguous(GroupedConfig(target, bf16), "grouped_gemm");
                  }};
  // The row block (bm) is the layout's: 128 rows.
  example.knobs = {{"bn", "columns of C per block"},
                   {"bk", "depth of a k-step"},
                   {"stages", "shared-memory stages of the k-loop"},
                   {"threads", "threads per block"}};
  example.configure = [](const std::string& target, KnobValues& knobs) {
    GemmConfig c = GroupedConfig(target, bf16);
    ApplyTileKnobs(knobs, c);
    c.bk = knobs.Int("bk", c.bk);
    return GroupedGemmContiguous(c, "grouped_gemm");
  };
  return example;
}

Example GroupedGemmPointersExample() {
  return {"grouped_gemm_ptr", [](const std::string& target) {
            return GroupedGemmPointers(PointerGroupedConfig(target, bf16), 16, "grouped_gemm_ptr");
          }};
}

Example GroupedGemmPointersAnyExample() {
  return {"grouped_gemm_ptr_any", [](const std::string& target) {
            // Element-wise copies (no alignment promised): 64 x 64 tiles
            // (kPointerAnyTile) keep the unrolled copy code small.
            GemmConfig c = PointerGroupedConfig(target, bf16);
            c.bm = c.bn = kPointerAnyTile, c.bk = 32, c.threads = 128, c.stages = 2;
            return GroupedGemmPointers(c, 0, "grouped_gemm_ptr_any");
          }};
}

Example GroupedGemmMaskedExample() {
  return {"grouped_gemm_masked", [](const std::string& target) {
            return GroupedGemmMasked(GroupedConfig(target, bf16), "grouped_gemm_masked");
          }};
}

Example GroupedGemmFp8Example() {
  return {"grouped_gemm_fp8", [](const std::string& target) {
            return GroupedGemmFp8Contiguous(Fp8GroupedConfig::ForTarget(target),
                                            "grouped_gemm_fp8");
          }};
}

Example GroupedGemmFp8MaskedExample() {
  return {"grouped_gemm_fp8_masked", [](const std::string& target) {
            return GroupedGemmFp8Masked(Fp8GroupedConfig::ForTarget(target),
                                        "grouped_gemm_fp8_masked");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::GroupedGemmExample())
