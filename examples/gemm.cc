//===- gemm.cc - Tiled GEMM: C = A * B ------------------------------------===//
//
// Each block computes a BM x BN tile of C: it walks K in steps of BK,
// copying tiles of A and B into shared memory and accumulating their product
// into an f32 fragment, then stores the fragment converted to C's type. The
// backend picks the instructions (FMA, mma.sync, wgmma) and the pipelining
// strategy; tails in M, N and K are the compiler's job.
//
//   bazel run //examples:gemm -- --target=sm_80 --emit=ptx
//   bazel run //examples:gemm              # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/gemm.h"

#include "examples/common/example.h"

namespace tessera::examples {

Kernel Gemm(Dim M, Dim N, Dim K, const GemmConfig& c, const std::string& name) {
  KernelBuilder T(name);
  auto A = T.Tensor("A", {M, K}, c.dtype);
  auto B = c.transposeB ? T.Tensor("B", {N, K}, c.dtype) : T.Tensor("B", {K, N}, c.dtype);
  auto C = T.Tensor("C", {M, N}, c.out.value_or(c.dtype));
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm)}, c.threads, [&](Index x, Index y) {
    std::pair<Index, Index> block =
        c.group ? SwizzleBlocks(x, y, CeilDiv(C.dim(1), c.bn), CeilDiv(C.dim(0), c.bm), c.group)
                : std::pair<Index, Index>{x, y};
    Index bx = block.first, by = block.second;
    if (c.pingpong) T.PingPong();
    if (c.persistent) T.Persistent();
    if (c.streamK) T.StreamK();
    if (c.multicast) T.Multicast(c.multicastBlocks);
    if (c.edgeLoop) T.EdgeLoop();
    auto As = T.AllocShared({c.bm, c.bk}, c.dtype, "As");
    auto Bs = c.transposeB ? T.AllocShared({c.bn, c.bk}, c.dtype, "Bs")
                           : T.AllocShared({c.bk, c.bn}, c.dtype, "Bs");
    auto acc = T.AllocFragment({c.bm, c.bn}, c.acc, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, c.bk), c.stages, [&](Index k) {
      T.Copy(A.Tile(by * c.bm, k * c.bk), As);
      if (c.transposeB)
        T.Copy(B.Tile(bx * c.bn, k * c.bk), Bs);
      else
        T.Copy(B.Tile(k * c.bk, bx * c.bn), Bs);
      T.Gemm(As, Bs, acc, c.precision, /*transposeA=*/false, c.transposeB);
    });
    T.Copy(acc, C.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Kernel GemmDynamic(const GemmConfig& c, const std::string& name) {
  return Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8), c, name);
}

Example GemmExample() {
  Example example{"gemm_f16", [](const std::string& target) {
                    return GemmDynamic(GemmConfig::ForTarget(target), "gemm_f16");
                  }};
  example.knobs = {{"dtype", "f16 or bf16 (the kernel becomes gemm_bf16)"},
                   {"bm", "rows of C per block"},
                   {"bn", "columns of C per block"},
                   {"bk", "depth of a k-step"},
                   {"stages", "shared-memory stages of the k-loop"},
                   {"threads", "threads per block"}};
  example.configure = [](const std::string& target, KnobValues& knobs) {
    GemmConfig c = GemmConfig::ForTarget(target);
    c.dtype = knobs.Float16("dtype", c.dtype);
    ApplyTileKnobs(knobs, c);
    c.bk = knobs.Int("bk", c.bk);
    return GemmDynamic(c, c.dtype == bf16 ? "gemm_bf16" : "gemm_f16");
  };
  return example;
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::GemmExample())
