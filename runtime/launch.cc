//===- launch.cc - Checked, typed kernel launches -------------------------===//
//
// This file implements argument checking and packing (PrepareLaunch), with
// the kernel's preconditions and grid evaluated through expr.h, signature
// printing and Launch.
//
//===----------------------------------------------------------------------===//

#include "runtime/launch.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {
namespace {

/// Where a dynamic dimension comes from.
struct DynamicDim {
  int param = 0;
  int axis = 0;
};

/// The dynamic dimensions of `kernel`, in symbol order.
std::vector<DynamicDim> CollectDynamicDims(const CompiledKernel& kernel) {
  std::vector<DynamicDim> dims;
  for (int p = 0; p < kernel.params_size(); ++p) {
    const Param& param = kernel.params(p);
    if (param.kind() != Param::KIND_TENSOR) continue;
    for (int axis = 0; axis < param.shape_size(); ++axis) {
      if (param.shape(axis) == -1) dims.push_back({p, axis});
    }
  }
  return dims;
}

/// "A" for a rank-1 tensor, "A.shape[1]" otherwise.
std::string DimLabel(const CompiledKernel& kernel, const DynamicDim& dim) {
  const Param& param = kernel.params(dim.param);
  if (param.shape_size() == 1) return param.name();
  return absl::StrCat(param.name(), ".shape[", dim.axis, "]");
}

/// "f32[N, 64]" for a tensor param, "f32" for a scalar.
std::string FormatParamType(const Param& param,
                            absl::Span<const std::string> dim_names,
                            int* next_dynamic) {
  std::string text = DTypeName(param.dtype());
  if (param.kind() != Param::KIND_TENSOR) return text;
  std::vector<std::string> dims;
  for (int64_t dim : param.shape()) {
    if (dim != -1) {
      dims.push_back(absl::StrCat(dim));
    } else if (*next_dynamic < static_cast<int>(dim_names.size())) {
      dims.push_back(dim_names[(*next_dynamic)++]);
    } else {
      dims.push_back("?");
    }
  }
  return absl::StrCat(text, "[", absl::StrJoin(dims, ", "), "]");
}

/// Appends one parameter slot holding `value`.
template <typename T>
void AppendSlot(PackedLaunch& packed, T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>);
  uint64_t cell = 0;
  std::memcpy(&cell, &value, sizeof(T));
  packed.slots.push_back(cell);
  packed.slot_sizes.push_back(sizeof(T));
}

/// Checks a scalar argument's value against `dtype` and packs it.
absl::Status PackScalar(PackedLaunch& packed, DType dtype,
                        const ScalarArg& arg) {
  const int64_t* integer = std::get_if<int64_t>(&arg.value);
  auto check_range = [&](int64_t lo, int64_t hi) -> absl::Status {
    if (integer == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expects an integer ", DTypeName(dtype), " value, got a double"));
    }
    if (*integer < lo || *integer > hi) {
      return absl::OutOfRangeError(absl::StrCat(
          "value ", *integer, " does not fit in ", DTypeName(dtype)));
    }
    return absl::OkStatus();
  };
  const double real = integer != nullptr ? static_cast<double>(*integer)
                                         : std::get<double>(arg.value);
  switch (dtype) {
    case DTYPE_F32:
      AppendSlot(packed, static_cast<float>(real));
      return absl::OkStatus();
    case DTYPE_F64:
      AppendSlot(packed, real);
      return absl::OkStatus();
    case DTYPE_I8:
      TESSERA_RETURN_IF_ERROR(check_range(INT8_MIN, INT8_MAX));
      AppendSlot(packed, static_cast<int8_t>(*integer));
      return absl::OkStatus();
    case DTYPE_I32:
      TESSERA_RETURN_IF_ERROR(check_range(INT32_MIN, INT32_MAX));
      AppendSlot(packed, static_cast<int32_t>(*integer));
      return absl::OkStatus();
    case DTYPE_I64:
      TESSERA_RETURN_IF_ERROR(check_range(INT64_MIN, INT64_MAX));
      AppendSlot(packed, *integer);
      return absl::OkStatus();
    case DTYPE_U8:
      TESSERA_RETURN_IF_ERROR(check_range(0, UINT8_MAX));
      AppendSlot(packed, static_cast<uint8_t>(*integer));
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(absl::StrCat(
          "scalar parameters of type ", DTypeName(dtype), " are not supported"));
  }
}

/// Checks a tensor argument against `param`; packs its pointer and dynamic
/// dimensions (also appended to packed.dynamic_dims).
absl::Status PackTensor(PackedLaunch& packed, const Param& param,
                        const TensorArg& arg) {
  if (arg.dtype != param.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expects element type ", DTypeName(param.dtype()), ", got ",
        DTypeName(arg.dtype)));
  }
  if (arg.shape.size() != static_cast<size_t>(param.shape_size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expects rank ", param.shape_size(), ", got rank ", arg.shape.size(),
        " [", absl::StrJoin(arg.shape, ", "), "]"));
  }
  bool has_elements = true;
  for (int axis = 0; axis < param.shape_size(); ++axis) {
    const int64_t expected = param.shape(axis), actual = arg.shape[axis];
    if (actual < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", axis, " is negative (", actual, ")"));
    }
    if (expected < -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed kernel: dimension ", axis, " declared as ", expected));
    }
    if (expected >= 0 && actual != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", axis, " must be ", expected, ", got ",
                       actual, " (shape [", absl::StrJoin(arg.shape, ", "),
                       "])"));
    }
    has_elements = has_elements && actual > 0;
  }
  if (arg.ptr == 0 && has_elements) {
    return absl::InvalidArgumentError("null pointer for a non-empty tensor");
  }
  if (param.alignment() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed kernel: alignment ", param.alignment()));
  }
  if (param.alignment() > 0 &&
      arg.ptr % static_cast<uint64_t>(param.alignment()) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pointer 0x%x is not aligned to %d bytes", arg.ptr, param.alignment()));
  }
  AppendSlot(packed, static_cast<uint64_t>(arg.ptr));
  for (int axis = 0; axis < param.shape_size(); ++axis) {
    if (param.shape(axis) != -1) continue;
    AppendSlot(packed, arg.shape[axis]);
    packed.dynamic_dims.push_back(arg.shape[axis]);
  }
  return absl::OkStatus();
}

/// Refuses a negative size argument (an integer scalar a grid extent reads,
/// e.g. the longest sequence of a variable-length batch) of `extent`.
absl::Status CheckSizeArguments(const CompiledKernel& kernel, const Expr& extent,
                                absl::Span<const std::optional<int64_t>> scalars) {
  for (int64_t p : ExprParams(extent)) {
    if (p >= 0 && p < static_cast<int64_t>(scalars.size()) && scalars[p].has_value() &&
        *scalars[p] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("size argument ", kernel.params(static_cast<int>(p)).name(), " is ",
                       *scalars[p], "; the grid needs it at least 0"));
    }
  }
  return absl::OkStatus();
}

/// The params' names, for messages.
std::vector<std::string> ParamNames(const CompiledKernel& kernel) {
  std::vector<std::string> names;
  for (const Param& param : kernel.params()) names.push_back(param.name());
  return names;
}

/// Evaluates the grid expressions into packed.grid and packed.empty; they
/// read the dynamic dimensions and the size arguments among `scalars`.
absl::Status EvaluateGrid(const CompiledKernel& kernel, absl::Span<const std::string> dim_names,
                          absl::Span<const std::optional<int64_t>> scalars, PackedLaunch& packed) {
  if (kernel.grid_size() > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed kernel: ", kernel.grid_size(), " grid dimensions"));
  }
  constexpr char kAxes[] = "xyz";
  for (int i = 0; i < kernel.grid_size(); ++i) {
    TESSERA_RETURN_IF_ERROR(CheckSizeArguments(kernel, kernel.grid(i), scalars));
    absl::StatusOr<int64_t> extent = EvaluateExpr(kernel.grid(i), packed.dynamic_dims, scalars);
    if (!extent.ok()) {
      return absl::Status(extent.status().code(),
                          absl::StrCat("grid ", std::string(1, kAxes[i]), " = ",
                                       FormatExpr(kernel.grid(i), dim_names, ParamNames(kernel)),
                                       ": ", extent.status().message()));
    }
    const int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
    if (*extent < 0 || *extent > limit) {
      return absl::OutOfRangeError(
          absl::StrCat("grid ", std::string(1, kAxes[i]), " = ",
                       FormatExpr(kernel.grid(i), dim_names, ParamNames(kernel)), " is ", *extent,
                       ", outside [0, ", limit, "]"));
    }
    packed.grid[i] = *extent;
    if (*extent == 0) packed.empty = true;
  }
  return absl::OkStatus();
}

int DTypeBytes(DType dtype) {
  switch (dtype) {
    case DTYPE_F16:
    case DTYPE_BF16:
      return 2;
    case DTYPE_F32:
    case DTYPE_I32:
      return 4;
    case DTYPE_F64:
    case DTYPE_I64:
      return 8;
    case DTYPE_I8:
    case DTYPE_U8:
    case DTYPE_F8E4M3:
    case DTYPE_F8E5M2:
      return 1;
    default:
      return 0;
  }
}

/// Describes each tensor map the kernel takes (encoded by EncodeTensorMaps):
/// dimensions and byte strides innermost first, the box, the swizzle.
absl::Status PackTensorMaps(const CompiledKernel& kernel,
                            absl::Span<const KernelArg> args,
                            PackedLaunch& packed) {
  packed.tensor_maps.reserve(kernel.tensor_maps_size());
  for (int j = 0; j < kernel.tensor_maps_size(); ++j) {
    const TensorMap& map = kernel.tensor_maps(j);
    const auto* tensor =
        map.param() >= 0 && map.param() < static_cast<int>(args.size())
            ? std::get_if<TensorArg>(&args[map.param()])
            : nullptr;
    if (tensor == nullptr ||
        map.box_size() != static_cast<int>(tensor->shape.size()) ||
        map.box_size() < 1 || map.box_size() > 5) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed kernel: tensor map ", j, " refers to param ", map.param(),
          " with a box of rank ", map.box_size()));
    }
    PackedLaunch::TensorMapParam out;
    out.dtype = tensor->dtype;
    out.address = tensor->ptr;
    out.param = map.param();
    out.swizzle_bytes = map.swizzle_bytes();
    const int64_t element = DTypeBytes(tensor->dtype);
    int64_t stride = element;
    for (int axis = map.box_size() - 1; axis >= 0; --axis) {
      out.dims.push_back(static_cast<cuuint64_t>(tensor->shape[axis]));
      out.box.push_back(static_cast<cuuint32_t>(map.box(axis)));
      if (axis != map.box_size() - 1) {
        // cuTensorMapEncodeTiled takes strides that are multiples of 16.
        if (stride % 16 != 0 && tensor->shape[axis] > 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "argument ", map.param(), " (", kernel.params(map.param()).name(),
              "): dimension ", axis, " has a stride of ", stride,
              " bytes; the kernel's bulk tensor copies need multiples of 16"));
        }
        out.strides_bytes.push_back(static_cast<cuuint64_t>(stride));
      }
      stride *= tensor->shape[axis];
    }
    packed.tensor_maps.push_back(std::move(out));
  }
  return absl::OkStatus();
}

/// Checks each argument against its param and packs it in param order;
/// records the value of each integer scalar in `scalars` (by param number).
absl::Status PackArguments(const CompiledKernel& kernel, absl::Span<const KernelArg> args,
                           absl::Span<const std::string> dim_names, PackedLaunch& packed,
                           std::vector<std::optional<int64_t>>& scalars) {
  int next_dynamic = 0;
  packed.pointer_slots.assign(kernel.params_size(), -1);
  packed.pointer_alignments.assign(kernel.params_size(), 0);
  for (int i = 0; i < kernel.params_size(); ++i) {
    const Param& param = kernel.params(i);
    const std::string type = FormatParamType(param, dim_names, &next_dynamic);
    absl::Status status;
    if (param.kind() == Param::KIND_TENSOR) {
      if (const auto* tensor = std::get_if<TensorArg>(&args[i])) {
        packed.pointer_slots[i] = static_cast<int>(packed.slots.size());
        packed.pointer_alignments[i] = std::max<int64_t>(param.alignment(), 1);
        status = PackTensor(packed, param, *tensor);
      } else {
        status =
            absl::InvalidArgumentError(absl::StrCat("expects a tensor ", type, ", got a scalar"));
      }
    } else if (param.kind() == Param::KIND_SCALAR) {
      const auto* scalar = std::get_if<ScalarArg>(&args[i]);
      if (scalar == nullptr) {
        status =
            absl::InvalidArgumentError(absl::StrCat("expects a scalar ", type, ", got a tensor"));
      } else if (scalar->dtype != param.dtype()) {
        status = absl::InvalidArgumentError(
            absl::StrCat("expects a scalar ", type, ", got ", DTypeName(scalar->dtype)));
      } else {
        status = PackScalar(packed, param.dtype(), *scalar);
        if (status.ok() && IsIntegerScalarParam(param)) {
          scalars[i] = std::get<int64_t>(scalar->value);
        }
      }
    } else {
      status = absl::InvalidArgumentError("malformed kernel: parameter kind unset");
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("argument ", i, " (", param.name(), ": ",
                                                      type, "): ", status.message()));
    }
  }
  return absl::OkStatus();
}

/// The checks of PrepareLaunch, without the entry-name prefix.
absl::StatusOr<PackedLaunch> PrepareLaunchImpl(
    const CompiledKernel& kernel, absl::Span<const KernelArg> args) {
  PackedLaunch packed;
  if (kernel.block_threads() < 1 || kernel.block_threads() > kMaxBlockThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed kernel: block_threads ", kernel.block_threads(),
        " outside [1, ", kMaxBlockThreads, "]"));
  }
  if (kernel.shared_memory_bytes() < 0 ||
      kernel.shared_memory_bytes() > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed kernel: shared_memory_bytes ", kernel.shared_memory_bytes()));
  }
  if (kernel.cluster_x() < 0 || kernel.cluster_x() > 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed kernel: cluster_x ", kernel.cluster_x(), " outside [0, 8]"));
  }
  if (kernel.cluster_y() < 0 ||
      std::max(kernel.cluster_x(), 1) * std::max(kernel.cluster_y(), 1) > 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed kernel: a cluster of ", kernel.cluster_x(),
                     " x ", kernel.cluster_y(), " blocks, over 8"));
  }
  if (kernel.persistent() && kernel.cluster_y() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed kernel: persistent with cluster_y ",
                     kernel.cluster_y(), " (persistent clusters run along x)"));
  }
  packed.block_threads = kernel.block_threads();
  packed.shared_memory_bytes = kernel.shared_memory_bytes();

  if (args.size() != static_cast<size_t>(kernel.params_size())) {
    std::vector<std::string> names;
    for (const Param& param : kernel.params()) names.push_back(param.name());
    return absl::InvalidArgumentError(absl::StrCat(
        "expects ", kernel.params_size(), " arguments (",
        absl::StrJoin(names, ", "), "), got ", args.size()));
  }

  const std::vector<std::string> dim_names = DynamicDimNames(kernel);
  // The value of each integer scalar argument, by param number, for the
  // preconditions.
  std::vector<std::optional<int64_t>> scalars(kernel.params_size());
  TESSERA_RETURN_IF_ERROR(PackArguments(kernel, args, dim_names, packed, scalars));

  const std::vector<DynamicDim> dims = CollectDynamicDims(kernel);
  for (const DimGroup& group : kernel.dim_groups()) {
    for (int d : group.dims()) {
      if (d < 0 || d >= static_cast<int>(dims.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "malformed kernel: dimension group ", group.name(),
            " refers to dynamic dimension ", d, " of ", dims.size()));
      }
    }
    for (int j = 1; j < group.dims_size(); ++j) {
      const int first = group.dims(0), other = group.dims(j);
      if (packed.dynamic_dims[first] != packed.dynamic_dims[other]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dimension ", group.name(), ": ", DimLabel(kernel, dims[first]),
            " has ", packed.dynamic_dims[first], " but ",
            DimLabel(kernel, dims[other]), " has ",
            packed.dynamic_dims[other]));
      }
    }
  }

  // The author's preconditions come first: the compiler may have derived a
  // divisibility below from one, and the author's message names its source.
  TESSERA_RETURN_IF_ERROR(CheckPreconditions(kernel, dim_names, packed.dynamic_dims, scalars));

  // Divisibility the compiler assumed (to prove vector alignment).
  for (int d = 0; d < kernel.dim_divisibility_size() &&
                  d < static_cast<int>(packed.dynamic_dims.size());
       ++d) {
    const int64_t divisor = kernel.dim_divisibility(d);
    if (divisor > 1 && packed.dynamic_dims[d] % divisor != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension ", DimLabel(kernel, dims[d]), " is ", packed.dynamic_dims[d],
          ", but the kernel was compiled for multiples of ", divisor));
    }
  }

  TESSERA_RETURN_IF_ERROR(EvaluateGrid(kernel, dim_names, scalars, packed));
  if (kernel.stream_k_slot_bytes() > 0) {
    packed.workspace_slot = static_cast<int>(packed.slots.size());
    packed.slots.push_back(0);
    packed.slot_sizes.push_back(8);
  }
  TESSERA_RETURN_IF_ERROR(PackTensorMaps(kernel, args, packed));
  for (uint64_t& slot : packed.slots) packed.kernel_params.push_back(&slot);
  for (PackedLaunch::TensorMapParam& map : packed.tensor_maps)
    packed.kernel_params.push_back(map.cell);
  return packed;
}

}  // namespace

absl::StatusOr<PackedLaunch> PrepareLaunch(const CompiledKernel& kernel,
                                           absl::Span<const KernelArg> args) {
  absl::StatusOr<PackedLaunch> packed = PrepareLaunchImpl(kernel, args);
  if (!packed.ok()) {
    return absl::Status(packed.status().code(),
                        absl::StrCat(kernel.entry(), ": ",
                                     packed.status().message()));
  }
  return packed;
}

absl::Status Launch(const LoadedKernel& kernel,
                    absl::Span<const KernelArg> args, CUstream stream) {
  TESSERA_ASSIGN_OR_RETURN(PackedLaunch packed,
                           PrepareLaunch(kernel.spec(), args));
  return Launch(kernel, packed, stream);
}

absl::Status EncodeTensorMaps(const CudaDriver& driver, PackedLaunch& packed) {
  for (PackedLaunch::TensorMapParam& map : packed.tensor_maps) {
    bool empty = false;
    for (cuuint64_t d : map.dims) empty = empty || d == 0;
    if (empty) continue;  // nothing is copied from an empty tensor
    CUtensorMapDataType type;
    switch (map.dtype) {
      case DTYPE_F16: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
      case DTYPE_BF16: type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
      case DTYPE_F32: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
      case DTYPE_I32: type = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
      // TMA moves bytes: 8-bit element types travel as UINT8.
      case DTYPE_I8:
      case DTYPE_U8:
      case DTYPE_F8E4M3:
      case DTYPE_F8E5M2: type = CU_TENSOR_MAP_DATA_TYPE_UINT8; break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("tensor maps of ", DTypeName(map.dtype), " are not supported"));
    }
    CUtensorMapSwizzle swizzle = map.swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : map.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : map.swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                           : CU_TENSOR_MAP_SWIZZLE_NONE;
    const std::vector<cuuint32_t> element_strides(map.box.size(), 1);
    // A rank-1 map has no strides; the driver still wants the array.
    const cuuint64_t no_strides[1] = {0};
    const cuuint64_t* strides = map.strides_bytes.empty() ? no_strides : map.strides_bytes.data();
    absl::Status status = ToStatus(
        driver.cuTensorMapEncodeTiled(
            reinterpret_cast<CUtensorMap*>(map.cell), type,
            static_cast<cuuint32_t>(map.dims.size()), reinterpret_cast<void*>(map.address),
            map.dims.data(), strides, map.box.data(), element_strides.data(),
            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled");
    if (!status.ok()) {
      return absl::Status(
          status.code(),
          absl::StrCat(status.message(), " (dims [", absl::StrJoin(map.dims, ", "),
                       "], box [", absl::StrJoin(map.box, ", "), "], swizzle ",
                       map.swizzle_bytes, ")"));
    }
  }
  packed.tensor_maps_encoded = true;
  return absl::OkStatus();
}

absl::Status RebindPointers(PackedLaunch& packed, absl::Span<const CUdeviceptr> pointers) {
  size_t tensors = 0;
  for (int slot : packed.pointer_slots) tensors += slot >= 0;
  if (pointers.size() != tensors) {
    return absl::InvalidArgumentError(absl::StrCat("RebindPointers: the launch has ", tensors,
                                                   " tensor arguments, got ", pointers.size(),
                                                   " pointers"));
  }
  // Check every pointer before writing any.
  for (size_t i = 0, next = 0; i < packed.pointer_slots.size(); ++i) {
    if (packed.pointer_slots[i] < 0) continue;
    const CUdeviceptr ptr = pointers[next++];
    const uint64_t old = packed.slots[packed.pointer_slots[i]];
    const int64_t alignment = packed.pointer_alignments[i];
    if (ptr == 0 && old != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("RebindPointers: argument ", i, ": null pointer for a non-empty tensor"));
    }
    if (ptr % static_cast<uint64_t>(alignment) != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("RebindPointers: argument %d: pointer 0x%x is not aligned to %d bytes", i,
                          ptr, alignment));
    }
  }
  for (size_t i = 0, next = 0; i < packed.pointer_slots.size(); ++i) {
    if (packed.pointer_slots[i] < 0) continue;
    const CUdeviceptr ptr = pointers[next++];
    packed.slots[packed.pointer_slots[i]] = static_cast<uint64_t>(ptr);
    for (PackedLaunch::TensorMapParam& map : packed.tensor_maps) {
      if (map.param != static_cast<int>(i) || map.address == ptr) continue;
      map.address = ptr;
      packed.tensor_maps_encoded = false;
    }
  }
  return absl::OkStatus();
}

absl::Status Launch(const LoadedKernel& kernel, PackedLaunch& packed,
                    CUstream stream) {
  if (packed.empty) return absl::OkStatus();
  if (!packed.tensor_maps.empty() && !packed.tensor_maps_encoded) {
    absl::Status status = EncodeTensorMaps(kernel.driver(), packed);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(kernel.entry(), ": ", status.message()));
    }
  }
  // A persistent kernel: as many blocks as fit the device at once, each
  // looping over the grid's blocks (x fastest).
  const int64_t blocks = packed.grid[0] * packed.grid[1] * packed.grid[2];
  int64_t grid[3] = {packed.grid[0], packed.grid[1], packed.grid[2]};
  const int64_t cluster_x = std::max(kernel.spec().cluster_x(), 1);
  const int64_t cluster_y = std::max(kernel.spec().cluster_y(), 1);
  if (kernel.persistent_blocks() > 0) {
    // (In clusters, rounded up to whole clusters below; persistent_blocks()
    // is a multiple of the cluster, so the count stays within it.)
    grid[0] = std::min(blocks, kernel.persistent_blocks());
    grid[1] = grid[2] = 1;
  }
  // Thread block clusters: the grid's x and y rounded up to multiples (the
  // kernel makes the extra blocks leave, or gives them no tile; a stream-K
  // kernel's extra blocks take work, so its workspace counts them).
  grid[0] = (grid[0] + cluster_x - 1) / cluster_x * cluster_x;
  grid[1] = (grid[1] + cluster_y - 1) / cluster_y * cluster_y;
  if (packed.workspace_slot >= 0) {
    // Stream-K: each launched block's partial accumulators, then one counter
    // per block of the grid.
    absl::StatusOr<CUdeviceptr> workspace = kernel.Workspace(static_cast<size_t>(
        grid[0] * kernel.spec().stream_k_slot_bytes() + 4 * blocks));
    if (!workspace.ok()) {
      return absl::Status(workspace.status().code(),
                          absl::StrCat(kernel.entry(), ": ", workspace.status().message()));
    }
    packed.slots[packed.workspace_slot] = static_cast<uint64_t>(*workspace);
  }
  absl::Status status;
  const bool clusters = cluster_x * cluster_y > 1;
  const bool early = kernel.spec().waits_for_prior_kernels();
  if (clusters || early) {
    // cuLaunchKernelEx with the cluster dimensions and, for a kernel that
    // waits for the kernels before it, programmatic stream serialization.
    CUlaunchAttribute attributes[2];
    CUlaunchConfig config =
        ClusterLaunchConfig(cluster_x, cluster_y, grid[0], grid[1], grid[2], packed.block_threads,
                            packed.shared_memory_bytes, stream, attributes[0]);
    config.numAttrs = clusters ? 1 : 0;
    if (early) {
      CUlaunchAttribute& serialization = attributes[config.numAttrs++];
      serialization = {};
      serialization.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      serialization.value.programmaticStreamSerializationAllowed = 1;
    }
    config.attrs = attributes;
    status = ToStatus(kernel.driver().cuLaunchKernelEx(&config, kernel.function(),
                                                       packed.kernel_params.data(), nullptr),
                      "cuLaunchKernelEx");
  } else {
    status = ToStatus(
        kernel.driver().cuLaunchKernel(
            kernel.function(), static_cast<unsigned>(grid[0]),
            static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
            static_cast<unsigned>(packed.block_threads), 1, 1,
            static_cast<unsigned>(packed.shared_memory_bytes), stream,
            packed.kernel_params.data(), nullptr),
        "cuLaunchKernel");
  }
  if (status.ok()) return status;
  return absl::Status(
      status.code(),
      absl::StrFormat("%s: grid (%d, %d, %d) block %d smem %d B: %s",
                      kernel.entry(), grid[0], grid[1], grid[2], packed.block_threads,
                      packed.shared_memory_bytes, status.message()));
}

std::string DTypeName(DType dtype) {
  switch (dtype) {
    case DTYPE_F16: return "f16";
    case DTYPE_BF16: return "bf16";
    case DTYPE_F32: return "f32";
    case DTYPE_F64: return "f64";
    case DTYPE_I32: return "i32";
    case DTYPE_I64: return "i64";
    case DTYPE_I8: return "i8";
    case DTYPE_U8: return "u8";
    case DTYPE_F8E4M3: return "f8e4m3";
    case DTYPE_F8E5M2: return "f8e5m2";
    default: return absl::StrCat("dtype(", static_cast<int>(dtype), ")");
  }
}

std::vector<std::string> DynamicDimNames(const CompiledKernel& kernel) {
  const std::vector<DynamicDim> dims = CollectDynamicDims(kernel);
  std::vector<std::string> names;
  for (const DynamicDim& dim : dims) {
    const Param& param = kernel.params(dim.param);
    names.push_back(absl::StrCat(param.name(), ".shape[", dim.axis, "]"));
  }
  for (const DimGroup& group : kernel.dim_groups()) {
    for (int d : group.dims()) {
      if (d >= 0 && d < static_cast<int>(names.size())) names[d] = group.name();
    }
  }
  return names;
}

std::string FormatSignature(const CompiledKernel& kernel) {
  const std::vector<std::string> dim_names = DynamicDimNames(kernel);
  std::vector<std::string> params;
  int next_dynamic = 0;
  for (const Param& param : kernel.params()) {
    std::string text = absl::StrCat(
        param.name(), ": ", FormatParamType(param, dim_names, &next_dynamic));
    if (param.alignment() > 0) absl::StrAppend(&text, " align ", param.alignment());
    params.push_back(std::move(text));
  }
  std::vector<std::string> grid;
  for (const Expr& extent : kernel.grid())
    grid.push_back(FormatExpr(extent, dim_names, ParamNames(kernel)));
  while (grid.size() < 3) grid.push_back("1");
  std::string text = absl::StrCat(
      kernel.entry(), "(", absl::StrJoin(params, ", "), ") grid (",
      absl::StrJoin(grid, ", "), ") block ", kernel.block_threads(), " smem ",
      kernel.shared_memory_bytes(), " B target ", kernel.target());
  if (kernel.persistent()) absl::StrAppend(&text, ", persistent");
  if (kernel.cluster_y() > 1) {
    absl::StrAppend(&text, ", clusters of ", std::max(kernel.cluster_x(), 1),
                    "x", kernel.cluster_y());
  } else if (kernel.cluster_x() > 1) {
    absl::StrAppend(&text, ", clusters of ", kernel.cluster_x());
  }
  if (kernel.stream_k_slot_bytes() > 0) absl::StrAppend(&text, ", stream-K");
  const std::vector<std::string> param_names = ParamNames(kernel);
  for (const Precondition& precondition : kernel.preconditions()) {
    absl::StrAppend(&text, ", requires ",
                    FormatExpr(precondition.condition(), dim_names, param_names));
  }
  for (const TensorMap& map : kernel.tensor_maps()) {
    // "TMA A[128, 64] swizzle 128": a tensor map of param A, its box.
    const std::string name = map.param() >= 0 && map.param() < kernel.params_size()
                                 ? kernel.params(map.param()).name()
                                 : absl::StrCat("#", map.param());
    absl::StrAppend(&text, ", TMA ", name, "[", absl::StrJoin(map.box(), ", "), "]");
    if (map.swizzle_bytes() > 0) absl::StrAppend(&text, " swizzle ", map.swizzle_bytes());
  }
  if (kernel.registers() > 0) {
    absl::StrAppend(&text, ", ", kernel.registers(), " registers");
  }
  if (kernel.spill_bytes() > 0) {
    absl::StrAppend(&text, ", ", kernel.spill_bytes(), " B spilled");
  }
  absl::StrAppend(&text, kernel.cubin().empty() ? ", PTX" : ", cubin",
                  kernel.cubin().empty() || kernel.ptx().empty() ? "" : "+PTX");
  return text;
}

}  // namespace tessera::runtime
