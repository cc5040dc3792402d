//===- rmsnorm.cc - RMSNorm: y = x / sqrt(mean(x^2) + eps) * w ------------===//
//
// One row per block, held in registers as f32: one reduction (the sum of
// squares), one reciprocal square root per row, then the scale by the
// weight row. The input is read once and the output written once.
//
//   bazel run //examples:rmsnorm -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"
#include "examples/norms.h"

namespace tessera::examples {

Kernel RmsNorm(Dim rows, int64_t n, DType dtype, int threads, const std::string& name) {
  KernelBuilder T(name);
  auto X = T.Tensor("X", {rows, n}, dtype), W = T.Tensor("W", {1, n}, dtype),
       Y = T.Tensor("Y", {rows, n}, dtype);
  T.Launch({rows}, threads, [&](Index row) {
    auto x = T.AllocFragment({1, n}, f32, "x"), w = T.AllocFragment({1, n}, f32, "w");
    auto squares = T.AllocFragment({1, n}, f32, "squares");
    auto scale = T.AllocFragment({1}, f32, "scale");
    T.Copy(X.Tile(row, 0), x);
    T.Copy(W.Tile(0, 0), w);
    T.Parallel({1, n}, [&](Index i, Index j) { squares(i, j) = x(i, j) * x(i, j); });
    T.ReduceSum(squares, scale);
    T.Parallel({1}, [&](Index i) { scale(i) = Rsqrt(scale(i) * (1.0 / n) + 1e-6); });
    T.Parallel({1, n}, [&](Index i, Index j) { x(i, j) = x(i, j) * scale(i) * w(i, j); });
    T.Copy(x, Y.Tile(row, 0));
  });
  return T.Build();
}

Example RmsNormExample() {
  return {"rmsnorm_f16", [](const std::string&) { return RmsNorm(Dim::Dynamic("M"), 8192, f16, 256, "rmsnorm_f16"); }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::RmsNormExample())
