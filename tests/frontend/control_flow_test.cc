//===- control_flow_test.cc - If, Serial and Unroll in the frontend -------===//
//
// Builds kernels with block-uniform control flow and checks the IR they
// hold, that every target compiles them, which schedules loops under and
// around them keep (a tile.if in a warp-specialized loop's body stays
// warp-specialized on sm_90a; a pipelined loop inside tile.serial takes
// cp.async instead, saying why), and that misuse is an error in
// Kernel::status(), never an abort.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <functional>

#include "frontend/Tessera.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

const char* const kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

/// C = A B over `k` k-tiles; with `masked` the accumulator's columns past
/// the row are cleared on the blocks that cross the diagonal (an If in the
/// loop's body); with `chunks` the loop sits inside a Serial over chunks of
/// K.
Kernel Gemm(bool masked, bool chunks) {
  KernelBuilder T("gemm");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8), k = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {m, k}, f16), B = T.Tensor("B", {k, n}, f16);
  auto C = T.Tensor("C", {m, n}, f32);
  T.Launch({CeilDiv(n, 128), CeilDiv(m, 128)}, 128, [&](Index bx, Index by) {
    auto As = T.AllocShared({128, 64}, f16, "As"), Bs = T.AllocShared({64, 128}, f16, "Bs");
    auto acc = T.AllocFragment({128, 128}, f32, "acc");
    T.Clear(acc);
    auto loop = [&](Index count, Index first) {
      T.Pipelined(count, 3, [&](Index kk) {
        T.Copy(A.Tile(by * 128, (first + kk) * 64), As);
        T.Copy(B.Tile((first + kk) * 64, bx * 128), Bs);
        T.Gemm(As, Bs, acc);
        if (masked)
          T.If(bx * 128 + 128 > by * 128, [&] {
            T.Parallel({128, 128}, [&](Index i, Index j) {
              acc(i, j) = Select(bx * 128 + j > by * 128 + i, 0.0, acc(i, j));
            });
          });
      });
    };
    Index tiles = CeilDiv(A.dim(1), Index(64));
    if (chunks)
      T.Serial(CeilDiv(tiles, Index(4)),
               [&](Index c) { loop(Min(Index(4), tiles - Min(tiles, c * 4)), c * 4); });
    else
      loop(tiles, Index(0));
    T.Copy(acc, C.Tile(by * 128, bx * 128));
  });
  return T.Build();
}

std::string Planned(const Kernel& kernel, const std::string& target) {
  auto text = kernel.GetKernelSource(Stage::kTile, {target});
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(ControlFlow, EveryTargetCompilesBranchesAndSerialLoops) {
  for (bool masked : {false, true})
    for (bool chunks : {false, true}) {
      Kernel kernel = Gemm(masked, chunks);
      ASSERT_TRUE(kernel.status().ok()) << kernel.status();
      std::string text = kernel.ToString();
      EXPECT_EQ(text.find("tile.if") != std::string::npos, masked) << text;
      EXPECT_EQ(text.find("tile.serial") != std::string::npos, chunks) << text;
      for (const char* target : kTargets)
        EXPECT_TRUE(kernel.Compile({target}).ok()) << target << masked << chunks;
    }
}

TEST(ControlFlow, BranchInAWarpSpecializedBodyKeepsTheScheduleOnSm90a) {
  std::string gpu = Planned(Gemm(/*masked=*/true, /*chunks=*/false), "sm_90a");
  EXPECT_NE(gpu.find("strategy = \"tma-warp-specialized\""), std::string::npos) << gpu;
}

TEST(ControlFlow, PipelinedInsideSerialIsNotWarpSpecialized) {
  std::string gpu = Planned(Gemm(/*masked=*/false, /*chunks=*/true), "sm_90a");
  EXPECT_EQ(gpu.find("tma-warp-specialized"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("strategy = \"cp-async-multistage\""), std::string::npos) << gpu;
}

TEST(ControlFlow, RemarksSayWhyTheNestedLoopIsNotWarpSpecialized) {
  auto remarks = Gemm(/*masked=*/false, /*chunks=*/true).GetRemarks({"sm_90a"});
  ASSERT_TRUE(remarks.ok()) << remarks.status();
  bool found = false;
  for (const std::string& remark : *remarks)
    found |= remark.find("control_flow_test.cc:") != std::string::npos &&
             remark.find(
                 "remark: pipelining with cp-async-multistage instead of "
                 "tma-warp-specialized: the kernel has a loop inside tile.if or "
                 "tile.serial") != std::string::npos;
  EXPECT_TRUE(found) << ::testing::PrintToString(*remarks);
  // At the top level the loop is warp-specialized: nothing to say about it.
  auto none = Gemm(/*masked=*/false, /*chunks=*/false).GetRemarks({"sm_90a"});
  ASSERT_TRUE(none.ok()) << none.status();
  for (const std::string& remark : *none)
    EXPECT_EQ(remark.find("pipelining with"), std::string::npos) << remark;
}

TEST(ControlFlow, ConstantConditionsBuildOneBranch) {
  KernelBuilder T("constant_if");
  auto Y = T.Tensor("Y", {Dim(32)}, f32);
  T.Launch({1}, 32, [&](Index) {
    auto y = T.AllocFragment({32}, f32, "y");
    T.If(
        Index(3) > Index(2), [&] { T.Fill(y, 1.0); }, [&] { T.Fill(y, 2.0); });
    T.Copy(y, Y.Tile(0));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_EQ(text.find("tile.if"), std::string::npos) << text;
  EXPECT_NE(text.find("1.000000e+00"), std::string::npos) << text;
  EXPECT_EQ(text.find("2.000000e+00"), std::string::npos) << text;
}

/// A kernel whose body is `body`; returns its status message.
std::string ErrorOf(const std::function<void(KernelBuilder&, Buffer, Index)>& body) {
  KernelBuilder T("misuse");
  auto Y = T.Tensor("Y", {Dim(32)}, f32);
  T.Launch({2}, 32, [&](Index bx) {
    auto y = T.AllocFragment({32}, f32, "y");
    body(T, y, bx);
    T.Copy(y, Y.Tile(0));
  });
  Kernel kernel = T.Build();
  EXPECT_FALSE(kernel.status().ok());
  return std::string(kernel.status().message());
}

TEST(ControlFlow, MisuseIsAnErrorInKernelStatus) {
  const int ifLine = __LINE__ + 2;
  std::string message = ErrorOf([](KernelBuilder& T, Buffer y, Index) {
    T.Parallel({32}, [&](Index i) { T.If(i > Index(3), [&] {}); });
  });
  EXPECT_NE(message.find("tests/frontend/control_flow_test.cc:" + std::to_string(ifLine) +
                         ": tessera: If inside a Parallel body; conditions there differ per "
                         "element: use Select"),
            std::string::npos)
      << message;
  message = ErrorOf(
      [](KernelBuilder& T, Buffer y, Index bx) { T.If(ToScalar(bx), [&] { T.Clear(y); }); });
  EXPECT_NE(message.find("If's condition takes a boolean (a comparison), not a scalar of type "
                         "f32"),
            std::string::npos)
      << message;
  message = ErrorOf([](KernelBuilder& T, Buffer y, Index bx) {
    T.If(bx == Index(0), [&] { T.AllocFragment({32}, f32, "inner"); });
  });
  EXPECT_NE(message.find("allocates a buffer inside tile.if; allocate it before"),
            std::string::npos)
      << message;
  message = ErrorOf([](KernelBuilder& T, Buffer y, Index) { T.Unroll(65, [&](Index) {}); });
  EXPECT_NE(message.find("unrolls 65 iterations, over the limit of 64"), std::string::npos)
      << message;
  message = ErrorOf([](KernelBuilder& T, Buffer y, Index) { T.Serial(Index(-2), [&](Index) {}); });
  EXPECT_NE(message.find("Serial count -2 is negative"), std::string::npos) << message;
}

}  // namespace
}  // namespace tessera
