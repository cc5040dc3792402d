//===- cuda_driver_test.cc - Tests of driver loading and ToStatus ---------===//
//
// This file tests, without a GPU, that a missing driver library is a status
// rather than a crash and that ToStatus names the failing call.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda_driver.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(CudaDriver, LoadOfMissingLibraryIsFailedPrecondition) {
  absl::StatusOr<const CudaDriver*> driver =
      CudaDriver::Load("libtessera_no_such_cuda.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()),
              StartsWith("no CUDA driver: dlopen(libtessera_no_such_cuda.so.1) "
                         "failed: "));
}

TEST(CudaDriver, LoadOfLibraryWithoutDriverSymbolsNamesTheSymbol) {
  // libdl has none of the driver's entry points.
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Load("libdl.so.2");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(driver.status().message(), HasSubstr("lacks cuInit"));
}

TEST(CudaDriver, LoadCachesItsResultPerLibrary) {
  absl::StatusOr<const CudaDriver*> first = CudaDriver::Load("libnope.so");
  absl::StatusOr<const CudaDriver*> second = CudaDriver::Load("libnope.so");
  EXPECT_EQ(first.status(), second.status());
}

TEST(ToStatus, IsOkForSuccess) {
  EXPECT_TRUE(ToStatus(CUDA_SUCCESS, "cuInit").ok());
}

TEST(ToStatus, NamesTheCallAndTheErrorCode) {
  absl::Status status = ToStatus(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), StartsWith("cuMemAlloc failed: "));
  EXPECT_THAT(status.message(), HasSubstr("(2)"));
}

TEST(ToStatus, MapsResultsToStatusCodes) {
  EXPECT_EQ(ToStatus(CUDA_ERROR_INVALID_PTX, "cuModuleLoadDataEx").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToStatus(CUDA_ERROR_NO_DEVICE, "cuInit").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ToStatus(CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ToStatus(CUDA_ERROR_ILLEGAL_ADDRESS, "cuCtxSynchronize").code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace tessera::runtime
