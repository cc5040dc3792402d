//===- layernorm.cc - LayerNorm: y = (x - mean) / sqrt(var + eps) * w + b -===//
//
// One row per block, in registers as f32: the mean (one reduction), the
// variance of the centred row (a second reduction, numerically safer than
// E[x^2] - E[x]^2), then the affine transform. Read once, written once.
//
//   bazel run //examples:layernorm -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"
#include "examples/norms.h"

namespace tessera::examples {

Kernel LayerNorm(Dim rows, int64_t n, DType dtype, int threads, const std::string& name) {
  KernelBuilder T(name);
  auto X = T.Tensor("X", {rows, n}, dtype), W = T.Tensor("W", {1, n}, dtype),
       B = T.Tensor("B", {1, n}, dtype), Y = T.Tensor("Y", {rows, n}, dtype);
  T.Launch({rows}, threads, [&](Index row) {
    auto x = T.AllocFragment({1, n}, f32, "x"), t = T.AllocFragment({1, n}, f32, "t");
    auto w = T.AllocFragment({1, n}, f32, "w"), b = T.AllocFragment({1, n}, f32, "b");
    auto mean = T.AllocFragment({1}, f32, "mean"), scale = T.AllocFragment({1}, f32, "scale");
    T.Copy(X.Tile(row, 0), x);
    T.Copy(W.Tile(0, 0), w);
    T.Copy(B.Tile(0, 0), b);
    T.ReduceSum(x, mean);
    T.Parallel({1}, [&](Index i) { mean(i) = mean(i) * (1.0 / n); });
    T.Parallel({1, n}, [&](Index i, Index j) {
      x(i, j) = x(i, j) - mean(i);
      t(i, j) = x(i, j) * x(i, j);
    });
    T.ReduceSum(t, scale);
    T.Parallel({1}, [&](Index i) { scale(i) = Rsqrt(scale(i) * (1.0 / n) + 1e-5); });
    T.Parallel({1, n}, [&](Index i, Index j) {
      x(i, j) = x(i, j) * scale(i) * w(i, j) + b(i, j);
    });
    T.Copy(x, Y.Tile(row, 0));
  });
  return T.Build();
}

Example LayerNormExample() {
  return {"layernorm_f16",
          [](const std::string&) { return LayerNorm(Dim::Dynamic("M"), 8192, f16, 256, "layernorm_f16"); }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::LayerNormExample())
