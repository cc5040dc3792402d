//===- kernel_order_test.cc - WaitForPriorKernels, LaunchDependents -------===//
//
// A kernel that waits for the kernels before it compiles on every target;
// sm_90a records it for a launch with programmatic stream serialization and
// emits griddepcontrol, the others emit nothing; the wait must come before
// the kernel's first access to global memory, at the top level, once, and
// misuse is an error in Kernel::status(), never an abort.
//
//===----------------------------------------------------------------------===//

#include <functional>
#include <string>

#include "frontend/Tessera.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// A row copy whose body runs `before` first, then copies row `bx` of X to Y.
Kernel RowCopy(const std::function<void(KernelBuilder&, Tensor&)>& before) {
  KernelBuilder T("row_copy");
  Dim n = Dim::Dynamic("N");
  auto X = T.Tensor("X", {n, 64}, f32), Y = T.Tensor("Y", {n, 64}, f32);
  T.Launch({n}, 64, [&](Index bx) {
    before(T, X);
    auto row = T.AllocFragment({1, 64}, f32, "row");
    T.Copy(X.Tile(bx, 0), row);
    T.Copy(row, Y.Tile(bx, 0));
  });
  return T.Build();
}

TEST(KernelOrder, OnlyGridDependencyControlTargetsLaunchEarly) {
  Kernel kernel = RowCopy([](KernelBuilder& T, Tensor& X) {
    T.Require(X.dim(0) > 0);  // Dimensions are launch arguments: allowed before.
    T.WaitForPriorKernels();
    T.LaunchDependents();
  });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  EXPECT_THAT(kernel.ToString(), HasSubstr("tile.wait_prior_kernels"));
  EXPECT_THAT(kernel.ToString(), HasSubstr("tile.launch_dependents"));
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    const bool early = std::string(target) == "sm_90a";
    EXPECT_EQ(compiled->waits_for_prior_kernels(), early) << target;
    if (early) {
      EXPECT_THAT(compiled->ptx(), HasSubstr("griddepcontrol.wait;"));
      EXPECT_THAT(compiled->ptx(), HasSubstr("griddepcontrol.launch_dependents;"));
      // The wait precedes every load of global memory.
      EXPECT_LT(compiled->ptx().find("griddepcontrol.wait;"), compiled->ptx().find("ld.global"));
    } else {
      EXPECT_THAT(compiled->ptx(), Not(HasSubstr("griddepcontrol")));
    }
  }
}

TEST(KernelOrder, LaunchDependentsAloneLaunchesAsAnyOther) {
  Kernel kernel = RowCopy([](KernelBuilder& T, Tensor&) { T.LaunchDependents(); });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  auto compiled = kernel.Compile({"sm_90a"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(compiled->waits_for_prior_kernels());
}

/// The status of a one-block kernel whose body is `body`.
std::string Misuse(const std::function<void(KernelBuilder&, Tensor&)>& body) {
  KernelBuilder T("misuse");
  auto X = T.Tensor("X", {Dim::Dynamic("N"), 32}, f32);
  T.Launch({1}, 32, [&](Index) { body(T, X); });
  return std::string(T.Build().status().message());
}

TEST(KernelOrder, TheWaitPrecedesEveryAccessAtTheTopLevelOnce) {
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                auto s = T.AllocShared({4, 32}, f32);
                T.Copy(X.Tile(0, 0), s);
                T.WaitForPriorKernels();
              }),
              HasSubstr("follows an access to global memory ('tile.copy')"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                auto s = T.AllocShared({4, 32}, f32);
                T.Serial(X.dim(0), [&](Index i) { T.Copy(s, X.Tile(i * 4, 0)); });
                T.WaitForPriorKernels();
              }),
              HasSubstr("follows an access to global memory ('tile.copy')"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor&) {
                T.WaitForPriorKernels();
                T.WaitForPriorKernels();
              }),
              HasSubstr("appears twice in one kernel"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                T.Serial(X.dim(0), [&](Index) { T.WaitForPriorKernels(); });
              }),
              HasSubstr("WaitForPriorKernels inside a loop or branch"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor&) {
                T.Parallel({32}, [&](Index) { T.LaunchDependents(); });
              }),
              HasSubstr("LaunchDependents inside a loop or branch"));
  KernelBuilder T("outside");
  T.WaitForPriorKernels();
  EXPECT_THAT(std::string(T.Build().status().message()),
              HasSubstr("WaitForPriorKernels is only valid inside KernelBuilder::Launch's body"));
}

}  // namespace
}  // namespace tessera
