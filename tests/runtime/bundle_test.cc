//===- bundle_test.cc - Tests of kernel file I/O --------------------------===//
//
// This file tests that bundles and single kernels survive a write/read round
// trip and that missing or corrupt files give clear statuses.
//
//===----------------------------------------------------------------------===//

#include "runtime/bundle.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using ::testing::HasSubstr;
using test_kernels::VectorAddKernel;

/// A path in the test's temporary directory.
std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(Bundle, RoundTripsThroughAFile) {
  KernelBundle bundle;
  CompiledKernel* kernel = bundle.add_kernels();
  *kernel = VectorAddKernel();
  kernel->set_ptx(".version 8.0\n.target sm_80\n");
  kernel->set_cubin(std::string("\x7f" "ELF\0\1\2", 7));
  kernel->set_registers(32);
  bundle.add_kernels()->set_entry("second");
  const std::string path = TempPath("roundtrip.pb");

  ASSERT_TRUE(WriteBundle(bundle, path).ok());
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->SerializeAsString(), bundle.SerializeAsString());
  EXPECT_EQ(read->kernels(0).cubin().size(), 7u);

  absl::StatusOr<const CompiledKernel*> found = FindKernel(*read, "second");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->entry(), "second");
  EXPECT_THAT(FindKernel(*read, "third").status().message(),
              HasSubstr("no kernel 'third' in the bundle (it has: vector_add, "
                        "second)"));
}

TEST(Bundle, RoundTripsASingleCompiledKernel) {
  const std::string path = TempPath("kernel.pb");
  ASSERT_TRUE(WriteCompiledKernel(VectorAddKernel(), path).ok());
  absl::StatusOr<CompiledKernel> read = ReadCompiledKernel(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->entry(), "vector_add");
  EXPECT_EQ(read->params_size(), 4);
}

TEST(Bundle, ReportsMissingFileAsNotFound) {
  absl::StatusOr<KernelBundle> read = ReadBundle(TempPath("missing.pb"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("missing.pb"));
}

TEST(Bundle, ReportsCorruptFileAsDataLoss) {
  const std::string path = TempPath("corrupt.pb");
  std::ofstream(path, std::ios::binary) << "\xff\xff\xff\xff garbage";
  absl::StatusOr<KernelBundle> read = ReadBundle(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(),
              HasSubstr("is corrupt: not a binary tessera.runtime.KernelBundle"));
}

TEST(Bundle, ReportsUnwritablePath) {
  EXPECT_FALSE(
      WriteBundle(KernelBundle(), "/nonexistent-dir/tessera/out.pb").ok());
}

}  // namespace
}  // namespace tessera::runtime
