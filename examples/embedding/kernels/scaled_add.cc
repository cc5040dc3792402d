//===- scaled_add.cc - A downstream project's kernel ----------------------===//

#include "kernels/scaled_add.h"

namespace embedding {

using namespace tessera;

Kernel ScaledAdd(Dim n, int64_t block, int threads) {
  KernelBuilder T("scaled_add");
  auto X = T.Tensor("X", {n}, f32), Y = T.Tensor("Y", {n}, f32);
  auto Out = T.Tensor("Out", {n}, f32);
  Scalar alpha = T.ScalarArg("alpha", f32);
  T.Launch({CeilDiv(n, block)}, threads, [&](Index bx) {
    auto x = T.AllocFragment({block}, f32, "x"), y = T.AllocFragment({block}, f32, "y");
    T.Copy(X.Tile(bx * block), x);
    T.Copy(Y.Tile(bx * block), y);
    T.Parallel({block}, [&](Index i) { x(i) = alpha * x(i) + y(i); });
    T.Copy(x, Out.Tile(bx * block));
  });
  return T.Build();
}

}  // namespace embedding
