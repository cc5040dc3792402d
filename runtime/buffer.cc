//===- buffer.cc - Device memory owned by RAII ----------------------------===//
//
// This file implements DeviceBuffer on cuMemAlloc/cuMemFree, cuMemcpy[HD]to[HD]
// and cuMemsetD8/D32.
//
//===----------------------------------------------------------------------===//

#include "runtime/buffer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  TESSERA_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Load());
  if (bytes == 0) return DeviceBuffer(driver, 0, 0);
  CUdeviceptr ptr = 0;
  absl::Status status = ToStatus(driver->cuMemAlloc(&ptr, bytes), "cuMemAlloc");
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("allocating ", bytes,
                                                    " bytes: ",
                                                    status.message()));
  }
  return DeviceBuffer(driver, ptr, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : driver_(other.driver_),
      ptr_(std::exchange(other.ptr_, 0)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != 0) driver_->cuMemFree(ptr_);
    driver_ = other.driver_;
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) driver_->cuMemFree(ptr_);
}

absl::Status DeviceBuffer::CheckSize(size_t bytes, const char* what) const {
  if (bytes > size_) {
    return absl::OutOfRangeError(absl::StrCat(what, " of ", bytes,
                                              " bytes into a buffer of ",
                                              size_, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status DeviceBuffer::CopyFromHost(const void* host, size_t bytes, size_t offset) {
  if (offset > size_)
    return absl::OutOfRangeError(
        absl::StrCat("host-to-device copy at byte ", offset, " of a buffer of ", size_, " bytes"));
  if (bytes > size_ - offset)
    return absl::OutOfRangeError(absl::StrCat("host-to-device copy of ", bytes, " bytes at byte ",
                                              offset, " of a buffer of ", size_, " bytes"));
  if (bytes == 0) return absl::OkStatus();
  return ToStatus(driver_->cuMemcpyHtoD(ptr_ + offset, host, bytes), "cuMemcpyHtoD");
}

absl::Status DeviceBuffer::CopyToHost(void* host, size_t bytes) const {
  TESSERA_RETURN_IF_ERROR(CheckSize(bytes, "device-to-host copy"));
  if (bytes == 0) return absl::OkStatus();
  return ToStatus(driver_->cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
}

absl::Status DeviceBuffer::Fill(uint8_t value) {
  if (size_ == 0) return absl::OkStatus();
  return ToStatus(driver_->cuMemsetD8(ptr_, value, size_), "cuMemsetD8");
}

absl::Status DeviceBuffer::Fill32(uint32_t value) {
  if (size_ % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Fill32 needs a size that is a multiple of 4 bytes, not ", size_));
  }
  if (size_ == 0) return absl::OkStatus();
  return ToStatus(driver_->cuMemsetD32(ptr_, value, size_ / 4), "cuMemsetD32");
}

}  // namespace tessera::runtime
