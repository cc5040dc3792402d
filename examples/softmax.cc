//===- softmax.cc - Numerically stable row softmax ------------------------===//
//
// One block per row block: the rows are read once into registers (f32),
// reduced to their maxima, exponentiated (exp2 with the log2(e) scale, the
// fast hardware form), reduced to their sums, scaled and written once. Any
// row length works: elements past the row's end are never read or reduced.
//
//   bazel run //examples:softmax -- --target=sm_90a --emit=ptx
//   bazel run //examples:softmax          # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/softmax.h"

#include "examples/common/example.h"

namespace tessera::examples {

Kernel Softmax(Dim rows, int64_t n, DType dtype, int64_t rowsPerBlock, int threads,
               const std::string& name) {
  KernelBuilder T(name);
  auto X = T.Tensor("X", {rows, n}, dtype), Y = T.Tensor("Y", {rows, n}, dtype);
  T.Launch({CeilDiv(rows, rowsPerBlock)}, threads, [&](Index bx) {
    auto x = T.AllocFragment({rowsPerBlock, n}, f32, "x");
    auto rowMax = T.AllocFragment({rowsPerBlock}, f32, "row_max");
    auto rowSum = T.AllocFragment({rowsPerBlock}, f32, "row_sum");
    T.Copy(X.Tile(bx * rowsPerBlock, 0), x);
    T.ReduceMax(x, rowMax);
    const double kLog2e = 1.4426950408889634;
    T.Parallel({rowsPerBlock, n}, [&](Index i, Index j) {
      x(i, j) = Exp2((x(i, j) - rowMax(i)) * kLog2e);
    });
    T.ReduceSum(x, rowSum);
    T.Parallel({rowsPerBlock}, [&](Index i) { rowSum(i) = 1.0 / rowSum(i); });
    T.Parallel({rowsPerBlock, n}, [&](Index i, Index j) { x(i, j) = x(i, j) * rowSum(i); });
    T.Copy(x, Y.Tile(bx * rowsPerBlock, 0));
  });
  return T.Build();
}

Example SoftmaxExample() {
  return {"softmax_f16",
          [](const std::string&) { return Softmax(Dim::Dynamic("M"), 8192, f16, 1, 256, "softmax_f16"); }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::SoftmaxExample())
