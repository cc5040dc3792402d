//===- kernel.h - A compiled kernel loaded into a context -------*- C++ -*-===//
//
// This file declares LoadedKernel: the CUmodule and CUfunction made from a
// CompiledKernel (its cubin when present and loadable, else its PTX through
// the driver's JIT), with the JIT's error log folded into the status on
// failure and the opt-in for more than 48 KiB of dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_KERNEL_H_
#define TESSERA_RUNTIME_KERNEL_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda_driver.h"
#include "runtime/kernel.pb.h"

namespace tessera::runtime {

/// Dynamic shared memory a kernel may use without opting in, per the CUDA
/// programming guide (larger requests need
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
constexpr int64_t kDefaultMaxDynamicSharedMemoryBytes = 48 * 1024;

/// A kernel loaded into the context that was current at Load time. Owns its
/// module (unloaded on destruction). Move-only.
class LoadedKernel {
 public:
  /// Loads `kernel` into the current context. Uses the cubin if present;
  /// falls back to the PTX when the cubin does not fit this device (or is
  /// absent). Errors name the entry and the failing call and carry the JIT
  /// log.
  static absl::StatusOr<LoadedKernel> Load(const CompiledKernel& kernel);

  LoadedKernel(LoadedKernel&& other) noexcept;
  LoadedKernel& operator=(LoadedKernel&& other) noexcept;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  ~LoadedKernel();

  /// The kernel description it was loaded from.
  const CompiledKernel& spec() const { return *spec_; }
  /// The entry point name.
  const std::string& entry() const { return spec_->entry(); }
  /// The driver function handle.
  CUfunction function() const { return function_; }
  /// Registers per thread of the loaded function (CU_FUNC_ATTRIBUTE_NUM_REGS).
  int registers() const { return registers_; }
  /// Blocks resident on the whole device at once (occupancy x SMs; whole
  /// clusters for a kernel in clusters): what one wave of the grid holds.
  int64_t resident_blocks() const { return resident_blocks_; }
  /// resident_blocks() for a persistent kernel (its grid), 0 for others.
  int64_t persistent_blocks() const { return persistent_blocks_; }
  /// True if the cubin was loaded, false if the PTX went through the JIT.
  bool from_cubin() const { return from_cubin_; }
  /// The JIT's info log (empty for a cubin or a quiet JIT).
  const std::string& jit_info_log() const { return jit_info_log_; }
  const CudaDriver& driver() const { return *driver_; }
  /// A stream-K kernel's workspace: at least `bytes`, zeroed when allocated
  /// (the kernel leaves its counters at zero). Grows as needed; one launch
  /// of this kernel at a time uses it.
  absl::StatusOr<CUdeviceptr> Workspace(size_t bytes) const;

 private:
  LoadedKernel() = default;

  const CudaDriver* driver_ = nullptr;
  std::unique_ptr<CompiledKernel> spec_;
  CUmodule module_ = nullptr;
  int64_t persistent_blocks_ = 0;
  int64_t resident_blocks_ = 0;
  CUfunction function_ = nullptr;
  int registers_ = 0;
  bool from_cubin_ = false;
  std::string jit_info_log_;
  mutable CUdeviceptr workspace_ = 0;
  mutable size_t workspace_bytes_ = 0;
};

/// A cuLaunchKernelEx configuration for thread block clusters of
/// `cluster_x` x `cluster_y` blocks: a grid of grid_x x grid_y x grid_z
/// blocks (grid_x and grid_y multiples of the cluster's) of `threads`
/// threads and `shared_bytes` of dynamic shared memory on `stream`. It
/// points at `attribute`, which it fills with the cluster dimensions (the
/// caller keeps it alive while it uses the configuration).
CUlaunchConfig ClusterLaunchConfig(int64_t cluster_x, int64_t cluster_y,
                                   int64_t grid_x, int64_t grid_y,
                                   int64_t grid_z, int64_t threads,
                                   int64_t shared_bytes, CUstream stream,
                                   CUlaunchAttribute& attribute);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_KERNEL_H_
