//===- cuda_driver.cc - The CUDA driver API, loaded at run time -----------===//
//
// This file implements CudaDriver::Load (dlopen + dlsym of every entry point,
// cached per library) and ToStatus (CUresult -> absl::Status).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"

namespace tessera::runtime {
namespace {

#define TESSERA_STRINGIZE_(x) #x
/// Stringizes after macro expansion: cuMemAlloc -> "cuMemAlloc_v2".
#define TESSERA_EXPANDED_NAME_(x) TESSERA_STRINGIZE_(x)

/// The first driver that loaded successfully, for ToStatus's error names.
std::atomic<const CudaDriver*> first_loaded_driver{nullptr};

/// Opens `library` and fills a fresh table; calls cuInit(0).
absl::StatusOr<const CudaDriver*> OpenDriver(const char* library) {
  dlerror();  // Clears any stale error.
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver: dlopen(", library,
                     ") failed: ", error != nullptr ? error : "unknown error"));
  }
  auto driver = std::make_unique<CudaDriver>();
  driver->library = library;
#define TESSERA_RESOLVE_DRIVER_MEMBER(fn)                                    \
  driver->fn = reinterpret_cast<decltype(&::fn)>(                            \
      dlsym(handle, TESSERA_EXPANDED_NAME_(fn)));                            \
  if (driver->fn == nullptr) {                                               \
    dlclose(handle);                                                         \
    return absl::FailedPreconditionError(absl::StrCat(                       \
        "CUDA driver ", library, " lacks ", TESSERA_EXPANDED_NAME_(fn),      \
        " (a driver for CUDA 13 or newer is required)"));                    \
  }
  TESSERA_CUDA_DRIVER_FUNCTIONS(TESSERA_RESOLVE_DRIVER_MEMBER)
#undef TESSERA_RESOLVE_DRIVER_MEMBER

  // Published before cuInit so that its failure already gets error names.
  const CudaDriver* result = driver.release();
  const CudaDriver* expected = nullptr;
  first_loaded_driver.compare_exchange_strong(expected, result);
  absl::Status init = ToStatus(result->cuInit(0), "cuInit");
  if (!init.ok()) return init;
  return result;
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Load() {
  return Load(kCudaDriverLibrary);
}

absl::StatusOr<const CudaDriver*> CudaDriver::Load(const char* library) {
  // Drivers are never unloaded: each library is opened at most once.
  static std::mutex* mutex = new std::mutex;
  static auto* cache =
      new std::map<std::string, absl::StatusOr<const CudaDriver*>>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto it = cache->find(library);
  if (it == cache->end()) {
    it = cache->emplace(library, OpenDriver(library)).first;
  }
  return it->second;
}

const CudaDriver* CudaDriver::LoadedOrNull() {
  return first_loaded_driver.load();
}

absl::StatusOr<int> DeviceAttribute(const CudaDriver& driver, CUdevice device,
                                    CUdevice_attribute attribute, absl::string_view what) {
  int value = 0;
  absl::Status status = ToStatus(driver.cuDeviceGetAttribute(&value, attribute, device),
                                 absl::StrCat("cuDeviceGetAttribute(", what, ")"));
  if (!status.ok()) return status;
  return value;
}

absl::StatusOr<int> CurrentDeviceAttribute(const CudaDriver& driver,
                                           CUdevice_attribute attribute,
                                           absl::string_view what) {
  CUdevice device = 0;
  absl::Status status = ToStatus(driver.cuCtxGetDevice(&device), "cuCtxGetDevice");
  if (!status.ok()) return status;
  return DeviceAttribute(driver, device, attribute, what);
}

absl::Status ToStatus(CUresult result, absl::string_view call) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  std::string message = absl::StrCat(call, " failed: ");
  const char* name = nullptr;
  const char* description = nullptr;
  if (const CudaDriver* driver = CudaDriver::LoadedOrNull()) {
    if (driver->cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (driver->cuGetErrorString(result, &description) != CUDA_SUCCESS) {
      description = nullptr;
    }
  }
  absl::StrAppend(&message, name != nullptr ? name : "CUDA error",
                  " (", static_cast<int>(result), ")");
  if (description != nullptr) absl::StrAppend(&message, ": ", description);

  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::ResourceExhaustedError(message);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return absl::InvalidArgumentError(message);
    case CUDA_ERROR_NOT_FOUND:
      return absl::NotFoundError(message);
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_STUB_LIBRARY:
      return absl::FailedPreconditionError(message);
    case CUDA_ERROR_NOT_SUPPORTED:
      return absl::UnimplementedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace tessera::runtime
