//===- fp8_gemm_blockwise.cc - FP8 GEMM with block scales -----------------===//
//
// D = bf16(sum over k-blocks kb of SA[:, kb] SB[n / 128, kb] (A_kb B_kb^T)):
// FP8 e4m3 A (M x K) with one scale per row and 128 columns (1 x 128
// blocks, SA: M x K/128) and B (N x K) with one scale per 128 x 128 block
// (SB: N/128 x K/128), as DeepSeek-V3 trains. Each pipelined iteration is
// one k-block of 128: its product accumulates in an f32 fragment of its
// own, which the epilogue of the iteration scales and adds to the running
// f32 sum, so the scales apply to f32 partial sums and accuracy holds over
// long K. The scale tiles travel through shared memory beside A's and B's.
//
//   bazel run //examples:fp8_gemm_blockwise -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"

namespace tessera::examples {

/// The scale blocks' extent along K (and along N for B).
constexpr int64_t kScaleBlock = 128;

Kernel Fp8GemmBlockwise(Dim M, Dim N, Dim K, Dim KBlocks, Dim NBlocks, int64_t bm, int64_t bn,
                        int threads, int stages, const std::string& name) {
  constexpr int64_t bk = kScaleBlock;
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, f8e4m3), B = T.Tensor("B", {N, K}, f8e4m3);
  auto SA = T.Tensor("SA", {M, KBlocks}, f32), SB = T.Tensor("SB", {NBlocks, KBlocks}, f32);
  auto D = T.Tensor("D", {M, N}, bf16);
  T.Launch({CeilDiv(N, bn), CeilDiv(M, bm)}, threads, [&](Index bx, Index by) {
    auto As = T.AllocShared({bm, bk}, f8e4m3, "As");
    auto Bs = T.AllocShared({bn, bk}, f8e4m3, "Bs");
    // This k-block's scales: A's rows (bm x 1), B's column blocks of the tile.
    auto sa = T.AllocShared({bm, 1}, f32, "sa");
    auto sb = T.AllocShared({1, bn / kScaleBlock}, f32, "sb");
    auto partial = T.AllocFragment({bm, bn}, f32, "partial");
    auto acc = T.AllocFragment({bm, bn}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, bk), stages, [&](Index k) {
      T.Copy(A.Tile(by * bm, k * bk), As);
      T.Copy(B.Tile(bx * bn, k * bk), Bs);
      T.Copy(SA.Tile(by * bm, k), sa);
      T.Copy(SB.Tile(bx * (bn / kScaleBlock), k), sb);
      T.Clear(partial);
      T.Gemm(As, Bs, partial, /*transposeA=*/false, /*transposeB=*/true);
      T.Parallel({bm, bn}, [&](Index i, Index j) {
        acc(i, j) = acc(i, j) + partial(i, j) * (sa(i, 0) * sb(0, j / kScaleBlock));
      });
    });
    auto out = T.AllocFragment({bm, bn}, bf16, "out");
    T.Parallel({bm, bn}, [&](Index i, Index j) { out(i, j) = Cast(acc(i, j), bf16); });
    T.Copy(out, D.Tile(by * bm, bx * bn));
  });
  return T.Build();
}

Example Fp8GemmBlockwiseExample() {
  return {"fp8_gemm_blockwise", [](const std::string& target) {
            // sm_90a: two warpgroups of m64n128 wgmmas (the partial and the
            // running sum, 64 registers each); elsewhere 64 x 128 tiles.
            bool hopper = target == "sm_90a";
            return Fp8GemmBlockwise(Dim::Dynamic("M"), Dim::Dynamic("N", 16),
                                    Dim::Dynamic("K", 16), Dim::Dynamic("KB"),
                                    Dim::Dynamic("NB"), hopper ? 128 : 64, 128,
                                    hopper ? 256 : 128, hopper ? 4 : 2, "fp8_gemm_blockwise");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::Fp8GemmBlockwiseExample())
