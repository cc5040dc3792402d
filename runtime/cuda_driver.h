//===- cuda_driver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// This file declares CudaDriver, a table of CUDA driver entry points that is
// filled from libcuda.so.1 with dlopen/dlsym the first time a program asks for
// it, so that a binary which never touches a GPU does not need libcuda at all
// (and nothing links against -lcuda). It also declares ToStatus, the one place
// where a CUresult becomes an absl::Status.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CUDA_DRIVER_H_
#define TESSERA_RUNTIME_CUDA_DRIVER_H_

#include <cuda.h>

#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::runtime {

/// The driver library opened by CudaDriver::Load().
inline constexpr char kCudaDriverLibrary[] = "libcuda.so.1";

/// Every driver entry point the runtime calls. cuda.h renames many of them
/// with macros (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime ->
/// cuEventElapsedTime_v2); the table is expanded after those macros, so the
/// member and the looked-up symbol both carry the versioned name.
#define TESSERA_CUDA_DRIVER_FUNCTIONS(X)         \
  X(cuInit)                                      \
  X(cuDriverGetVersion)                          \
  X(cuGetErrorName)                              \
  X(cuGetErrorString)                            \
  X(cuDeviceGetCount)                            \
  X(cuDeviceGet)                                 \
  X(cuDeviceGetName)                             \
  X(cuDeviceGetAttribute)                        \
  X(cuDeviceTotalMem)                            \
  X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease)                   \
  X(cuCtxSetCurrent)                             \
  X(cuCtxGetDevice)                              \
  X(cuCtxGetCurrent)                             \
  X(cuPointerGetAttribute)                       \
  X(cuCtxSynchronize)                            \
  X(cuMemAlloc)                                  \
  X(cuMemFree)                                   \
  X(cuMemcpyHtoD)                                \
  X(cuMemcpyDtoH)                                \
  X(cuMemsetD8)                                  \
  X(cuMemsetD32)                                 \
  X(cuMemsetD8Async)                             \
  X(cuModuleLoadDataEx)                          \
  X(cuModuleUnload)                              \
  X(cuModuleGetFunction)                         \
  X(cuFuncGetAttribute)                          \
  X(cuFuncSetAttribute)                          \
  X(cuLaunchKernel)                              \
  X(cuLaunchKernelEx)                            \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuOccupancyMaxActiveClusters)                \
  X(cuTensorMapEncodeTiled)                      \
  X(cuStreamSynchronize)                         \
  X(cuStreamCreate)                              \
  X(cuStreamDestroy)                             \
  X(cuStreamBeginCapture)                        \
  X(cuStreamEndCapture)                          \
  X(cuGraphInstantiate)                          \
  X(cuGraphLaunch)                               \
  X(cuGraphExecDestroy)                          \
  X(cuGraphDestroy)                              \
  X(cuEventCreate)                               \
  X(cuEventDestroy)                              \
  X(cuEventRecord)                               \
  X(cuEventQuery)                                \
  X(cuEventSynchronize)                          \
  X(cuEventElapsedTime)

/// The CUDA driver API as a table of function pointers. Members are named
/// after the driver calls, so `driver.cuMemAlloc(&ptr, n)` reads like the
/// C API. Instances live for the whole process and are never unloaded.
struct CudaDriver {
  /// Opens libcuda.so.1, resolves every entry point and calls cuInit(0).
  /// The result (success or failure) is computed once and cached.
  static absl::StatusOr<const CudaDriver*> Load();

  /// As Load(), for an explicit library path or soname (tests pass a bogus
  /// one). Results are cached per `library`.
  static absl::StatusOr<const CudaDriver*> Load(const char* library);

  /// The driver loaded by a successful Load call, or null if none succeeded
  /// yet. Never opens anything.
  static const CudaDriver* LoadedOrNull();

  /// The library this table was resolved from.
  std::string library;

#define TESSERA_DECLARE_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  TESSERA_CUDA_DRIVER_FUNCTIONS(TESSERA_DECLARE_DRIVER_MEMBER)
#undef TESSERA_DECLARE_DRIVER_MEMBER
};

/// Turns `result` into a status: OK for CUDA_SUCCESS, otherwise a status whose
/// message names `call` (e.g. "cuMemAlloc") and the error's name and
/// description when a driver is loaded to ask ("CUDA_ERROR_OUT_OF_MEMORY: out
/// of memory"); without a driver it gives the numeric code.
absl::Status ToStatus(CUresult result, absl::string_view call);

/// One integer attribute of `device`; errors name the call and `what`
/// ("cuDeviceGetAttribute(SM count) failed: ...").
absl::StatusOr<int> DeviceAttribute(const CudaDriver& driver, CUdevice device,
                                    CUdevice_attribute attribute, absl::string_view what);
/// The same for the current context's device.
absl::StatusOr<int> CurrentDeviceAttribute(const CudaDriver& driver,
                                           CUdevice_attribute attribute,
                                           absl::string_view what);

}  // namespace tessera::runtime

/// Evaluates a driver call through `driver` and returns its status from the
/// enclosing function on failure, naming the call without its arguments,
/// e.g. TESSERA_CU_RETURN_IF_ERROR(driver, cuCtxSynchronize());
#define TESSERA_CU_RETURN_IF_ERROR(driver, call)                        \
  do {                                                                   \
    const char* tessera_cu_call = #call;                                 \
    absl::Status tessera_cu_status = ::tessera::runtime::ToStatus(       \
        (driver).call,                                                   \
        absl::string_view(tessera_cu_call,                               \
                          std::strcspn(tessera_cu_call, "(")));          \
    if (!tessera_cu_status.ok()) return tessera_cu_status;               \
  } while (false)

#endif  // TESSERA_RUNTIME_CUDA_DRIVER_H_
