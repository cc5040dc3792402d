//===- softmax_varlen.cc - Softmax over packed variable-length rows -------===//
//
// Sequences of different lengths packed end to end (no padding), as
// variable-length batches are: X holds B rows back to back in one [1, T]
// tensor and Cu (B + 1 entries, i32) their cumulative lengths, row b being
// X[0, Cu[b] : Cu[b + 1]]. Y gets each row's softmax in the same layout.
// One block per row walks it in chunks with a Serial loop: first the
// online maximum and sum, then the normalized values. The row's start and
// end come from Cu (indices read from data), and each chunk's tile ends at
// the row's end (TileRef::Until), so the neighbouring rows are neither read
// nor overwritten. The grid has B + 1 blocks (Cu's length); the last one's
// row is empty.
//
//   bazel run //examples:softmax_varlen -- --target=sm_80 --emit=ptx
//
//===----------------------------------------------------------------------===//

#include <cmath>

#include "examples/common/example.h"

namespace tessera::examples {

Kernel SoftmaxVarlen(DType dtype, int64_t chunk, int threads, const std::string& name) {
  constexpr double kLog2e = 1.4426950408889634;
  KernelBuilder T(name);
  Dim total = Dim::Dynamic("T"), rows = Dim::Dynamic("B1");
  auto X = T.Tensor("X", {1, total}, dtype), Y = T.Tensor("Y", {1, total}, dtype);
  auto Cu = T.Tensor("Cu", {rows}, i32);
  T.Launch({rows}, threads, [&](Index b) {
    auto x = T.AllocFragment({1, chunk}, f32, "x"), y = T.AllocFragment({1, chunk}, dtype, "y");
    auto m = T.AllocFragment({1}, f32, "m");    // running maximum (log2 units)
    auto mx = T.AllocFragment({1}, f32, "mx");  // the chunk's maximum
    auto l = T.AllocFragment({1}, f32, "l");    // running sum
    Index start = Cu(b), stop = Cu(b + 1);
    Index chunks = CeilDiv(stop - Min(stop, start), Index(chunk));
    T.Fill(m, -INFINITY);
    T.Clear(l);
    T.Serial(chunks, [&](Index c) {
      Index at = start + c * chunk;
      T.Copy(X.Tile(0, at).Until(stop, 1), x);
      T.Parallel({1, chunk}, [&](Index i, Index j) {
        x(i, j) = Select(at + j < stop, x(i, j) * kLog2e, -INFINITY);
      });
      T.ReduceMax(x, mx);
      T.Parallel({1}, [&](Index i) {
        Scalar top = Max(m(i), mx(i));
        l(i) = l(i) * Exp2(m(i) - top);
        m(i) = top;
      });
      T.Parallel({1, chunk}, [&](Index i, Index j) { x(i, j) = Exp2(x(i, j) - m(i)); });
      T.ReduceSum(x, l, /*clear=*/false);
    });
    T.Serial(chunks, [&](Index c) {
      Index at = start + c * chunk;
      T.Copy(X.Tile(0, at).Until(stop, 1), x);
      T.Parallel({1, chunk}, [&](Index i, Index j) {
        y(i, j) = Cast(Exp2(x(i, j) * kLog2e - m(i)) / l(i), dtype);
      });
      T.Copy(y, Y.Tile(0, at).Until(stop, 1));
    });
  });
  return T.Build();
}

Example SoftmaxVarlenExample() {
  return {"softmax_varlen", [](const std::string&) {
            return SoftmaxVarlen(f16, /*chunk=*/2048, /*threads=*/256, "softmax_varlen");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::SoftmaxVarlenExample())
