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

#include "examples/fp8_gemm_blockwise.h"

#include "examples/common/example.h"

namespace tessera::examples {

Kernel Fp8GemmBlockwise(Dim M, Dim MP, Dim N, Dim K, Dim KBlocks, Dim NBlocks, int64_t bm,
                        int64_t bn, int threads, int stages, const std::string& name) {
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, f8e4m3), B = T.Tensor("B", {N, K}, f8e4m3);
  auto SA = T.Tensor("SA", {KBlocks, MP}, f32), SB = T.Tensor("SB", {NBlocks, KBlocks}, f32);
  auto D = T.Tensor("D", {M, N}, bf16);
  T.Launch({CeilDiv(N, bn), CeilDiv(M, bm)}, threads, [&](Index bx, Index by) {
    T.Require(SB.dim(1) <= Index(kMaxKBlocks));
    // B's scales of the tile's column blocks, every k-block.
    Buffer acc = BlockScaledProduct(
        T, bm, bn, stages, CeilDiv(K, kScaleBlock), SB.Tile(bx * (bn / kScaleBlock), 0),
        [&](Index k) { return A.Tile(by * bm, k * kScaleBlock); },
        [&](Index k) { return B.Tile(bx * bn, k * kScaleBlock); },
        [&](Index k) { return SA.Tile(k, by * bm); });
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
