//===- scaled_add_test.cc - The project's kernel compiles everywhere ------===//

#include <string>

#include "gtest/gtest.h"
#include "kernels/scaled_add.h"
#include "runtime/bundle.h"
#include "runtime/kernel.pb.h"

namespace embedding {
namespace {

class ScaledAddTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ScaledAddTest, CompilesToPtxWithItsSignature) {
  tessera::Kernel kernel = ScaledAdd(tessera::Dim::Dynamic("n"));
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  tessera::CompileOptions options;
  options.target = GetParam();
  absl::StatusOr<tessera::runtime::CompiledKernel> compiled = kernel.Compile(options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->target(), GetParam());
  EXPECT_EQ(compiled->entry(), "scaled_add");
  EXPECT_NE(compiled->ptx().find(".entry scaled_add"), std::string::npos);
  EXPECT_NE(compiled->ptx().find(std::string(".target ") + GetParam()), std::string::npos);
  ASSERT_EQ(compiled->params_size(), 4);
  EXPECT_EQ(compiled->params(3).name(), "alpha");
  EXPECT_EQ(compiled->block_threads(), 256);
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, ScaledAddTest,
                         ::testing::Values("sm_60", "sm_70", "sm_80", "sm_90a"));

TEST(ScaledAdd, UnknownTargetIsAnErrorNamingIt) {
  tessera::CompileOptions options;
  options.target = "sm_12";
  absl::StatusOr<tessera::runtime::CompiledKernel> compiled =
      ScaledAdd(tessera::Dim::Dynamic("n")).Compile(options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(std::string(compiled.status().message()).find("sm_12"), std::string::npos)
      << compiled.status();
}

TEST(ScaledAdd, BundleRoundTrips) {
  tessera::runtime::KernelBundle bundle;
  for (const char* target : {"sm_80", "sm_90a"}) {
    tessera::CompileOptions options;
    options.target = target;
    absl::StatusOr<tessera::runtime::CompiledKernel> compiled =
        ScaledAdd(tessera::Dim::Dynamic("n")).Compile(options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    *bundle.add_kernels() = *compiled;
  }
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/k.tbundle";
  ASSERT_TRUE(tessera::runtime::WriteBundle(bundle, path).ok());
  absl::StatusOr<tessera::runtime::KernelBundle> read = tessera::runtime::ReadBundle(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->kernels_size(), 2);
  EXPECT_EQ(read->kernels(1).target(), "sm_90a");
  EXPECT_EQ(read->kernels(0).ptx(), bundle.kernels(0).ptx());
}

}  // namespace
}  // namespace embedding
