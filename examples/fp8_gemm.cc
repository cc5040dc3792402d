//===- fp8_gemm.cc - FP8 GEMM with per-tensor scales ----------------------===//
//
// D = e4m3(scale_out * scale_a * scale_b * A B^T): A (M x K) and B (N x K)
// hold FP8 e4m3 values that are the quantized tensors divided by their
// per-tensor scales, the product accumulates in f32, and the epilogue
// applies the scales and the output's quantization scale and casts to e4m3
// (rounded to nearest even, saturated to +-448) in registers before the one
// store of D. It is the GEMM of torch._scaled_mm with e4m3 output. B is
// stored N x K because FP8 tensor cores read both operands K-major. On
// sm_90a the gemm is wgmma.mma_async ... .e4m3.e4m3 fed by TMA in a
// warp-specialized, persistent loop; targets without FP8 tensor cores run
// it on CUDA cores (exact products, f32 sums).
//
//   bazel run //examples:fp8_gemm -- --target=sm_90a --emit=ptx
//   bazel run //examples:fp8_gemm              # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/fp8_gemm.h"

#include "examples/common/example.h"

namespace tessera::examples {

Fp8GemmConfig Fp8GemmConfig::ForTarget(const std::string& target) {
  Fp8GemmConfig c;
  if (target == "sm_90a") {
    // Two warpgroups of 64 x 256 wgmma accumulators over 128-byte k-tiles:
    // 48 KiB per stage.
    c.bm = 128, c.bn = 256, c.bk = 128;
    c.stages = 4, c.threads = 256, c.persistent = true;
  }
  return c;
}

Kernel Fp8Gemm(Dim M, Dim N, Dim K, const Fp8GemmConfig& c, const std::string& name) {
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, f8e4m3), B = T.Tensor("B", {N, K}, f8e4m3);
  Scalar scaleA = T.ScalarArg("scale_a", f32), scaleB = T.ScalarArg("scale_b", f32);
  Scalar scaleOut = T.ScalarArg("scale_out", f32);
  auto D = T.Tensor("D", {M, N}, f8e4m3);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm)}, c.threads, [&](Index x, Index y) {
    auto block = SwizzleBlocks(x, y, CeilDiv(D.dim(1), c.bn), CeilDiv(D.dim(0), c.bm), c.group);
    Index bx = block.first, by = block.second;
    if (c.pingpong) T.PingPong();
    if (c.persistent) T.Persistent();
    if (c.multicast) T.Multicast(c.multicastBlocks);
    auto As = T.AllocShared({c.bm, c.bk}, f8e4m3, "As");
    auto Bs = T.AllocShared({c.bn, c.bk}, f8e4m3, "Bs");
    auto acc = T.AllocFragment({c.bm, c.bn}, f32, "acc");
    auto out = T.AllocFragment({c.bm, c.bn}, f8e4m3, "out");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, c.bk), c.stages, [&](Index k) {
      T.Copy(A.Tile(by * c.bm, k * c.bk), As);
      T.Copy(B.Tile(bx * c.bn, k * c.bk), Bs);
      T.Gemm(As, Bs, acc, /*transposeA=*/false, /*transposeB=*/true);
    });
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) {
      out(i, j) = Cast(acc(i, j) * (scaleA * scaleB * scaleOut), f8e4m3);
    });
    T.Copy(out, D.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Example Fp8GemmExample() {
  return {"fp8_gemm", [](const std::string& target) {
            return Fp8Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 16), Dim::Dynamic("K", 16),
                           Fp8GemmConfig::ForTarget(target), "fp8_gemm");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::Fp8GemmExample())
