//===- gemm_w4a16.cc - Y = X * dequant(W), 4-bit weights ------------------===//
//
// A weight-only quantized GEMM as LLM inference runs it: X (M x K) in f16,
// W (K x N) stored as 4-bit integers packed eight to an int32 along K
// (Wq: K/8 x N; nibble i of Wq[p, n], bits 4i to 4i + 3, is W[8p + i, n])
// with one f16 scale per column and group of 128 rows (S: ceil(K/128) x
// N), each weight (q - 8) * scale. Each pipelined iteration loads the
// packed tile (a quarter of the bytes of an f16 one) and its scales, unpacks
// and scales the weights into an f16 tile in shared memory, and feeds the
// tensor cores. K is a multiple of 8 (whole int32 words). For a few rows of
// X, examples/gemv_w4a16.cc is faster.
//
//   bazel run //examples:gemm_w4a16 -- --target=sm_80 --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/gemm_w4a16.h"

#include "examples/common/example.h"

namespace tessera::examples {

Kernel GemmW4A16(Dim M, Dim N, Dim K, const W4A16Config& c, const std::string& name) {
  KernelBuilder T(name);
  Dim packed = Dim::Dynamic("KP"), groups = Dim::Dynamic("G");
  auto X = T.Tensor("X", {M, K}, f16), Wq = T.Tensor("Wq", {packed, N}, i32);
  auto S = T.Tensor("S", {groups, N}, f16), Y = T.Tensor("Y", {M, N}, f16);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.bm)}, c.threads, [&](Index bx, Index by) {
    RequireW4A16Shapes(T, X, Wq, S);
    auto Xs = T.AllocShared({c.bm, c.bk}, f16, "Xs");
    auto Qs = T.AllocShared({c.bk / kW4PerWord, c.bn}, i32, "Qs");
    auto Ss = T.AllocShared({1, c.bn}, f16, "Ss");
    auto Ws = T.AllocShared({c.bk, c.bn}, f16, "Ws");
    auto acc = T.AllocFragment({c.bm, c.bn}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, c.bk), c.stages, [&](Index k) {
      T.Copy(X.Tile(by * c.bm, k * c.bk), Xs);
      T.Copy(Wq.Tile(k * (c.bk / kW4PerWord), bx * c.bn), Qs);
      // The k-tile lies in one group of 128 rows (bk divides 128).
      T.Copy(S.Tile(k * c.bk / kW4Group, bx * c.bn), Ss);
      T.Parallel({c.bk, c.bn}, [&](Index i, Index j) {
        Scalar word = Qs(i / kW4PerWord, j);
        Scalar q = ShiftRightLogical(word, ToScalar(i % kW4PerWord * 4, i32)) & 0xF;
        Ws(i, j) = Cast(Cast(q - 8, f32) * Cast(Ss(0, j), f32), f16);
      });
      T.Gemm(Xs, Ws, acc);
    });
    auto out = T.AllocFragment({c.bm, c.bn}, f16, "out");
    T.Parallel({c.bm, c.bn}, [&](Index i, Index j) { out(i, j) = Cast(acc(i, j), f16); });
    T.Copy(out, Y.Tile(by * c.bm, bx * c.bn));
  });
  return T.Build();
}

Example GemmW4A16Example() {
  return {"gemm_w4a16", [](const std::string& target) {
            return GemmW4A16(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                             W4A16Config::ForTarget(target), "gemm_w4a16");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::GemmW4A16Example())
