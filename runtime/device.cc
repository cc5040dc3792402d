//===- device.cc - A CUDA device and its primary context ------------------===//
//
// This file implements Device::Open (attribute queries plus primary context
// retain/current) and DeviceCount.
//
//===----------------------------------------------------------------------===//

#include "runtime/device.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {

absl::StatusOr<int> DeviceCount() {
  TESSERA_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Load());
  int count = 0;
  TESSERA_CU_RETURN_IF_ERROR(*driver, cuDeviceGetCount(&count));
  return count;
}

absl::Status Synchronize() {
  TESSERA_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Load());
  TESSERA_CU_RETURN_IF_ERROR(*driver, cuCtxSynchronize());
  return absl::OkStatus();
}

absl::StatusOr<Device> Device::Open(int ordinal) {
  TESSERA_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Load());
  TESSERA_ASSIGN_OR_RETURN(int count, DeviceCount());
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(absl::StrCat(
        "no CUDA device ", ordinal, ": ", count, " device(s) visible"));
  }
  Device device;
  device.driver_ = driver;
  device.ordinal_ = ordinal;
  TESSERA_CU_RETURN_IF_ERROR(*driver, cuDeviceGet(&device.device_, ordinal));
  TESSERA_CU_RETURN_IF_ERROR(*driver,
                             cuDriverGetVersion(&device.driver_version_));

  char name[256] = {};
  TESSERA_CU_RETURN_IF_ERROR(
      *driver, cuDeviceGetName(name, sizeof(name), device.device_));
  device.name_ = name;
  size_t total_memory = 0;
  TESSERA_CU_RETURN_IF_ERROR(*driver,
                             cuDeviceTotalMem(&total_memory, device.device_));
  device.total_memory_bytes_ = static_cast<int64_t>(total_memory);

  const CUdevice handle = device.device_;
  TESSERA_ASSIGN_OR_RETURN(
      device.cc_major_,
      DeviceAttribute(*driver, handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                      "cc major"));
  TESSERA_ASSIGN_OR_RETURN(
      device.cc_minor_,
      DeviceAttribute(*driver, handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                      "cc minor"));
  TESSERA_ASSIGN_OR_RETURN(
      device.sm_count_,
      DeviceAttribute(*driver, handle, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                      "SM count"));
  TESSERA_ASSIGN_OR_RETURN(
      device.l2_cache_bytes_,
      DeviceAttribute(*driver, handle, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                      "L2 size"));
  TESSERA_ASSIGN_OR_RETURN(
      device.max_shared_memory_per_block_optin_,
      DeviceAttribute(*driver, handle,
                      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                      "shared memory per block (opt-in)"));
  TESSERA_ASSIGN_OR_RETURN(
      device.max_shared_memory_per_sm_,
      DeviceAttribute(*driver, handle,
                      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                      "shared memory per SM"));

  TESSERA_CU_RETURN_IF_ERROR(
      *driver, cuDevicePrimaryCtxRetain(&device.context_, handle));
  // From here on the destructor releases the context on any early return.
  TESSERA_RETURN_IF_ERROR(device.MakeCurrent());
  return device;
}

Device::Device(Device&& other) noexcept { *this = std::move(other); }

Device& Device::operator=(Device&& other) noexcept {
  if (this == &other) return *this;
  if (context_ != nullptr) driver_->cuDevicePrimaryCtxRelease(device_);
  driver_ = other.driver_;
  ordinal_ = other.ordinal_;
  device_ = other.device_;
  context_ = std::exchange(other.context_, nullptr);
  name_ = std::move(other.name_);
  cc_major_ = other.cc_major_;
  cc_minor_ = other.cc_minor_;
  sm_count_ = other.sm_count_;
  l2_cache_bytes_ = other.l2_cache_bytes_;
  max_shared_memory_per_block_optin_ = other.max_shared_memory_per_block_optin_;
  max_shared_memory_per_sm_ = other.max_shared_memory_per_sm_;
  total_memory_bytes_ = other.total_memory_bytes_;
  driver_version_ = other.driver_version_;
  return *this;
}

Device::~Device() {
  // A failure to release cannot be reported from a destructor; the primary
  // context is reference counted, so the worst case is that it stays alive.
  if (context_ != nullptr) driver_->cuDevicePrimaryCtxRelease(device_);
}

absl::Status Device::MakeCurrent() const {
  return ToStatus(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

std::string Device::arch() const {
  return absl::StrCat("sm_", cc_major_, cc_minor_);
}

std::string Device::Describe() const {
  constexpr double kMiB = 1024.0 * 1024.0;
  return absl::StrFormat(
      "device %d: %s (%s), %d SMs, %.1f GiB, L2 %.1f MiB, shared memory "
      "%d KiB/block (opt-in) %d KiB/SM, driver %d.%d",
      ordinal_, name_, arch(), sm_count_, total_memory_bytes_ / kMiB / 1024.0,
      l2_cache_bytes_ / kMiB, max_shared_memory_per_block_optin_ / 1024,
      max_shared_memory_per_sm_ / 1024, driver_version_ / 1000,
      driver_version_ % 1000 / 10);
}

}  // namespace tessera::runtime
