//===- tessera_bridge.cc - The runtime behind a C ABI ----------------------===//
//
// This file implements tessera_bridge.h over the runtime: kernel files read
// and validated by runtime/bundle.h, arguments checked and packed by
// PrepareLaunch, kernels loaded once per device into its primary context
// (the one PyTorch's CUDA runtime uses) and launched on the caller's stream.
// Every failure becomes a status code and a thread-local message.
//
//===----------------------------------------------------------------------===//

#include "python/bridge/tessera_bridge.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "runtime/bundle.h"
#include "runtime/cuda_driver.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"

namespace {

using ::tessera::runtime::CompiledKernel;
using ::tessera::runtime::CudaDriver;
using ::tessera::runtime::Device;
using ::tessera::runtime::DType;
using ::tessera::runtime::KernelArg;
using ::tessera::runtime::KernelBundle;
using ::tessera::runtime::LoadedKernel;
using ::tessera::runtime::PackedLaunch;
using ::tessera::runtime::Param;
using ::tessera::runtime::ScalarArg;
using ::tessera::runtime::TensorArg;

/// Arguments a launch may pass at most, and dimensions a tensor may have:
/// far above any kernel's, so only a corrupted call is refused.
constexpr int kMaxArgs = 1024;
constexpr int kMaxRank = 16;
/// Packed launches kept per kernel and device (one per distinct shapes and
/// scalars); the cache starts over when it is full.
constexpr size_t kMaxCachedLaunches = 64;

thread_local std::string last_error;

/// Records `status` as this thread's last error and returns its code.
int Fail(const absl::Status& status) {
  last_error = std::string(status.message());
  return static_cast<int>(status.code());
}

/// `text` as a JSON string literal.
std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string DescribeParam(const Param& param) {
  std::string shape;
  for (int64_t dim : param.shape()) absl::StrAppend(&shape, shape.empty() ? "" : ", ", dim);
  return absl::StrCat("{\"name\": ", JsonString(param.name()), ", \"kind\": \"",
                      param.kind() == Param::KIND_TENSOR ? "tensor" : "scalar",
                      "\", \"dtype\": ", JsonString(tessera::runtime::DTypeName(param.dtype())),
                      ", \"dtype_number\": ", static_cast<int>(param.dtype()), ", \"shape\": [",
                      shape, "], \"alignment\": ", param.alignment(), "}");
}

std::string DescribeKernels(const std::vector<CompiledKernel>& kernels) {
  std::string json = "[";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const CompiledKernel& kernel = kernels[i];
    std::string params;
    for (const Param& param : kernel.params())
      absl::StrAppend(&params, params.empty() ? "" : ", ", DescribeParam(param));
    absl::StrAppend(&json, i ? ", " : "", "{\"entry\": ", JsonString(kernel.entry()),
                    ", \"target\": ", JsonString(kernel.target()),
                    ", \"signature\": ", JsonString(tessera::runtime::FormatSignature(kernel)),
                    ", \"params\": [", params, "]}");
  }
  return json + "]";
}

/// Puts back the calling thread's current context on scope exit: the
/// bridge makes a device's primary context current to load and launch, and
/// the caller's (PyTorch's current device) must not change under it.
class CurrentContextGuard {
 public:
  CurrentContextGuard() {
    absl::StatusOr<const CudaDriver*> driver = CudaDriver::Load();  // Cached after the first.
    if (driver.ok() && (*driver)->cuCtxGetCurrent(&saved_) == CUDA_SUCCESS) driver_ = *driver;
  }
  ~CurrentContextGuard() {
    CUcontext now = nullptr;
    if (driver_ != nullptr && driver_->cuCtxGetCurrent(&now) == CUDA_SUCCESS && now != saved_)
      driver_->cuCtxSetCurrent(saved_);
  }
  CurrentContextGuard(const CurrentContextGuard&) = delete;
  CurrentContextGuard& operator=(const CurrentContextGuard&) = delete;

 private:
  const CudaDriver* driver_ = nullptr;
  CUcontext saved_ = nullptr;
};

/// The devices opened so far, by ordinal. Never destroyed: the primary
/// contexts stay retained until the process ends, as PyTorch's do.
absl::StatusOr<const Device*> OpenDevice(int ordinal) {
  static absl::Mutex mutex(absl::kConstInit);
  static auto* devices = new std::map<int, std::unique_ptr<Device>>();
  absl::MutexLock lock(&mutex);
  auto it = devices->find(ordinal);
  if (it == devices->end()) {
    absl::StatusOr<Device> device = Device::Open(ordinal);
    if (!device.ok()) return device.status();
    it = devices->emplace(ordinal, std::make_unique<Device>(*std::move(device))).first;
  }
  return it->second.get();
}

/// Turns the C arguments into the runtime's, refusing malformed ones (a
/// bad kind, dtype number or rank) by their position.
absl::StatusOr<std::vector<KernelArg>> ToKernelArgs(const TesseraArg* args, int num_args) {
  if (num_args < 0 || num_args > kMaxArgs || (num_args > 0 && args == nullptr))
    return absl::InvalidArgumentError(absl::StrCat("bad argument list (", num_args, " arguments)"));
  std::vector<KernelArg> out;
  out.reserve(num_args);
  for (int i = 0; i < num_args; ++i) {
    const TesseraArg& arg = args[i];
    if (!tessera::runtime::DType_IsValid(arg.dtype) || arg.dtype == 0)
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, ": dtype number ", arg.dtype, " is not a tessera dtype"));
    DType dtype = static_cast<DType>(arg.dtype);
    if (arg.kind == TESSERA_ARG_SCALAR) {
      ScalarArg scalar{dtype, int64_t{arg.int_value}};
      if (arg.is_float) scalar.value = arg.float_value;
      out.push_back(scalar);
      continue;
    }
    if (arg.kind != TESSERA_ARG_TENSOR)
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, ": kind ", arg.kind, " is neither a tensor nor a scalar"));
    if (arg.rank < 0 || arg.rank > kMaxRank || (arg.rank > 0 && arg.shape == nullptr))
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, ": rank ", arg.rank, " (at most ", kMaxRank, ")"));
    TensorArg tensor;
    tensor.ptr = static_cast<CUdeviceptr>(arg.address);
    tensor.dtype = dtype;
    tensor.shape.assign(arg.shape, arg.shape + arg.rank);
    out.push_back(std::move(tensor));
  }
  return out;
}

/// The name of parameter `i` of `kernel` for messages.
std::string ParamName(const CompiledKernel& kernel, int i) {
  if (i < kernel.params_size()) return absl::StrCat("'", kernel.params(i).name(), "'");
  return absl::StrCat("#", i);
}

/// The ordinal of the device that holds every tensor of a launch (asked of
/// the driver, which refuses pageable host memory; pinned host memory mapped
/// for the device passes, as the device can read it). Without tensors: the
/// current context's device, else 0.
absl::StatusOr<int> LaunchDevice(const CudaDriver& driver, const CompiledKernel& kernel,
                                 const std::vector<KernelArg>& args) {
  int found = -1;
  std::string found_name;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* tensor = std::get_if<TensorArg>(&args[i]);
    if (tensor == nullptr || tensor->ptr == 0) continue;
    int ordinal = -1;
    CUresult result =
        driver.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, tensor->ptr);
    std::string name = ParamName(kernel, static_cast<int>(i));
    if (result != CUDA_SUCCESS) {
      absl::Status status = tessera::runtime::ToStatus(result, "cuPointerGetAttribute");
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: argument %s at 0x%x is not device memory (%s)", kernel.entry(), name,
                          tensor->ptr, status.message()));
    }
    if (found >= 0 && ordinal != found)
      return absl::InvalidArgumentError(
          absl::StrCat(kernel.entry(), ": argument ", name, " is on device ", ordinal, " but ",
                       found_name, " is on device ", found, "; one launch runs on one device"));
    found = ordinal;
    found_name = name;
  }
  if (found >= 0) return found;
  CUdevice current = 0;
  if (driver.cuCtxGetDevice(&current) == CUDA_SUCCESS) return static_cast<int>(current);
  return 0;
}

/// A string that tells launches apart by everything PrepareLaunch reads but
/// the tensors' addresses: dtypes, shapes and scalars.
std::string LaunchKey(const std::vector<KernelArg>& args) {
  std::string key;
  for (const KernelArg& arg : args) {
    if (const auto* tensor = std::get_if<TensorArg>(&arg)) {
      // A null pointer (an empty tensor's) packs differently: its own entry.
      absl::StrAppend(&key, tensor->ptr == 0 ? "z" : "t", static_cast<int>(tensor->dtype), ":");
      for (int64_t dim : tensor->shape) absl::StrAppend(&key, dim, ",");
    } else {
      const auto& scalar = std::get<ScalarArg>(arg);
      absl::StrAppend(&key, "s", static_cast<int>(scalar.dtype), ":");
      if (const auto* i = std::get_if<int64_t>(&scalar.value))
        absl::StrAppend(&key, "i", *i);
      else
        absl::StrAppend(&key, "f", absl::StrFormat("%a", std::get<double>(scalar.value)));
    }
    key += ';';
  }
  return key;
}

std::vector<CUdeviceptr> TensorAddresses(const std::vector<KernelArg>& args) {
  std::vector<CUdeviceptr> addresses;
  for (const KernelArg& arg : args)
    if (const auto* tensor = std::get_if<TensorArg>(&arg)) addresses.push_back(tensor->ptr);
  return addresses;
}

}  // namespace

struct TesseraBundle {
  std::vector<CompiledKernel> kernels;
  std::string description;
  absl::Mutex mutex;
  /// Kernels loaded so far, by (kernel index, device ordinal).
  std::map<std::pair<int, int>, std::unique_ptr<LoadedKernel>> loaded ABSL_GUARDED_BY(mutex);
  /// Packed launches by (kernel index, device ordinal), then LaunchKey.
  std::map<std::pair<int, int>, std::map<std::string, std::unique_ptr<PackedLaunch>>> packed
      ABSL_GUARDED_BY(mutex);

  absl::StatusOr<const CompiledKernel*> Kernel(int index) const {
    if (index < 0 || index >= static_cast<int>(kernels.size()))
      return absl::OutOfRangeError(
          absl::StrCat("kernel index ", index, " (the file holds ", kernels.size(), ")"));
    return &kernels[index];
  }

  /// Makes `ordinal`'s primary context current and returns kernel `index`
  /// loaded there (loading it on first use).
  absl::StatusOr<const LoadedKernel*> Loaded(int index, int ordinal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    absl::StatusOr<const Device*> device = OpenDevice(ordinal);
    if (!device.ok()) return device.status();
    if (absl::Status status = (*device)->MakeCurrent(); !status.ok()) return status;
    std::unique_ptr<LoadedKernel>& slot = loaded[{index, ordinal}];
    if (slot == nullptr) {
      absl::StatusOr<LoadedKernel> kernel = LoadedKernel::Load(kernels[index]);
      if (!kernel.ok()) return kernel.status();
      slot = std::make_unique<LoadedKernel>(*std::move(kernel));
    }
    return slot.get();
  }
};

struct TesseraPrepared {
  TesseraBundle* bundle = nullptr;
  /// The device it launches on and the kernel loaded there (both live as
  /// long as the bundle: devices are never closed, loaded kernels only with
  /// the bundle).
  const Device* device = nullptr;
  const LoadedKernel* loaded = nullptr;
  PackedLaunch packed;
};

namespace {

/// The common front of every launching call: the kernel, its arguments
/// checked and packed, and the device that holds them.
struct CheckedLaunch {
  const CompiledKernel* kernel = nullptr;
  std::vector<KernelArg> args;
  int ordinal = 0;
};

/// Kernel `index` and the runtime's form of `args` for it (no GPU).
absl::StatusOr<CheckedLaunch> ConvertLaunch(const TesseraBundle& bundle, int index,
                                            const TesseraArg* args, int num_args) {
  CheckedLaunch out;
  absl::StatusOr<const CompiledKernel*> kernel = bundle.Kernel(index);
  if (!kernel.ok()) return kernel.status();
  out.kernel = *kernel;
  absl::StatusOr<std::vector<KernelArg>> converted = ToKernelArgs(args, num_args);
  if (!converted.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(out.kernel->entry(), ": ", converted.status().message()));
  out.args = *std::move(converted);
  return out;
}

/// ConvertLaunch, then the device that holds the tensors.
absl::StatusOr<CheckedLaunch> CheckLaunch(const TesseraBundle& bundle, int index,
                                          const TesseraArg* args, int num_args) {
  absl::StatusOr<CheckedLaunch> out = ConvertLaunch(bundle, index, args, num_args);
  if (!out.ok()) return out.status();
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Load();
  if (!driver.ok()) return driver.status();
  absl::StatusOr<int> ordinal = LaunchDevice(**driver, *out->kernel, out->args);
  if (!ordinal.ok()) return ordinal.status();
  out->ordinal = *ordinal;
  return out;
}

/// Launches `prepared` on `stream`, with its device's context current only
/// for the launch: made current when the caller's is another (PyTorch's is
/// usually this one already), the caller's put back after.
absl::Status LaunchPrepared(TesseraPrepared& prepared, uint64_t stream)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(prepared.bundle->mutex) {
  const CudaDriver& driver = prepared.loaded->driver();
  CUcontext saved = nullptr;
  if (driver.cuCtxGetCurrent(&saved) != CUDA_SUCCESS) saved = nullptr;
  const bool switched = saved != prepared.device->context();
  if (switched) {
    if (absl::Status status = prepared.device->MakeCurrent(); !status.ok()) return status;
  }
  absl::Status status = tessera::runtime::Launch(*prepared.loaded, prepared.packed,
                                                 reinterpret_cast<CUstream>(stream));
  if (switched) driver.cuCtxSetCurrent(saved);
  return status;
}

absl::Status Launch(TesseraBundle& bundle, int index, const TesseraArg* args, int num_args,
                    uint64_t stream) {
  absl::StatusOr<CheckedLaunch> checked = CheckLaunch(bundle, index, args, num_args);
  if (!checked.ok()) return checked.status();
  absl::MutexLock lock(&bundle.mutex);
  absl::StatusOr<const LoadedKernel*> loaded = bundle.Loaded(index, checked->ordinal);
  if (!loaded.ok()) return loaded.status();
  auto& cache = bundle.packed[{index, checked->ordinal}];
  std::string key = LaunchKey(checked->args);
  auto it = cache.find(key);
  if (it == cache.end()) {
    absl::StatusOr<PackedLaunch> packed =
        tessera::runtime::PrepareLaunch(*checked->kernel, checked->args);
    if (!packed.ok()) return packed.status();
    if (cache.size() >= kMaxCachedLaunches) cache.clear();
    it = cache.emplace(key, std::make_unique<PackedLaunch>(*std::move(packed))).first;
  } else {
    absl::Status rebound =
        tessera::runtime::RebindPointers(*it->second, TensorAddresses(checked->args));
    if (!rebound.ok()) return rebound;
  }
  return tessera::runtime::Launch(**loaded, *it->second, reinterpret_cast<CUstream>(stream));
}

}  // namespace

extern "C" {

int tessera_abi_version(void) { return TESSERA_BRIDGE_ABI_VERSION; }

const char* tessera_last_error(void) { return last_error.c_str(); }

int tessera_bundle_open(const char* path, TesseraBundle** out) {
  if (path == nullptr || out == nullptr) return Fail(absl::InvalidArgumentError("null path"));
  *out = nullptr;
  // Read no further than a kernel file may go (a FIFO or /dev/zero is not
  // read whole), whichever payload it holds.
  absl::StatusOr<KernelBundle> read = tessera::runtime::ReadKernelFile(path);
  if (!read.ok()) return Fail(read.status());
  auto bundle = std::make_unique<TesseraBundle>();
  for (CompiledKernel& kernel : *read->mutable_kernels())
    bundle->kernels.push_back(std::move(kernel));
  bundle->description = DescribeKernels(bundle->kernels);
  *out = bundle.release();
  return 0;
}

void tessera_bundle_close(TesseraBundle* bundle) {
  CurrentContextGuard context_guard;
  delete bundle;
}

const char* tessera_bundle_describe(const TesseraBundle* bundle) {
  return bundle == nullptr ? "[]" : bundle->description.c_str();
}

int tessera_check(const TesseraBundle* bundle, int index, const TesseraArg* args, int num_args) {
  if (bundle == nullptr) return Fail(absl::InvalidArgumentError("null bundle"));
  absl::StatusOr<CheckedLaunch> converted = ConvertLaunch(*bundle, index, args, num_args);
  if (!converted.ok()) return Fail(converted.status());
  absl::StatusOr<PackedLaunch> packed =
      tessera::runtime::PrepareLaunch(*converted->kernel, converted->args);
  return packed.ok() ? 0 : Fail(packed.status());
}

int tessera_launch(TesseraBundle* bundle, int index, const TesseraArg* args, int num_args,
                   uint64_t stream) {
  CurrentContextGuard context_guard;
  if (bundle == nullptr) return Fail(absl::InvalidArgumentError("null bundle"));
  absl::Status status = Launch(*bundle, index, args, num_args, stream);
  return status.ok() ? 0 : Fail(status);
}

int tessera_prepare(TesseraBundle* bundle, int index, const TesseraArg* args, int num_args,
                    TesseraPrepared** out) {
  CurrentContextGuard context_guard;
  if (bundle == nullptr || out == nullptr) return Fail(absl::InvalidArgumentError("null bundle"));
  *out = nullptr;
  absl::StatusOr<CheckedLaunch> checked = CheckLaunch(*bundle, index, args, num_args);
  if (!checked.ok()) return Fail(checked.status());
  absl::StatusOr<PackedLaunch> packed =
      tessera::runtime::PrepareLaunch(*checked->kernel, checked->args);
  if (!packed.ok()) return Fail(packed.status());
  auto prepared = std::make_unique<TesseraPrepared>();
  {
    absl::MutexLock lock(&bundle->mutex);
    absl::StatusOr<const LoadedKernel*> loaded = bundle->Loaded(index, checked->ordinal);
    if (!loaded.ok()) return Fail(loaded.status());
    prepared->loaded = *loaded;
  }
  absl::StatusOr<const Device*> device = OpenDevice(checked->ordinal);
  if (!device.ok()) return Fail(device.status());
  prepared->bundle = bundle;
  prepared->device = *device;
  prepared->packed = *std::move(packed);
  *out = prepared.release();
  return 0;
}

int tessera_rebind(TesseraPrepared* prepared, const uint64_t* addresses, int num_addresses) {
  if (prepared == nullptr || num_addresses < 0 || (num_addresses > 0 && addresses == nullptr))
    return Fail(absl::InvalidArgumentError("null prepared launch or addresses"));
  std::vector<CUdeviceptr> pointers(addresses, addresses + num_addresses);
  absl::Status status = tessera::runtime::RebindPointers(prepared->packed, pointers);
  return status.ok() ? 0 : Fail(status);
}

int tessera_prepared_launch(TesseraPrepared* prepared, uint64_t stream) {
  if (prepared == nullptr) return Fail(absl::InvalidArgumentError("null prepared launch"));
  absl::MutexLock lock(&prepared->bundle->mutex);
  absl::Status status = LaunchPrepared(*prepared, stream);
  return status.ok() ? 0 : Fail(status);
}

int tessera_prepared_launch_at(TesseraPrepared* prepared, const uint64_t* addresses,
                               int num_addresses, uint64_t stream) {
  if (prepared == nullptr || num_addresses < 0 || (num_addresses > 0 && addresses == nullptr))
    return Fail(absl::InvalidArgumentError("null prepared launch or addresses"));
  static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t));
  absl::MutexLock lock(&prepared->bundle->mutex);
  absl::Status status = tessera::runtime::RebindPointers(
      prepared->packed,
      absl::MakeConstSpan(reinterpret_cast<const CUdeviceptr*>(addresses), num_addresses));
  if (status.ok()) status = LaunchPrepared(*prepared, stream);
  return status.ok() ? 0 : Fail(status);
}

void tessera_prepared_free(TesseraPrepared* prepared) { delete prepared; }

int tessera_device_capability(int ordinal, int* capability) {
  CurrentContextGuard context_guard;
  if (capability == nullptr) return Fail(absl::InvalidArgumentError("null capability"));
  absl::StatusOr<const Device*> device = OpenDevice(ordinal);
  if (!device.ok()) return Fail(device.status());
  *capability = (*device)->compute_capability_major() * 10 + (*device)->compute_capability_minor();
  return 0;
}

int tessera_device_synchronize(int ordinal) {
  CurrentContextGuard context_guard;
  absl::StatusOr<const Device*> device = OpenDevice(ordinal);
  if (!device.ok()) return Fail(device.status());
  if (absl::Status status = (*device)->MakeCurrent(); !status.ok()) return Fail(status);
  absl::Status status = tessera::runtime::Synchronize();
  return status.ok() ? 0 : Fail(status);
}

}  // extern "C"
