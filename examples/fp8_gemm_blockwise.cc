//===- fp8_gemm_blockwise.cc - FP8 GEMM with block scales -----------------===//
//
// D = bf16(sum over k-blocks kb of SA[kb, :] SB[n / 128, kb] (A_kb B_kb^T)):
// FP8 e4m3 A (M x K) with one scale per row and 128 columns (1 x 128
// blocks) and B (N x K) with one scale per 128 x 128 block, as DeepSeek-V3
// trains. The scales are laid out as DeepGEMM and torch._scaled_mm take
// them: A's transposed, SA: K/128 x MP with the rows contiguous (MP, M
// rounded up to a multiple of 4, so that a k-block's row of scales is a
// bulk tensor copy), B's SB: N/128 x K/128.
//
// Each pipelined iteration is one k-block of 128: its product accumulates
// in an f32 fragment of its own, which the epilogue of the iteration scales
// and adds to the running f32 sum (DeepGEMM's promotion), so the scales
// apply to f32 partial sums and accuracy holds over long K. A's scales for
// the k-block travel with A's and B's tiles through the pipeline; B's for
// the whole K are read once, before the loop.
//
//   bazel run //examples:fp8_gemm_blockwise -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"

namespace tessera::examples {

/// The scale blocks' extent along K (and along N for B).
constexpr int64_t kScaleBlock = 128;
/// The most k-blocks whose B scales a block keeps in shared memory: K up to
/// 32768 (a precondition says so at launch).
constexpr int64_t kMaxKBlocks = 256;

Kernel Fp8GemmBlockwise(Dim M, Dim MP, Dim N, Dim K, Dim KBlocks, Dim NBlocks, int64_t bm,
                        int64_t bn, int threads, int stages, const std::string& name) {
  constexpr int64_t bk = kScaleBlock;
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, f8e4m3), B = T.Tensor("B", {N, K}, f8e4m3);
  auto SA = T.Tensor("SA", {KBlocks, MP}, f32), SB = T.Tensor("SB", {NBlocks, KBlocks}, f32);
  auto D = T.Tensor("D", {M, N}, bf16);
  T.Launch({CeilDiv(N, bn), CeilDiv(M, bm)}, threads, [&](Index bx, Index by) {
    T.Require(SB.dim(1) <= Index(kMaxKBlocks));
    // B's scales of the tile's column blocks, every k-block.
    auto sbAll = T.AllocShared({bn / kScaleBlock, kMaxKBlocks}, f32, "sb");
    T.Copy(SB.Tile(bx * (bn / kScaleBlock), 0), sbAll);
    auto As = T.AllocShared({bm, bk}, f8e4m3, "As");
    auto Bs = T.AllocShared({bn, bk}, f8e4m3, "Bs");
    // This k-block's scales of A's rows.
    auto sa = T.AllocShared({1, bm}, f32, "sa");
    auto partial = T.AllocFragment({bm, bn}, f32, "partial");
    auto acc = T.AllocFragment({bm, bn}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, bk), stages, [&](Index k) {
      T.Copy(A.Tile(by * bm, k * bk), As);
      T.Copy(B.Tile(bx * bn, k * bk), Bs);
      T.Copy(SA.Tile(k, by * bm), sa);
      T.Clear(partial);
      T.Gemm(As, Bs, partial, /*transposeA=*/false, /*transposeB=*/true);
      T.Parallel({bm, bn}, [&](Index i, Index j) {
        acc(i, j) = acc(i, j) + partial(i, j) * (sa(0, i) * sbAll(j / kScaleBlock, k));
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
            return Fp8GemmBlockwise(Dim::Dynamic("M"), Dim::Dynamic("MP", 4), Dim::Dynamic("N", 16),
                                    Dim::Dynamic("K", 16), Dim::Dynamic("KB"), Dim::Dynamic("NB"),
                                    hopper ? 128 : 64, 128, hopper ? 256 : 128, hopper ? 4 : 2,
                                    "fp8_gemm_blockwise");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::Fp8GemmBlockwiseExample())
