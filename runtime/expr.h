//===- expr.h - Grid and precondition expressions ---------------*- C++ -*-===//
//
// This file declares the evaluator and the printer of tessera.runtime.Expr
// (grid extents and kernel preconditions), and CheckPreconditions, which
// PrepareLaunch calls before it evaluates the grid. No CUDA calls.
//
// An expression reads the dynamic dimensions of the tensor params (OP_SYMBOL,
// numbered across all tensors in param order) and the values of integer
// scalar params (OP_PARAM, numbered as the kernel's params, so tensors and
// float scalars take numbers too but have no value): a precondition's, or a
// grid extent's size arguments.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_EXPR_H_
#define TESSERA_RUNTIME_EXPR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/kernel.pb.h"

namespace tessera::runtime {

/// Evaluates `expr` with symbol k bound to `dynamic_dims[k]` and param p bound
/// to `params[p]` (std::nullopt where param p has no integer value).
///
/// Errors: InvalidArgument on an unknown op, a symbol out of range, a param
/// without a value, and division or modulo by zero; OutOfRange on overflow of
/// +, - or *. Floor and ceiling division round toward -inf and +inf; modulo
/// is non-negative. Comparisons are signed and give 1 or 0; && and || give 1
/// or 0, take non-zero as true and skip their right operand when the left
/// one decides (as in C++, so `Hkv > 0 && H % Hkv == 0` is 0, not an error,
/// for Hkv = 0).
absl::StatusOr<int64_t> EvaluateExpr(const Expr& expr, absl::Span<const int64_t> dynamic_dims,
                                     absl::Span<const std::optional<int64_t>> params = {});

/// The params (integer scalar parameter numbers) `expr` reads, once each,
/// in the order FormatExpr prints them: a grid extent's size arguments.
std::vector<int64_t> ExprParams(const Expr& expr);

/// An expression as infix text with C++'s precedence and only the parentheses
/// it needs, e.g. "ceil_div(N, 256)", "K % 128 == 0", "min(M, 64) * 2",
/// "H % Hkv == 0 && Hkv <= H". Symbol k prints as `symbol_names[k]` when
/// given, else "d<k>"; param p as `param_names[p]` when given, else "p<p>".
/// Modulo prints as "%" (the runtime's is non-negative).
std::string FormatExpr(const Expr& expr, absl::Span<const std::string> symbol_names = {},
                       absl::Span<const std::string> param_names = {});

/// Evaluates `kernel`'s preconditions in order, with symbol k bound to
/// `dynamic_dims[k]` (named `dim_names[k]`) and param p to `params[p]`.
/// The first that evaluates to 0 gives InvalidArgument with one line, e.g.
/// "precondition K % 128 == 0 (declared at gemm.cc:42) does not hold:
/// K = 1000", naming each dimension and param the condition mentions once,
/// in the order it mentions them. One that cannot be evaluated (division by
/// zero, overflow) gives InvalidArgument naming it, the values and the error.
absl::Status CheckPreconditions(const CompiledKernel& kernel,
                                absl::Span<const std::string> dim_names,
                                absl::Span<const int64_t> dynamic_dims,
                                absl::Span<const std::optional<int64_t>> params);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_EXPR_H_
