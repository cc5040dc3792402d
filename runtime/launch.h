//===- launch.h - Checked, typed kernel launches ----------------*- C++ -*-===//
//
// This file declares the launch arguments (TensorArg, ScalarArg), the pure
// checking and packing step PrepareLaunch (no CUDA calls, so it is tested
// without a GPU), and Launch, which packs and calls cuLaunchKernel. The
// expression evaluator (EvaluateExpr, FormatExpr) is in expr.h.
//
// The PTX parameter list of a kernel is, for each Param in order: a tensor
// gives one u64 pointer followed by one i64 per dynamic (-1) dimension of that
// tensor; a scalar gives one value of its dtype (f32 as float, f64 as double,
// i32 as int32_t, i64 as int64_t, i8 as int8_t, u8 as uint8_t). Dynamic
// dimensions are numbered across all tensors in that same order; Expr symbols
// and DimGroups refer to those numbers, Expr params to the params' numbers.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_LAUNCH_H_
#define TESSERA_RUNTIME_LAUNCH_H_

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/bundle.h"
#include "runtime/expr.h"
#include "runtime/kernel.h"
#include "runtime/kernel.pb.h"

namespace tessera::runtime {

/// Largest grid extent in x, per the CUDA programming guide (2^31 - 1).
constexpr int64_t kMaxGridX = 2147483647;
/// Largest grid extent in y and z, per the CUDA programming guide.
constexpr int64_t kMaxGridYZ = 65535;
// kMaxBlockThreads (1024, every architecture since sm_20) is in bundle.h,
// which validates kernel files with it.

/// A tensor argument: a device address, its element type and its shape.
struct TensorArg {
  CUdeviceptr ptr = 0;
  DType dtype = DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
};

/// A scalar argument. Integer dtypes take an int64_t value (range-checked
/// against the dtype); floating dtypes take a double or an int64_t.
struct ScalarArg {
  DType dtype = DTYPE_UNSPECIFIED;
  std::variant<int64_t, double> value = int64_t{0};

  static ScalarArg F32(float v) { return {DTYPE_F32, double{v}}; }
  static ScalarArg F64(double v) { return {DTYPE_F64, v}; }
  static ScalarArg I32(int32_t v) { return {DTYPE_I32, int64_t{v}}; }
  static ScalarArg I64(int64_t v) { return {DTYPE_I64, v}; }
};

/// One launch argument, matching one Param.
using KernelArg = std::variant<TensorArg, ScalarArg>;

/// A checked launch: grid, block and the packed PTX parameter list. Owns the
/// storage of every parameter slot and the void* array that cuLaunchKernel
/// reads. Move-only (the pointers refer into its own storage).
struct PackedLaunch {
  PackedLaunch() = default;
  PackedLaunch(PackedLaunch&&) = default;
  PackedLaunch& operator=(PackedLaunch&&) = default;
  PackedLaunch(const PackedLaunch&) = delete;
  PackedLaunch& operator=(const PackedLaunch&) = delete;

  /// Grid extents x, y, z (unused trailing entries are 1).
  std::array<int64_t, 3> grid = {1, 1, 1};
  int block_threads = 1;
  int64_t shared_memory_bytes = 0;
  /// True when a grid extent is 0 (a zero-sized problem, e.g. N = 0): the
  /// launch is valid and Launch skips it.
  bool empty = false;
  /// The dynamic dimensions' values, in symbol order.
  std::vector<int64_t> dynamic_dims;
  /// One 8-byte cell per PTX parameter; the value sits in its first
  /// `slot_sizes[i]` bytes.
  std::vector<uint64_t> slots;
  /// Size in bytes of each PTX parameter (4 or 8, 1 for i8).
  std::vector<int> slot_sizes;
  /// &slots[i] for each i, then &tensor_maps[j].cell for each j: the
  /// kernelParams array of cuLaunchKernel.
  std::vector<void*> kernel_params;

  /// A TMA tensor map parameter: what to encode, and the 128-byte cell
  /// cuTensorMapEncodeTiled writes (EncodeTensorMaps, called by Launch).
  struct TensorMapParam {
    alignas(64) uint64_t cell[16] = {};
    DType dtype = DTYPE_UNSPECIFIED;
    uint64_t address = 0;
    /// Innermost first, in the driver's types (cuTensorMapEncodeTiled).
    std::vector<cuuint64_t> dims, strides_bytes;
    std::vector<cuuint32_t> box;
    int swizzle_bytes = 0;
    /// The kernel parameter (tensor argument) it describes.
    int param = -1;
  };
  std::vector<TensorMapParam> tensor_maps;
  bool tensor_maps_encoded = false;
  /// The slot of a stream-K kernel's workspace pointer (set by Launch), or -1.
  int workspace_slot = -1;
  /// Per kernel parameter: the slot of its pointer (a tensor), or -1.
  std::vector<int> pointer_slots;
  /// Per kernel parameter: its alignment in bytes (a tensor), else 0.
  std::vector<int64_t> pointer_alignments;
};

/// Checks `args` against `kernel`'s params (count, kind, dtype, rank, static
/// dims, non-negative dims, dim groups, pointer alignment, scalar range),
/// then its preconditions (CheckPreconditions) and the divisibility the
/// compiler assumed, evaluates the grid and packs the PTX parameter list.
/// Makes no CUDA call. Every error starts with the kernel entry ("gemm: ")
/// and names the offending parameter or precondition.
absl::StatusOr<PackedLaunch> PrepareLaunch(const CompiledKernel& kernel,
                                           absl::Span<const KernelArg> args);

/// Prepares and launches `kernel` on `stream` (asynchronous; an empty launch
/// is skipped). Errors name the kernel entry and the failing call.
absl::Status Launch(const LoadedKernel& kernel,
                    absl::Span<const KernelArg> args,
                    CUstream stream = nullptr);

/// Encodes the tensor maps of a prepared launch with the driver (a host-side
/// call; no GPU work). Launch does it once per PackedLaunch.
absl::Status EncodeTensorMaps(const CudaDriver& driver, PackedLaunch& packed);

/// Points a prepared launch at other tensors of the same shapes, types and
/// strides (the next decode step's buffers): `pointers` holds one address
/// per tensor argument, in argument order, scalars skipped. Checks their
/// number and alignment (an error names the argument) and rewrites only
/// the pointer slots; tensor maps of a moved tensor are encoded again at
/// the next Launch. Makes no CUDA call.
absl::Status RebindPointers(PackedLaunch& packed, absl::Span<const CUdeviceptr> pointers);

/// Launches an already prepared launch (e.g. in a timing loop).
absl::Status Launch(const LoadedKernel& kernel, PackedLaunch& packed,
                    CUstream stream = nullptr);

/// The short name of a dtype: "f16", "bf16", "f32", "f64", "i32", "i64", "i8",
/// "u8", ...
std::string DTypeName(DType dtype);

/// The names of the dynamic dimensions: the DimGroup name where a dimension
/// is in a group, else "<param>.shape[<axis>]".
std::vector<std::string> DynamicDimNames(const CompiledKernel& kernel);

/// The kernel's signature, e.g.
/// "vector_add(A: f32[N] align 16, B: f32[N], alpha: f32) grid (ceil_div(N,
/// 256), 1, 1) block 256 smem 0 B target sm_90", then its schedule, its
/// preconditions ("requires N % 8 == 0"), tensor maps and registers.
std::string FormatSignature(const CompiledKernel& kernel);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_LAUNCH_H_
