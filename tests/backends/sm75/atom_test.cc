//===- atom_test.cc - The test backend's own atom is selected and lowered -===//

#include <string>

#include "frontend/Tessera.h"
#include "gtest/gtest.h"

namespace tessera::testing {
namespace {

/// C = A * B on one 64 x 64 block tile with a K step of `kTile`, the gemm's
/// atom forced to `atom` when given.
Kernel SmallGemm(int64_t kTile, const std::string &atom) {
  KernelBuilder T("small_gemm");
  Dim M = Dim::Dynamic("M"), N = Dim::Dynamic("N"), K = Dim::Dynamic("K");
  auto A = T.Tensor("A", {M, K}, f16), B = T.Tensor("B", {K, N}, f16);
  auto C = T.Tensor("C", {M, N}, f32);
  T.Launch({CeilDiv(N, 64), CeilDiv(M, 64)}, 128, [&](Index bx, Index by) {
    auto As = T.AllocShared({64, kTile}, f16), Bs = T.AllocShared({kTile, 64}, f16);
    auto acc = T.AllocFragment({64, 64}, f32);
    T.Clear(acc);
    T.Pipelined(CeilDiv(K, kTile), 2, [&](Index k) {
      T.Copy(A.Tile(by * 64, k * kTile), As);
      T.Copy(B.Tile(k * kTile, bx * 64), Bs);
      T.Gemm(As, Bs, acc, false, false, atom);
    });
    T.Copy(acc, C.Tile(by * 64, bx * 64));
  });
  return T.Build();
}

absl::StatusOr<std::string> Ptx(const Kernel &kernel, const std::string &target) {
  CompileOptions options;
  options.target = target;
  return kernel.GetKernelSource(Stage::kPTX, options);
}

TEST(TestSm75Backend, ItsOwnPipeliningStrategyRunsThePipelinedLoop) {
  CompileOptions options;
  options.target = "sm_75";
  absl::StatusOr<std::string> tile = SmallGemm(16, "").GetKernelSource(Stage::kTile, options);
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_NE(tile->find("strategy = \"test-sm75-single-stage-prefetch\""), std::string::npos)
      << *tile;
  // The strategy asked for one stage (PipelineStrategy::stagesFor), so the
  // staged buffers are planned once: 2 KiB each, 4 KiB in all.
  EXPECT_NE(tile->find("stages = 1 : i64"), std::string::npos) << *tile;
  EXPECT_NE(tile->find("tile.shared_memory_bytes = 4096"), std::string::npos) << *tile;
  absl::StatusOr<std::string> ptx = Ptx(SmallGemm(16, ""), "sm_75");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  // The strategy's shape: loads of the next tiles before the compute, two
  // barriers around the store over the single stage; no cp.async.
  EXPECT_EQ(ptx->find("cp.async"), std::string::npos);
  EXPECT_NE(ptx->find("bar.sync"), std::string::npos);
}

TEST(TestSm75Backend, CompilesAGemmWithItsOwnAtomByName) {
  absl::StatusOr<std::string> ptx = Ptx(SmallGemm(16, "TEST_SM75_SIMT_1x1x2_F32"), "sm_75");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find(".target sm_75"), std::string::npos);
  EXPECT_NE(ptx->find("fma.rn.f32"), std::string::npos);
}

TEST(TestSm75Backend, ItsAtomIsRefusedWhereKIsOdd) {
  absl::StatusOr<std::string> ptx = Ptx(SmallGemm(15, "TEST_SM75_SIMT_1x1x2_F32"), "sm_75");
  ASSERT_FALSE(ptx.ok());
  EXPECT_NE(std::string(ptx.status().message()).find("TEST_SM75_SIMT_1x1x2_F32"),
            std::string::npos)
      << ptx.status();
}

TEST(TestSm75Backend, OddKFallsBackToTheBuiltInSimtAtom) {
  absl::StatusOr<std::string> ptx = Ptx(SmallGemm(15, ""), "sm_75");
  EXPECT_TRUE(ptx.ok()) << ptx.status();
}

TEST(TestSm75Backend, ItsAtomIsUnknownToOtherBackends) {
  absl::StatusOr<std::string> ptx = Ptx(SmallGemm(16, "TEST_SM75_SIMT_1x1x2_F32"), "sm_80");
  ASSERT_FALSE(ptx.ok());
  EXPECT_NE(std::string(ptx.status().message()).find("TEST_SM75_SIMT_1x1x2_F32"),
            std::string::npos)
      << ptx.status();
}

} // namespace
} // namespace tessera::testing
