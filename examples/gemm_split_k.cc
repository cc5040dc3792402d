//===- gemm_split_k.cc - C += A * B with K split over blocks --------------===//
//
// A GEMM for skinny problems (few rows, long K: decode's projections),
// where M x N tiles alone are too few to fill the GPU: the grid's third
// axis splits K into `splits` ranges of whole k-tiles, each block multiplies
// its range and adds its partial tile into C with atomic adds
// (KernelBuilder::AtomicAdd). No workspace and no second kernel: C
// (f32) accumulates, so it starts at zero, a bias or a residual. Blocks
// whose range is empty (K shorter than the split) add zeros.
//
//   bazel run //examples:gemm_split_k -- --target=sm_80 --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/gemm_split_k.h"

#include "examples/common/example.h"

namespace tessera::examples {

Kernel GemmSplitK(Dim M, Dim N, Dim K, const SplitKConfig& c, const std::string& name) {
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, f16), B = T.Tensor("B", {K, N}, f16);
  auto C = T.Tensor("C", {M, N}, f32);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm), c.splits}, c.threads,
           [&](Index bx, Index by, Index bz) {
             auto As = T.AllocShared({c.bm, c.bk}, f16, "As");
             auto Bs = T.AllocShared({c.bk, c.bn}, f16, "Bs");
             auto acc = T.AllocFragment({c.bm, c.bn}, f32, "acc");
             T.Clear(acc);
             // This block's k-tiles: [first, first + count), clipped to K
             // (Min keeps the difference from going negative).
             Index tiles = CeilDiv(A.dim(1), Index(c.bk));
             Index perSplit = CeilDiv(tiles, Index(c.splits));
             Index first = Min(tiles, bz * perSplit);
             T.Pipelined(Min(perSplit, tiles - first), c.stages, [&](Index k) {
               T.Copy(A.Tile(by * c.bm, (first + k) * c.bk), As);
               T.Copy(B.Tile((first + k) * c.bk, bx * c.bn), Bs);
               T.Gemm(As, Bs, acc);
             });
             T.AtomicAdd(acc, C.Tile(by * c.bm, bx * c.bn));
           });
  return T.Build();
}

Example GemmSplitKExample() {
  return {"gemm_split_k", [](const std::string& target) {
            return GemmSplitK(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                              SplitKConfig::ForTarget(target), "gemm_split_k");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::GemmSplitKExample())
