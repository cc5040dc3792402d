//===- fp8_gemm_blockwise.h - The block-scaled FP8 product -------*- C++ -*-===//
//
// The k-loop of the block-scaled FP8 GEMM (examples/fp8_gemm_blockwise.cc),
// shared with the grouped GEMM's FP8 form (examples/grouped_gemm.cc): e4m3
// operands, A's scales per row and 128 columns, B's per 128 x 128 block,
// DeepGEMM's promotion of each k-block's f32 product into the running sum.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_FP8_GEMM_BLOCKWISE_H_
#define TESSERA_EXAMPLES_FP8_GEMM_BLOCKWISE_H_

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The scale blocks' extent along K (and along N for B).
inline constexpr int64_t kScaleBlock = 128;
/// The most k-blocks whose B scales a block keeps in shared memory: K up to
/// 32768 (a precondition says so at launch).
inline constexpr int64_t kMaxKBlocks = 256;

/// The bm x bn f32 sum over `kBlocks` (an Index or a GridExtent) k-blocks of 128 of A's rows times
/// B's (N x K) columns, each k-block's product scaled by its scales: `aTile(k)`, `bTile(k)` the
/// k-block's tiles of A and B, `saTile(k)` its 1 x bm row of A's scales, `sbTile` the tile's bn /
/// 128 rows of B's scales over every k-block (read once, before the loop). Each pipelined
/// iteration's product accumulates in an f32 fragment of its own, which the iteration scales and
/// adds to the running sum, so the scales apply to f32 partial sums.
template <typename Count, typename ATileAt, typename BTileAt, typename SaTileAt>
Buffer BlockScaledProduct(KernelBuilder& T, int64_t bm, int64_t bn, int stages,
                          const Count& kBlocks, const TileRef& sbTile, ATileAt aTile, BTileAt bTile,
                          SaTileAt saTile) {
  constexpr int64_t bk = kScaleBlock;
  auto sbAll = T.AllocShared({bn / kScaleBlock, kMaxKBlocks}, f32, "sb");
  T.Copy(sbTile, sbAll);
  auto As = T.AllocShared({bm, bk}, f8e4m3, "As");
  auto Bs = T.AllocShared({bn, bk}, f8e4m3, "Bs");
  auto sa = T.AllocShared({1, bm}, f32, "sa");
  auto partial = T.AllocFragment({bm, bn}, f32, "partial");
  auto acc = T.AllocFragment({bm, bn}, f32, "acc");
  T.Clear(acc);
  T.Pipelined(kBlocks, stages, [&](Index k) {
    T.Copy(aTile(k), As);
    T.Copy(bTile(k), Bs);
    T.Copy(saTile(k), sa);
    T.Clear(partial);
    T.Gemm(As, Bs, partial, /*transposeA=*/false, /*transposeB=*/true);
    T.Parallel({bm, bn}, [&](Index i, Index j) {
      acc(i, j) = acc(i, j) + partial(i, j) * (sa(0, i) * sbAll(j / kScaleBlock, k));
    });
  });
  return acc;
}

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_FP8_GEMM_BLOCKWISE_H_
