//===- device.h - A CUDA device and its primary context ---------*- C++ -*-===//
//
// This file declares Device, which opens one GPU by ordinal, retains its
// primary context and makes it current, and records the limits that the
// runtime and the compiler's backend selection care about (compute
// capability, SM count, L2 size, shared memory per block and per SM).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_DEVICE_H_
#define TESSERA_RUNTIME_DEVICE_H_

#include <cuda.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda_driver.h"

namespace tessera::runtime {

/// The number of CUDA devices visible to this process; an error if the
/// driver cannot be loaded or initialized.
absl::StatusOr<int> DeviceCount();

/// Waits for all work in the current context (cuCtxSynchronize); a kernel
/// fault surfaces here with the call named.
absl::Status Synchronize();

/// One GPU with its primary context retained (and released on destruction).
/// Move-only.
class Device {
 public:
  /// Opens device `ordinal`, retains its primary context and makes it current
  /// on the calling thread.
  static absl::StatusOr<Device> Open(int ordinal);

  Device(Device&& other) noexcept;
  Device& operator=(Device&& other) noexcept;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  /// Makes this device's primary context current on the calling thread.
  absl::Status MakeCurrent() const;

  /// The device ordinal passed to Open.
  int ordinal() const { return ordinal_; }
  /// The marketing name, e.g. "NVIDIA H200".
  const std::string& name() const { return name_; }
  /// Compute capability, e.g. 9 and 0 for sm_90.
  int compute_capability_major() const { return cc_major_; }
  int compute_capability_minor() const { return cc_minor_; }
  /// The plain architecture name, e.g. "sm_90" (never the "a" variant).
  std::string arch() const;
  /// Number of streaming multiprocessors.
  int sm_count() const { return sm_count_; }
  /// L2 cache size in bytes.
  int64_t l2_cache_bytes() const { return l2_cache_bytes_; }
  /// Largest shared memory a block may opt in to, in bytes.
  int64_t max_shared_memory_per_block_optin() const {
    return max_shared_memory_per_block_optin_;
  }
  /// Shared memory per SM, in bytes.
  int64_t max_shared_memory_per_sm() const { return max_shared_memory_per_sm_; }
  /// Total global memory, in bytes.
  int64_t total_memory_bytes() const { return total_memory_bytes_; }
  /// The driver version as reported by cuDriverGetVersion, e.g. 13000.
  int driver_version() const { return driver_version_; }
  /// Raw handles.
  CUdevice handle() const { return device_; }
  CUcontext context() const { return context_; }
  const CudaDriver& driver() const { return *driver_; }

  /// A one-line description: name, arch, SMs, memory, L2, shared memory.
  std::string Describe() const;

 private:
  Device() = default;

  const CudaDriver* driver_ = nullptr;
  int ordinal_ = -1;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  int sm_count_ = 0;
  int64_t l2_cache_bytes_ = 0;
  int64_t max_shared_memory_per_block_optin_ = 0;
  int64_t max_shared_memory_per_sm_ = 0;
  int64_t total_memory_bytes_ = 0;
  int driver_version_ = 0;
};

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_DEVICE_H_
