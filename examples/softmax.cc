//===- softmax.cc - Numerically stable row softmax ------------------------===//
//
// One block per row block: the rows are read once into registers (f32),
// reduced to their maxima, exponentiated (exp2 with the log2(e) scale, the
// fast hardware form), reduced to their sums, scaled and written once. Any
// row length works: elements past the row's end are never read or reduced.
// SoftmaxOnline is the form for long rows (a vocabulary's): two passes over
// chunks of the row, the first keeping a running maximum and sum.
//
//   bazel run //examples:softmax -- --target=sm_90a --emit=ptx
//   bazel run //examples:softmax          # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/softmax.h"

#include <limits>

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

Kernel SoftmaxOnline(Dim rows, int64_t n, DType dtype, int64_t chunk, int threads,
                     const std::string& name) {
  KernelBuilder T(name);
  auto X = T.Tensor("X", {rows, n}, dtype), Y = T.Tensor("Y", {rows, n}, dtype);
  // The fewest chunks of at most `chunk` columns that tile the row exactly
  // (a chunk past the row's end would reduce elements that are not there);
  // where no divisor gives chunks of at least a quarter of `chunk` (a prime
  // row length), one chunk: the whole row.
  const int64_t fewest = (n + chunk - 1) / chunk;
  int64_t chunks = fewest;
  while (n % chunks != 0 && chunks < 4 * fewest)
    ++chunks;
  if (n % chunks != 0)
    chunks = 1;
  chunk = n / chunks;
  const double kLog2e = 1.4426950408889634;
  T.Launch({rows}, threads, [&](Index bx) {
    auto x = T.AllocFragment({1, chunk}, f32, "x");
    auto rowMax = T.AllocFragment({1}, f32, "row_max");
    auto rowSum = T.AllocFragment({1}, f32, "row_sum");
    auto lastMax = T.AllocFragment({1}, f32, "last_max");
    T.Fill(rowMax, -std::numeric_limits<double>::infinity());
    T.Fill(rowSum, 0.0);
    // Pass 1: the running maximum and the sum of exponentials relative to
    // it, rescaled whenever the maximum grows (online softmax).
    T.Pipelined(chunks, 2, [&](Index c) {
      T.Copy(X.Tile(bx, c * chunk), x);
      T.Parallel({1}, [&](Index i) { lastMax(i) = rowMax(i); });
      T.ReduceMax(x, rowMax, /*clear=*/false);
      T.Parallel({1}, [&](Index i) {
        rowSum(i) = rowSum(i) * Exp2((lastMax(i) - rowMax(i)) * kLog2e);
      });
      T.Parallel({1, chunk}, [&](Index i, Index j) {
        x(i, j) = Exp2((x(i, j) - rowMax(i)) * kLog2e);
      });
      T.ReduceSum(x, rowSum, /*clear=*/false);
    });
    T.Parallel({1}, [&](Index i) { rowSum(i) = 1.0 / rowSum(i); });
    // Pass 2: the row again (from L2 while it is there), scaled and written.
    T.Pipelined(chunks, 2, [&](Index c) {
      T.Copy(X.Tile(bx, c * chunk), x);
      T.Parallel({1, chunk}, [&](Index i, Index j) {
        x(i, j) = Exp2((x(i, j) - rowMax(i)) * kLog2e) * rowSum(i);
      });
      T.Copy(x, Y.Tile(bx, c * chunk));
    });
  });
  return T.Build();
}

Example SoftmaxExample() {
  return {"softmax_f16",
          [](const std::string&) { return Softmax(Dim::Dynamic("M"), 8192, f16, 1, 256, "softmax_f16"); }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::SoftmaxExample())
