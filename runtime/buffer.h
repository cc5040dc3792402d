//===- buffer.h - Device memory owned by RAII -------------------*- C++ -*-===//
//
// This file declares DeviceBuffer, a block of global memory allocated with
// cuMemAlloc and freed with cuMemFree, with synchronous host copies and byte
// or word fills (used to poison outputs before a launch). The caller must
// have a context current (Device::Open makes one current).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_BUFFER_H_
#define TESSERA_RUNTIME_BUFFER_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda_driver.h"

namespace tessera::runtime {

/// Owns `size()` bytes of device memory. Move-only.
class DeviceBuffer {
 public:
  /// Allocates `bytes` bytes in the current context. Zero bytes gives an
  /// empty buffer with a null pointer (cuMemAlloc rejects zero).
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);

  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  /// The device address (0 for an empty buffer).
  CUdeviceptr ptr() const { return ptr_; }
  /// The size in bytes.
  size_t size() const { return size_; }

  /// Copies `bytes` bytes from `host` into the buffer at byte `offset`.
  absl::Status CopyFromHost(const void* host, size_t bytes, size_t offset = 0);
  /// Copies `bytes` bytes from the start of the buffer to `host`.
  absl::Status CopyToHost(void* host, size_t bytes) const;
  /// Sets every byte to `value` (cuMemsetD8).
  absl::Status Fill(uint8_t value);
  /// Sets every 32-bit word to `value` (cuMemsetD32); size() must be a
  /// multiple of 4. E.g. 0x7FC00000 poisons an f32 buffer with NaN.
  absl::Status Fill32(uint32_t value);

 private:
  DeviceBuffer(const CudaDriver* driver, CUdeviceptr ptr, size_t size)
      : driver_(driver), ptr_(ptr), size_(size) {}

  /// Checks that `bytes` fits in the buffer, naming `what`.
  absl::Status CheckSize(size_t bytes, const char* what) const;

  const CudaDriver* driver_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
};

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_BUFFER_H_
