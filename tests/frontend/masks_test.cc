//===- masks_test.cc - Comparisons, selects and slices in the frontend ----===//
//
// Builds attention-shaped kernels with the frontend: causal masks written as
// comparisons of global indices and Select, loop counts that depend on the
// block index, tiles that are [rows, dim] slices of [batch, seq, heads, dim]
// tensors; and checks that misuse is an error in Kernel::status(), never an
// abort.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tessera.h"

#include <cmath>

#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

void ExpectError(const Kernel &kernel, const std::string &what) {
  ASSERT_FALSE(kernel.status().ok());
  EXPECT_NE(std::string(kernel.status().message()).find(what), std::string::npos)
      << kernel.status();
}

TEST(Masks, IndexZeroIsTheConstantZero) {
  Index zero(0);
  EXPECT_EQ(zero.handle(), nullptr);
  EXPECT_EQ(zero.constant(), 0);
  EXPECT_EQ(Index(0).constant(), 0);
}

TEST(Masks, StatementsOutsideLaunchAreErrorsNotAborts) {
  KernelBuilder T("early");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  auto x = T.AllocFragment({64}, f32);
  T.Copy(A.Tile(0), x);
  T.Launch({1}, 64, [&](Index) { T.Copy(x, A.Tile(0)); });
  Kernel kernel = T.Build();
  ExpectError(kernel, "AllocFragment is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Copy is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Copy uses a buffer that was not allocated inside Launch's body");
}

TEST(Masks, ArithmeticWithNoBuilderIsReportedByTheNextOne) {
  Scalar escaped(0.0);
  {
    KernelBuilder T("first");
    auto A = T.Tensor("A", {Dim(64)}, f32);
    T.Launch({1}, 64, [&](Index) {
      auto x = T.AllocFragment({64}, f32);
      T.Copy(A.Tile(0), x);
      T.Parallel({64}, [&](Index i) { escaped = x(i); });
    });
    ASSERT_TRUE(T.Build().status().ok());
  }
  (void)Exp(escaped);
  KernelBuilder T("second");
  T.Launch({1}, 32, [&](Index) {});
  ExpectError(T.Build(), "Exp is only valid inside KernelBuilder::Launch's body");
}

} // namespace
} // namespace tessera
