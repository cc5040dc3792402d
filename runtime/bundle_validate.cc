//===- bundle_validate.cc - Checks of kernels read from files -------------===//
//
// This file implements ValidateKernel and ValidateBundle: every field of a
// CompiledKernel is checked before the runtime uses it, so that a damaged or
// hand-made file is refused with the field's name instead of launching with
// a negative block size or evaluating a malformed grid expression or
// precondition.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "runtime/bundle.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {
namespace {

/// Longest entry name accepted (PTX identifiers have no limit; ours are a
/// kernel name and its knobs).
constexpr size_t kMaxEntryBytes = 1024;
/// Largest stream-K slot (one block's partial accumulators) accepted.
constexpr int64_t kMaxStreamKSlotBytes = int64_t(1) << 30;

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(std::string(what));
}

/// A PTX identifier as the compiler writes entries: a letter or '_'
/// followed by letters, digits, '_' and '$' (PTX ISA §4.4), no path
/// separators or dots, so it is also a safe file name.
bool IsEntryName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxEntryBytes) return false;
  if (!absl::ascii_isalpha(name[0]) && name[0] != '_') return false;
  for (char c : name)
    if (!absl::ascii_isalnum(c) && c != '_' && c != '$') return false;
  return true;
}

/// sm_XY or sm_XYa (the compiler's TargetAttr form), e.g. sm_80, sm_90a.
bool IsTargetName(absl::string_view name) {
  if (name.size() < 5 || name.substr(0, 3) != "sm_") return false;
  absl::string_view digits = name.substr(3);
  if (digits.back() == 'a') digits.remove_suffix(1);
  if (digits.size() < 2 || digits.size() > 4) return false;
  for (char c : digits)
    if (!absl::ascii_isdigit(c)) return false;
  return true;
}

/// What an expression may read: `dynamic_dims` symbols and the integer
/// scalars among `params` (a grid extent's size arguments, a precondition's
/// values); `precondition`: the operators only a precondition may use.
struct ExprScope {
  int64_t dynamic_dims = 0;
  const google::protobuf::RepeatedPtrField<Param>* params = nullptr;
  bool precondition = false;
};

/// The operators only a precondition may use (a grid extent is never one).
bool IsPreconditionOnly(Expr::Op op) {
  switch (op) {
    case Expr::OP_SUB:
    case Expr::OP_EQ:
    case Expr::OP_NE:
    case Expr::OP_LT:
    case Expr::OP_LE:
    case Expr::OP_AND:
    case Expr::OP_OR:
    case Expr::OP_MIN:
    case Expr::OP_MAX:
    case Expr::OP_DIV:
    case Expr::OP_REM:
      return true;
    default:
      return false;
  }
}

/// A well-formed expression over `scope`, at most kMaxExprDepth deep.
absl::Status ValidateExpr(const Expr& expr, const ExprScope& scope, int depth) {
  if (depth > kMaxExprDepth)
    return Invalid(absl::StrCat("nested deeper than ", kMaxExprDepth, " levels"));
  if (!scope.precondition && IsPreconditionOnly(expr.op()))
    return Invalid(absl::StrCat("uses operator ", Expr::Op_Name(expr.op()),
                                ", which only a precondition may use"));
  const bool leaf =
      expr.op() == Expr::OP_CONSTANT || expr.op() == Expr::OP_SYMBOL || expr.op() == Expr::OP_PARAM;
  switch (expr.op()) {
    case Expr::OP_CONSTANT:
      break;
    case Expr::OP_SYMBOL:
      if (expr.value() < 0 || expr.value() >= scope.dynamic_dims) {
        return Invalid(absl::StrCat("names dynamic dimension ", expr.value(),
                                    ", but the params have ", scope.dynamic_dims));
      }
      break;
    case Expr::OP_PARAM: {
      const int64_t p = expr.value();
      if (p < 0 || p >= scope.params->size())
        return Invalid(absl::StrCat("names param ", p, ", but the kernel has ",
                                    scope.params->size(), " params"));
      const Param& param = scope.params->Get(static_cast<int>(p));
      if (!IsIntegerScalarParam(param))
        return Invalid(absl::StrCat("names param #", p, " '", param.name(),
                                    "', which is not an integer scalar (i8, i32, i64 or u8)"));
      break;
    }
    case Expr::OP_ADD:
    case Expr::OP_SUB:
    case Expr::OP_MUL:
    case Expr::OP_FLOOR_DIV:
    case Expr::OP_CEIL_DIV:
    case Expr::OP_MOD:
    case Expr::OP_EQ:
    case Expr::OP_NE:
    case Expr::OP_LT:
    case Expr::OP_LE:
    case Expr::OP_AND:
    case Expr::OP_OR:
    case Expr::OP_MIN:
    case Expr::OP_MAX:
    case Expr::OP_DIV:
    case Expr::OP_REM:
      if (!expr.has_lhs() || !expr.has_rhs())
        return Invalid(absl::StrCat("operator ", expr.op(), " lacks an operand"));
      TESSERA_RETURN_IF_ERROR(ValidateExpr(expr.lhs(), scope, depth + 1));
      TESSERA_RETURN_IF_ERROR(ValidateExpr(expr.rhs(), scope, depth + 1));
      break;
    default:
      return Invalid(absl::StrCat("has unknown operator ", expr.op()));
  }
  if (leaf && (expr.has_lhs() || expr.has_rhs()))
    return Invalid(expr.op() == Expr::OP_PARAM ? "has operands under a param"
                                               : "has operands under a constant or symbol");
  return absl::OkStatus();
}

/// Checks precondition `i`: a well-formed condition over the dynamic
/// dimensions and the integer scalar params.
absl::Status ValidatePrecondition(const CompiledKernel& kernel, int64_t dynamic_dims, int i) {
  const Precondition& precondition = kernel.preconditions(i);
  std::string what = absl::StrCat("precondition #", i);
  if (!precondition.where().empty()) absl::StrAppend(&what, " (", precondition.where(), ")");
  if (!precondition.has_condition()) return Invalid(absl::StrCat(what, " has no condition"));
  absl::Status valid =
      ValidateExpr(precondition.condition(), ExprScope{dynamic_dims, &kernel.params(), true}, 1);
  if (!valid.ok()) return Invalid(absl::StrCat(what, " ", valid.message()));
  return absl::OkStatus();
}

/// Checks `param` (number `i`) and counts its dynamic dimensions.
absl::Status ValidateParam(const Param& param, int i, int64_t& dynamic_dims) {
  const std::string what = absl::StrCat("param #", i, " '", param.name(), "'");
  if (!DType_IsValid(param.dtype()) || param.dtype() == DTYPE_UNSPECIFIED)
    return Invalid(absl::StrCat(what, " has no valid dtype (", param.dtype(), ")"));
  const int64_t alignment = param.alignment();
  if (alignment < 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) {
    return Invalid(absl::StrCat(what, ": alignment must be 0 or a power of two up to 4096, got ",
                                alignment));
  }
  switch (param.kind()) {
    case Param::KIND_TENSOR:
      if (param.shape_size() == 0) return Invalid(absl::StrCat(what, " is a tensor of rank 0"));
      for (int64_t dim : param.shape()) {
        if (dim == -1) {
          ++dynamic_dims;
        } else if (dim <= 0) {
          return Invalid(absl::StrCat(what, ": dimensions must be positive or -1 (dynamic), got ",
                                      dim));
        }
      }
      return absl::OkStatus();
    case Param::KIND_SCALAR:
      if (param.shape_size() != 0) return Invalid(absl::StrCat(what, " is a scalar with a shape"));
      return absl::OkStatus();
    default:
      return Invalid(absl::StrCat(what, " has no valid kind (", param.kind(), ")"));
  }
}

/// Checks tensor map `i` against the params.
absl::Status ValidateTensorMap(const CompiledKernel& kernel, const TensorMap& map, int i) {
  const std::string what = absl::StrCat("tensor map #", i);
  if (map.param() < 0 || map.param() >= kernel.params_size() ||
      kernel.params(map.param()).kind() != Param::KIND_TENSOR) {
    return Invalid(absl::StrCat(what, " describes param ", map.param(), ", which is not a tensor"));
  }
  const Param& param = kernel.params(map.param());
  if (map.box_size() != param.shape_size() || map.box_size() > kMaxTensorMapRank) {
    return Invalid(absl::StrCat(what, " has a box of rank ", map.box_size(), " for a tensor of rank ",
                                param.shape_size(), " (at most ", kMaxTensorMapRank, ")"));
  }
  for (int64_t extent : map.box()) {
    if (extent < 1 || extent > kMaxTensorMapBox)
      return Invalid(absl::StrCat(what, ": box extents must be in [1, ", kMaxTensorMapBox,
                                  "], got ", extent));
  }
  const int swizzle = map.swizzle_bytes();
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return Invalid(absl::StrCat(what, ": swizzle must be 0, 32, 64 or 128 bytes, got ", swizzle));
  return absl::OkStatus();
}

/// Checks the fields of `kernel`; messages do not name the kernel.
absl::Status ValidateFields(const CompiledKernel& kernel) {
  if (!IsTargetName(kernel.target()))
    return Invalid(absl::StrCat("target '", kernel.target(), "' is not sm_XY or sm_XYa"));
  if (kernel.ptx().empty() && kernel.cubin().empty()) return Invalid("has neither PTX nor a cubin");
  int64_t dynamic_dims = 0;
  for (int i = 0; i < kernel.params_size(); ++i)
    TESSERA_RETURN_IF_ERROR(ValidateParam(kernel.params(i), i, dynamic_dims));
  if (kernel.grid_size() < 1 || kernel.grid_size() > 3)
    return Invalid(absl::StrCat("grid has ", kernel.grid_size(), " extents; 1 to 3 expected"));
  for (int i = 0; i < kernel.grid_size(); ++i) {
    const Expr& extent = kernel.grid(i);
    absl::Status valid = ValidateExpr(extent, ExprScope{dynamic_dims, &kernel.params()}, 1);
    if (valid.ok() && extent.op() == Expr::OP_CONSTANT && extent.value() < 1)
      valid = Invalid(absl::StrCat("is the constant ", extent.value(), "; extents are positive"));
    if (!valid.ok())
      return Invalid(absl::StrCat("grid extent ", i, " ", valid.message()));
  }
  if (kernel.block_threads() < 1 || kernel.block_threads() > kMaxBlockThreads) {
    return Invalid(absl::StrCat("block_threads must be in [1, ", kMaxBlockThreads, "], got ",
                                kernel.block_threads()));
  }
  if (kernel.shared_memory_bytes() < 0 || kernel.shared_memory_bytes() > kMaxSharedMemoryBytes) {
    return Invalid(absl::StrCat("shared_memory_bytes must be in [0, ", kMaxSharedMemoryBytes,
                                "], got ", kernel.shared_memory_bytes()));
  }
  for (const DimGroup& group : kernel.dim_groups()) {
    for (int32_t dim : group.dims()) {
      if (dim < 0 || dim >= dynamic_dims)
        return Invalid(absl::StrCat("dim group '", group.name(), "' names dynamic dimension ", dim,
                                    ", but the params have ", dynamic_dims));
    }
  }
  if (kernel.registers() < 0 || kernel.registers() > kMaxRegisters)
    return Invalid(absl::StrCat("registers must be in [0, ", kMaxRegisters, "], got ",
                                kernel.registers()));
  if (kernel.spill_bytes() < 0 || kernel.compile_micros() < 0)
    return Invalid("spill_bytes and compile_micros must be non-negative");
  if (kernel.dim_divisibility_size() != 0 && kernel.dim_divisibility_size() != dynamic_dims) {
    return Invalid(absl::StrCat("dim_divisibility has ", kernel.dim_divisibility_size(),
                                " entries for ", dynamic_dims, " dynamic dimensions"));
  }
  for (int64_t divisor : kernel.dim_divisibility()) {
    if (divisor < 1 || divisor > (int64_t(1) << 31))
      return Invalid(absl::StrCat("dim_divisibility entries must be in [1, 2^31], got ", divisor));
  }
  for (int i = 0; i < kernel.preconditions_size(); ++i)
    TESSERA_RETURN_IF_ERROR(ValidatePrecondition(kernel, dynamic_dims, i));
  for (int i = 0; i < kernel.tensor_maps_size(); ++i)
    TESSERA_RETURN_IF_ERROR(ValidateTensorMap(kernel, kernel.tensor_maps(i), i));
  if (kernel.stream_k_slot_bytes() < 0 || kernel.stream_k_slot_bytes() > kMaxStreamKSlotBytes) {
    return Invalid(absl::StrCat("stream_k_slot_bytes must be in [0, 2^30], got ",
                                kernel.stream_k_slot_bytes()));
  }
  if (kernel.stream_k_slot_bytes() > 0 && !kernel.persistent())
    return Invalid("stream_k_slot_bytes is set on a kernel that is not persistent");
  if (kernel.cluster_x() < 0 || kernel.cluster_x() > kMaxClusterBlocks)
    return Invalid(absl::StrCat("cluster_x must be in [0, ", kMaxClusterBlocks, "], got ",
                                kernel.cluster_x()));
  if (kernel.cluster_y() < 0 || kernel.cluster_y() > kMaxClusterBlocks)
    return Invalid(absl::StrCat("cluster_y must be in [0, ", kMaxClusterBlocks, "], got ",
                                kernel.cluster_y()));
  if (std::max(kernel.cluster_x(), 1) * std::max(kernel.cluster_y(), 1) > kMaxClusterBlocks)
    return Invalid(absl::StrCat("a cluster of ", kernel.cluster_x(), " x ", kernel.cluster_y(),
                                " blocks is over ", kMaxClusterBlocks, " blocks"));
  if (kernel.persistent() && kernel.cluster_y() > 1)
    return Invalid(absl::StrCat("a persistent kernel's clusters run along x only, got cluster_y ",
                                kernel.cluster_y()));
  return absl::OkStatus();
}

}  // namespace

bool IsIntegerScalarParam(const Param& param) {
  if (param.kind() != Param::KIND_SCALAR) return false;
  switch (param.dtype()) {
    case DTYPE_I8:
    case DTYPE_I32:
    case DTYPE_I64:
    case DTYPE_U8:
      return true;
    default:
      return false;
  }
}

absl::Status ValidateKernel(const CompiledKernel& kernel) {
  if (!IsEntryName(kernel.entry())) {
    return Invalid(absl::StrCat("kernel entry '", kernel.entry().substr(0, 80),
                                "' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*)"));
  }
  absl::Status valid = ValidateFields(kernel);
  if (valid.ok()) return valid;
  return absl::Status(valid.code(),
                      absl::StrCat("kernel '", kernel.entry(), "': ", valid.message()));
}

absl::Status ValidateBundle(const KernelBundle& bundle) {
  // One kernel may be built for several targets (a loader picks the one
  // for its device); each (entry, target) pair appears once.
  std::set<std::pair<std::string, std::string>> entries;
  for (const CompiledKernel& kernel : bundle.kernels()) {
    TESSERA_RETURN_IF_ERROR(ValidateKernel(kernel));
    if (!entries.insert({kernel.entry(), kernel.target()}).second)
      return Invalid(absl::StrCat("kernel '", kernel.entry(), "' for ", kernel.target(),
                                  " appears twice"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::runtime
