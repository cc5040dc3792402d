//===- kernel.cc - A compiled kernel loaded into a context ----------------===//
//
// This file implements LoadedKernel::Load: cuModuleLoadDataEx with JIT log
// buffers, cuModuleGetFunction, the dynamic shared memory opt-in and the
// register count query.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernel.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {
namespace {

/// Size of each JIT log buffer; the JIT truncates longer logs.
constexpr size_t kJitLogBytes = 16 * 1024;

/// The outcome of one cuModuleLoadDataEx call.
struct ModuleLoad {
  CUresult result = CUDA_SUCCESS;
  CUmodule module = nullptr;
  std::string error_log;
  std::string info_log;
};

/// Loads `image` (a cubin, or NUL-terminated PTX) capturing both JIT logs.
ModuleLoad LoadModule(const CudaDriver& driver, const void* image) {
  std::vector<char> error_log(kJitLogBytes, '\0');
  std::vector<char> info_log(kJitLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(kJitLogBytes),
                    info_log.data(), reinterpret_cast<void*>(kJitLogBytes)};
  ModuleLoad load;
  load.result = driver.cuModuleLoadDataEx(&load.module, image,
                                          std::size(options), options, values);
  error_log.back() = info_log.back() = '\0';
  load.error_log = error_log.data();
  load.info_log = info_log.data();
  return load;
}

/// An architecture-specific target ("sm_90a", "sm_100a") runs on its own
/// compute capability alone: OK for a portable target or a matching
/// device, FailedPrecondition naming both otherwise. The driver's own
/// refusal (a JIT error for an unknown .target) names neither.
absl::Status CheckArchSpecificTarget(const CudaDriver& driver,
                                     absl::string_view target) {
  // "sm_" and 2 to 4 digits and "a" (the names bundle validation accepts);
  // anything else is validated, and refused, elsewhere.
  if (target.size() < 6 || target.size() > 8 || target.substr(0, 3) != "sm_" ||
      target.back() != 'a')
    return absl::OkStatus();
  int wanted = 0;
  for (char c : target.substr(3, target.size() - 4)) {
    if (c < '0' || c > '9') return absl::OkStatus();
    wanted = wanted * 10 + (c - '0');
  }
  TESSERA_ASSIGN_OR_RETURN(
      int major, CurrentDeviceAttribute(
                     driver, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                     "compute capability major"));
  TESSERA_ASSIGN_OR_RETURN(
      int minor, CurrentDeviceAttribute(
                     driver, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                     "compute capability minor"));
  if (major * 10 + minor == wanted) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "built for ", target, ", which runs on compute capability ", wanted / 10,
      ".", wanted % 10, " only; this device is compute capability ", major, ".",
      minor, " (sm_", major, minor, ")"));
}

/// True for the results that mean "this cubin is not for this device".
bool IsWrongBinary(CUresult result) {
  return result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
         result == CUDA_ERROR_INVALID_IMAGE ||
         result == CUDA_ERROR_INVALID_SOURCE;
}

/// Blocks of `kernel` resident on the whole device at once: the occupancy
/// times the SMs, or whole clusters times their size for a kernel in
/// clusters. 0 where none fits.
absl::StatusOr<int64_t> ResidentBlocks(const CudaDriver& driver, CUfunction function,
                                       const CompiledKernel& kernel) {
  if (kernel.cluster_x() > 1) {
    CUlaunchAttribute attribute;
    CUlaunchConfig config = ClusterLaunchConfig(kernel.cluster_x(), 1, kernel.cluster_x(), 1, 1,
                                                kernel.block_threads(),
                                                kernel.shared_memory_bytes(), nullptr, attribute);
    int clusters = 0;
    TESSERA_RETURN_IF_ERROR(ToStatus(driver.cuOccupancyMaxActiveClusters(&clusters, function,
                                                                         &config),
                                     "cuOccupancyMaxActiveClusters"));
    return int64_t(clusters) * kernel.cluster_x();
  }
  int per_sm = 0;
  TESSERA_RETURN_IF_ERROR(ToStatus(
      driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, function, kernel.block_threads(),
          static_cast<size_t>(kernel.shared_memory_bytes())),
      "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
  TESSERA_ASSIGN_OR_RETURN(
      int sms, CurrentDeviceAttribute(driver, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                      "SM count"));
  return int64_t(per_sm) * sms;
}

}  // namespace

absl::StatusOr<LoadedKernel> LoadedKernel::Load(const CompiledKernel& kernel) {
  const std::string& entry = kernel.entry();
  auto fail = [&entry](const absl::Status& status) {
    return absl::Status(status.code(),
                        absl::StrCat("kernel '", entry, "': ", status.message()));
  };
  TESSERA_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Load());
  if (kernel.cubin().empty() && kernel.ptx().empty()) {
    return fail(absl::InvalidArgumentError("has neither cubin nor PTX"));
  }
  absl::Status runs_here = CheckArchSpecificTarget(*driver, kernel.target());
  if (!runs_here.ok()) return fail(runs_here);

  LoadedKernel loaded;
  loaded.driver_ = driver;
  ModuleLoad load;
  std::string cubin_error;
  if (!kernel.cubin().empty()) {
    load = LoadModule(*driver, kernel.cubin().data());
    loaded.from_cubin_ = load.result == CUDA_SUCCESS;
    if (load.result != CUDA_SUCCESS &&
        !(IsWrongBinary(load.result) && !kernel.ptx().empty())) {
      return fail(ToStatus(load.result, "cuModuleLoadDataEx(cubin)"));
    }
  }
  if (!loaded.from_cubin_) {
    // std::string keeps its contents NUL-terminated, as the JIT requires.
    load = LoadModule(*driver, kernel.ptx().c_str());
    if (load.result != CUDA_SUCCESS) {
      absl::Status status = ToStatus(
          load.result, absl::StrCat("cuModuleLoadDataEx(PTX for ",
                                    kernel.target(), ")"));
      return fail(absl::Status(
          status.code(),
          load.error_log.empty()
              ? status.message()
              : absl::StrCat(status.message(), "\nJIT log:\n", load.error_log)));
    }
  }
  loaded.module_ = load.module;
  loaded.jit_info_log_ = std::move(load.info_log);
  loaded.spec_ = std::make_unique<CompiledKernel>(kernel);

  absl::Status status = ToStatus(
      driver->cuModuleGetFunction(&loaded.function_, loaded.module_,
                                  entry.c_str()),
      "cuModuleGetFunction");
  if (!status.ok()) return fail(status);

  if (kernel.shared_memory_bytes() > kDefaultMaxDynamicSharedMemoryBytes) {
    status = ToStatus(
        driver->cuFuncSetAttribute(
            loaded.function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(kernel.shared_memory_bytes())),
        absl::StrCat("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = ",
                     kernel.shared_memory_bytes(), ")"));
    if (!status.ok()) return fail(status);
  }
  status = ToStatus(driver->cuFuncGetAttribute(&loaded.registers_,
                                               CU_FUNC_ATTRIBUTE_NUM_REGS,
                                               loaded.function_),
                    "cuFuncGetAttribute(NUM_REGS)");
  if (!status.ok()) return fail(status);
  // A persistent kernel's grid is its resident blocks; for other kernels the
  // figure is advice (a launcher's split counts), 0 where the driver gives none.
  absl::StatusOr<int64_t> resident = ResidentBlocks(*driver, loaded.function_, kernel);
  if (!resident.ok() && kernel.persistent()) return fail(resident.status());
  loaded.resident_blocks_ = resident.value_or(0);
  if (kernel.persistent()) {
    if (*resident < 1) {
      return fail(absl::ResourceExhaustedError(
          kernel.cluster_x() > 1
              ? absl::StrCat("no cluster of ", kernel.cluster_x(), " blocks of ",
                             kernel.block_threads(), " threads and ",
                             kernel.shared_memory_bytes(), " B of shared memory fits the device")
              : absl::StrCat("no block of ", kernel.block_threads(), " threads and ",
                             kernel.shared_memory_bytes(), " B of shared memory fits an SM")));
    }
    loaded.persistent_blocks_ = *resident;
  }
  return loaded;
}

LoadedKernel::LoadedKernel(LoadedKernel&& other) noexcept {
  *this = std::move(other);
}

LoadedKernel& LoadedKernel::operator=(LoadedKernel&& other) noexcept {
  if (this == &other) return *this;
  if (module_ != nullptr) driver_->cuModuleUnload(module_);
  driver_ = other.driver_;
  spec_ = std::move(other.spec_);
  module_ = std::exchange(other.module_, nullptr);
  function_ = std::exchange(other.function_, nullptr);
  registers_ = other.registers_;
  persistent_blocks_ = other.persistent_blocks_;
  resident_blocks_ = other.resident_blocks_;
  if (workspace_ != 0) driver_->cuMemFree(workspace_);
  workspace_ = std::exchange(other.workspace_, 0);
  workspace_bytes_ = std::exchange(other.workspace_bytes_, 0);
  from_cubin_ = other.from_cubin_;
  jit_info_log_ = std::move(other.jit_info_log_);
  return *this;
}

LoadedKernel::~LoadedKernel() {
  if (workspace_ != 0) driver_->cuMemFree(workspace_);
  if (module_ != nullptr) driver_->cuModuleUnload(module_);
}

absl::StatusOr<CUdeviceptr> LoadedKernel::Workspace(size_t bytes) const {
  if (bytes <= workspace_bytes_) return workspace_;
  if (workspace_ != 0) {
    driver_->cuMemFree(workspace_);
    workspace_ = 0;
    workspace_bytes_ = 0;
  }
  CUdeviceptr ptr = 0;
  TESSERA_RETURN_IF_ERROR(ToStatus(driver_->cuMemAlloc(&ptr, bytes),
                                   absl::StrCat("cuMemAlloc(", bytes, " B of workspace)")));
  absl::Status status = ToStatus(driver_->cuMemsetD8(ptr, 0, bytes), "cuMemsetD8(workspace)");
  if (!status.ok()) {
    driver_->cuMemFree(ptr);
    return status;
  }
  workspace_ = ptr;
  workspace_bytes_ = bytes;
  return ptr;
}

CUlaunchConfig ClusterLaunchConfig(int64_t cluster_x, int64_t cluster_y,
                                   int64_t grid_x, int64_t grid_y,
                                   int64_t grid_z, int64_t threads,
                                   int64_t shared_bytes, CUstream stream,
                                   CUlaunchAttribute& attribute) {
  attribute = {};
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = static_cast<unsigned>(cluster_x);
  attribute.value.clusterDim.y = static_cast<unsigned>(cluster_y);
  attribute.value.clusterDim.z = 1;
  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned>(grid_x);
  config.gridDimY = static_cast<unsigned>(grid_y);
  config.gridDimZ = static_cast<unsigned>(grid_z);
  config.blockDimX = static_cast<unsigned>(threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(shared_bytes);
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

}  // namespace tessera::runtime
