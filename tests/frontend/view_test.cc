//===- view_test.cc - KernelBuilder::TensorAt (pointer arrays) ------------===//
//
// A tensor at an address read from a pointer array compiles on every
// target: the address is one 64-bit load, `align` turns into a trap on a
// broken promise and 16-byte accesses, no align into element accesses, and
// sm_90a copies it without tensor maps. Misuse is an error in
// Kernel::status() naming the view, never an abort.
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

/// Copies a 16 x 64 tile of group bx's matrix (rows from Rows, 64 columns,
/// at Ptrs[bx]) into row block bx of Y.
Kernel GatherGroups(int64_t align) {
  KernelBuilder T("gather_groups");
  Dim g = Dim::Dynamic("G");
  auto Ptrs = T.Tensor("Ptrs", {g}, i64), Rows = T.Tensor("Rows", {g}, i32);
  auto Y = T.Tensor("Y", {g, 16, 64}, f32);
  T.Launch({g}, 64, [&](Index bx) {
    auto A = T.TensorAt(Ptrs, {bx}, {Rows(bx), Index(64)}, f32, "A", {{}, align});
    auto tile = T.AllocFragment({16, 64}, f32, "tile");
    T.Copy(A.Tile(0, 0), tile);
    T.Copy(tile, Y.Tile(bx, 0, 0).Along({1, 2}));
  });
  return T.Build();
}

TEST(View, CompilesOnEveryTarget) {
  for (int64_t align : {0, 16}) {
    Kernel kernel = GatherGroups(align);
    ASSERT_TRUE(kernel.status().ok()) << kernel.status();
    EXPECT_THAT(kernel.ToString(), HasSubstr("tile.view"));
    for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
      auto compiled = kernel.Compile({target});
      ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
      const std::string& ptx = compiled->ptx();
      EXPECT_THAT(ptx, HasSubstr("ld.global.b64")) << target;
      if (align) {
        EXPECT_THAT(ptx, HasSubstr("trap;")) << target;
        EXPECT_THAT(ptx, HasSubstr("ld.global.v4.b32")) << target;
      } else {
        EXPECT_THAT(ptx, Not(HasSubstr("trap;"))) << target;
        EXPECT_THAT(ptx, Not(HasSubstr("ld.global.v4"))) << target;
      }
      EXPECT_EQ(compiled->tensor_maps_size(), 0) << target;
    }
  }
}

/// The status of a one-block kernel whose body is `body`.
std::string Misuse(const std::function<void(KernelBuilder&, Tensor&, Tensor&)>& body) {
  KernelBuilder T("misuse");
  auto Ptrs = T.Tensor("Ptrs", {Dim::Dynamic("G")}, i64);
  auto Rows = T.Tensor("Rows", {Dim::Dynamic("R")}, i32);
  T.Launch({1}, 32, [&](Index) { body(T, Ptrs, Rows); });
  return std::string(T.Build().status().message());
}

TEST(View, MisuseIsAnErrorNamingTheView) {
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor&, Tensor& Rows) {
                T.TensorAt(Rows, {Index(0)}, {Index(4)}, f32, "A");
              }),
              HasSubstr("TensorAt 'A': the pointer tensor 'Rows' holds i32; addresses are i64"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
                T.TensorAt(Ptrs, {Index(0), Index(1)}, {Index(4)}, f32, "A");
              }),
              HasSubstr("TensorAt 'A': the pointer tensor 'Ptrs' has rank 1 but 2 indices"));
  EXPECT_THAT(
      Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
        T.TensorAt(Ptrs, {Index(0)}, {Index(4), Index(4)}, f32, "A", {{Index(4), Index(1)}, 0});
      }),
      HasSubstr("a view of rank 2 takes 1 strides"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
                T.TensorAt(Ptrs, {Index(0)}, {}, f32, "A");
              }),
              HasSubstr("a view has at least one dimension"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
                T.TensorAt(Ptrs, {Index(0)}, {Index(4), Index(3)}, f32, "A", {{}, 16});
              }),
              HasSubstr("promises rows of a multiple of 16 bytes"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
                T.Parallel({32}, [&](Index i) { T.TensorAt(Ptrs, {i}, {Index(4)}, f32, "A"); });
              }),
              HasSubstr("TensorAt 'A': inside a Parallel body"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
                T.Pipelined(4, 2, [&](Index k) { T.TensorAt(Ptrs, {k}, {Index(4)}, f32, "A"); });
              }),
              HasSubstr("TensorAt 'A': inside a Pipelined body"));
  // A view made in a branch is the branch's.
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor& Rows) {
                Tensor* made = nullptr;
                Tensor A = Ptrs;
                T.If(Rows(0) > Index(0), [&] {
                  A = T.TensorAt(Ptrs, {Index(0)}, {Index(4)}, f32, "A");
                  made = &A;
                });
                auto x = T.AllocFragment({4}, f32, "x");
                T.Copy(made->Tile(0), x);
              }),
              HasSubstr("Tensor 'A' (a TensorAt view) is used outside the body that made it"));
  // A failed view's later uses report nothing more than its own error.
  std::string failed = Misuse([](KernelBuilder& T, Tensor&, Tensor& Rows) {
    Tensor A = T.TensorAt(Rows, {Index(0)}, {Index(4)}, f32, "A");
    auto x = T.AllocFragment({4}, f32, "x");
    T.Copy(A.Tile(0), x);
    (void)A.dim(0);
  });
  EXPECT_THAT(failed, HasSubstr("addresses are i64"));
  EXPECT_THAT(failed, Not(HasSubstr("not among the arguments")));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor&) {
                T.TensorAt(Ptrs, {Index(0)}, {Index(0), Index(8)}, f32, "A");
              }),
              HasSubstr("TensorAt 'A': a static extent of 0; a constant extent must be positive"));
}

TEST(View, SizesFromDataAreNotPreconditions) {
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& Ptrs, Tensor& Rows) {
                Tensor A = T.TensorAt(Ptrs, {Index(0)}, {Rows(0)}, f32, "A");
                T.Require(A.dim(0) > Index(0));
              }),
              HasSubstr("its tensor is a tile.view, whose sizes come from data"));
}

}  // namespace
}  // namespace tessera
