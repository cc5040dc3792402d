//===- expr.cc - Grid and precondition expressions ------------------------===//
//
// This file implements EvaluateExpr, FormatExpr and CheckPreconditions: the
// integer expressions of grid extents and kernel preconditions, evaluated
// with overflow checks and printed as infix text for error messages.
//
//===----------------------------------------------------------------------===//

#include "runtime/expr.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "runtime/bundle.h"
#include "runtime/status_macros.h"

namespace tessera::runtime {
namespace {

/// What an expression is evaluated with, and the names its messages use.
struct ExprEnv {
  absl::Span<const int64_t> dims;
  absl::Span<const std::optional<int64_t>> params;
  absl::Span<const std::string> dim_names;
  absl::Span<const std::string> param_names;
};

/// Binding strength of `op` as FormatExpr prints it, C++'s order (higher
/// binds tighter); leaves and function-style ops bind tightest.
int Precedence(Expr::Op op) {
  switch (op) {
    case Expr::OP_OR:
      return 1;
    case Expr::OP_AND:
      return 2;
    case Expr::OP_EQ:
    case Expr::OP_NE:
      return 3;
    case Expr::OP_LT:
    case Expr::OP_LE:
      return 4;
    case Expr::OP_ADD:
    case Expr::OP_SUB:
      return 5;
    case Expr::OP_MUL:
    case Expr::OP_MOD:
    case Expr::OP_DIV:
    case Expr::OP_REM:
      return 6;
    default:
      return 7;
  }
}

/// The infix operator of `op` (with spaces), or nullptr for other ops.
const char* InfixText(Expr::Op op) {
  switch (op) {
    case Expr::OP_ADD:
      return " + ";
    case Expr::OP_SUB:
      return " - ";
    case Expr::OP_MUL:
      return " * ";
    case Expr::OP_MOD:
    case Expr::OP_REM:
      return " % ";
    case Expr::OP_DIV:
      return " / ";
    case Expr::OP_EQ:
      return " == ";
    case Expr::OP_NE:
      return " != ";
    case Expr::OP_LT:
      return " < ";
    case Expr::OP_LE:
      return " <= ";
    case Expr::OP_AND:
      return " && ";
    case Expr::OP_OR:
      return " || ";
    default:
      return nullptr;
  }
}

/// The function name `op` prints as, e.g. "ceil_div(a, b)", or nullptr.
const char* CallText(Expr::Op op) {
  switch (op) {
    case Expr::OP_FLOOR_DIV:
      return "floor_div";
    case Expr::OP_CEIL_DIV:
      return "ceil_div";
    case Expr::OP_MIN:
      return "min";
    case Expr::OP_MAX:
      return "max";
    default:
      return nullptr;
  }
}

/// Whether `op` is a comparison (its operands are never chained unbracketed).
bool IsComparison(Expr::Op op) {
  return op == Expr::OP_EQ || op == Expr::OP_NE || op == Expr::OP_LT || op == Expr::OP_LE;
}

/// The name of symbol `index` in messages: its dimension's name, or "d<k>".
std::string SymbolName(int64_t index, absl::Span<const std::string> names) {
  if (index >= 0 && index < static_cast<int64_t>(names.size())) return names[index];
  return absl::StrCat("d", index);
}

/// The name of param `index` in messages: the param's name, or "p<k>".
std::string ParamName(int64_t index, absl::Span<const std::string> names) {
  if (index >= 0 && index < static_cast<int64_t>(names.size())) return names[index];
  return absl::StrCat("p", index);
}

/// Appends the text of `expr` to `out` (defined below).
void AppendExpr(std::string& out, const Expr& expr, const ExprEnv& env);

/// Appends operand `child` of `parent`, bracketed where C++ would read it
/// otherwise (a looser operator; the same strength on the right, a - (b - c))
/// and, for the reader, a comparison under a comparison and && under || (as
/// -Wparentheses asks).
void AppendOperand(std::string& out, const Expr& child, Expr::Op parent, bool right,
                   const ExprEnv& env) {
  const int inner = Precedence(child.op()), outer = Precedence(parent);
  const bool bracket = inner < outer || (inner == outer && right) ||
                       (IsComparison(parent) && IsComparison(child.op())) ||
                       (parent == Expr::OP_OR && child.op() == Expr::OP_AND);
  if (bracket) out.push_back('(');
  AppendExpr(out, child, env);
  if (bracket) out.push_back(')');
}

/// Appends the text of `expr` (FormatExpr); only the names of `env` are read.
void AppendExpr(std::string& out, const Expr& expr, const ExprEnv& env) {
  switch (expr.op()) {
    case Expr::OP_CONSTANT:
      absl::StrAppend(&out, expr.value());
      return;
    case Expr::OP_SYMBOL:
      absl::StrAppend(&out, SymbolName(expr.value(), env.dim_names));
      return;
    case Expr::OP_PARAM:
      absl::StrAppend(&out, ParamName(expr.value(), env.param_names));
      return;
    default:
      break;
  }
  if (const char* infix = InfixText(expr.op())) {
    AppendOperand(out, expr.lhs(), expr.op(), /*right=*/false, env);
    absl::StrAppend(&out, infix);
    AppendOperand(out, expr.rhs(), expr.op(), /*right=*/true, env);
  } else if (const char* call = CallText(expr.op())) {
    absl::StrAppend(&out, call, "(");
    AppendExpr(out, expr.lhs(), env);
    absl::StrAppend(&out, ", ");
    AppendExpr(out, expr.rhs(), env);
    absl::StrAppend(&out, ")");
  } else {
    absl::StrAppend(&out, "<op ", static_cast<int>(expr.op()), ">");
  }
}

/// The text of `expr` with the names of `env`.
std::string Format(const Expr& expr, const ExprEnv& env) {
  std::string out;
  AppendExpr(out, expr, env);
  return out;
}

/// Floor division, ceiling division, non-negative modulo, or C++'s
/// truncating division or remainder of a by b != 0, with (INT64_MIN, -1)
/// excluded by the caller.
int64_t Divide(Expr::Op op, int64_t a, int64_t b) {
  const int64_t quotient = a / b, remainder = a % b;
  if (op == Expr::OP_DIV) return quotient;
  if (op == Expr::OP_REM) return remainder;
  if (op == Expr::OP_MOD) {
    // remainder - b, not remainder + |b|: -b overflows for INT64_MIN.
    if (remainder >= 0) return remainder;
    return b < 0 ? remainder - b : remainder + b;
  }
  // C++ truncates toward zero; adjust by one when the remainder is not zero
  // and the exact quotient lies on the other side.
  const bool negative = (remainder < 0) != (b < 0);
  if (remainder != 0 && op == Expr::OP_FLOOR_DIV && negative) return quotient - 1;
  if (remainder != 0 && op == Expr::OP_CEIL_DIV && !negative) return quotient + 1;
  return quotient;
}

/// Applies the binary operator of `expr` to its evaluated operands a and b.
absl::StatusOr<int64_t> ApplyBinary(const Expr& expr, int64_t a, int64_t b, const ExprEnv& env) {
  int64_t result = 0;
  bool overflow = false;
  switch (expr.op()) {
    case Expr::OP_ADD:
      overflow = __builtin_add_overflow(a, b, &result);
      break;
    case Expr::OP_SUB:
      overflow = __builtin_sub_overflow(a, b, &result);
      break;
    case Expr::OP_MUL:
      overflow = __builtin_mul_overflow(a, b, &result);
      break;
    case Expr::OP_FLOOR_DIV:
    case Expr::OP_CEIL_DIV:
    case Expr::OP_MOD:
    case Expr::OP_DIV:
    case Expr::OP_REM:
      if (b == 0) {
        return absl::InvalidArgumentError(absl::StrCat("division by zero in ", Format(expr, env)));
      }
      // INT64_MIN / -1 overflows; its remainders are 0.
      overflow = a == std::numeric_limits<int64_t>::min() && b == -1;
      if (overflow && (expr.op() == Expr::OP_MOD || expr.op() == Expr::OP_REM)) {
        overflow = false;
        result = 0;
      } else if (!overflow) {
        result = Divide(expr.op(), a, b);
      }
      break;
    case Expr::OP_EQ:
      return int64_t{a == b};
    case Expr::OP_NE:
      return int64_t{a != b};
    case Expr::OP_LT:
      return int64_t{a < b};
    case Expr::OP_LE:
      return int64_t{a <= b};
    case Expr::OP_MIN:
      return std::min(a, b);
    case Expr::OP_MAX:
      return std::max(a, b);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown expression op ", static_cast<int>(expr.op())));
  }
  if (!overflow) return result;
  return absl::OutOfRangeError(
      absl::StrCat("integer overflow in ", Format(expr, env), " with operands ", a, " and ", b));
}

/// EvaluateExpr over `env`; messages use its names.
absl::StatusOr<int64_t> Evaluate(const Expr& expr, const ExprEnv& env) {
  switch (expr.op()) {
    case Expr::OP_CONSTANT:
      return expr.value();
    case Expr::OP_SYMBOL:
      if (expr.value() < 0 || expr.value() >= static_cast<int64_t>(env.dims.size())) {
        return absl::InvalidArgumentError(absl::StrCat("symbol d", expr.value(),
                                                       " out of range: the kernel has ",
                                                       env.dims.size(), " dynamic dimensions"));
      }
      return env.dims[expr.value()];
    case Expr::OP_PARAM:
      if (expr.value() < 0 || expr.value() >= static_cast<int64_t>(env.params.size()) ||
          !env.params[expr.value()].has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("param ", ParamName(expr.value(), env.param_names),
                         " has no integer value here (an integer scalar param: a "
                         "precondition's value or a grid's size argument)"));
      }
      return *env.params[expr.value()];
    case Expr::OP_AND:
    case Expr::OP_OR: {
      TESSERA_ASSIGN_OR_RETURN(const int64_t a, Evaluate(expr.lhs(), env));
      // The left operand decides: false for &&, true for ||.
      if (expr.op() == Expr::OP_AND && a == 0) return int64_t{0};
      if (expr.op() == Expr::OP_OR && a != 0) return int64_t{1};
      TESSERA_ASSIGN_OR_RETURN(const int64_t b, Evaluate(expr.rhs(), env));
      return int64_t{b != 0};
    }
    default:
      if (InfixText(expr.op()) == nullptr && CallText(expr.op()) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown expression op ", static_cast<int>(expr.op())));
      }
      break;
  }
  TESSERA_ASSIGN_OR_RETURN(const int64_t a, Evaluate(expr.lhs(), env));
  TESSERA_ASSIGN_OR_RETURN(const int64_t b, Evaluate(expr.rhs(), env));
  return ApplyBinary(expr, a, b, env);
}

/// Appends each symbol and param under `expr` to `mentions` (as {is_param,
/// index}) unless already there, in the order FormatExpr prints them.
void CollectMentions(const Expr& expr, std::vector<std::pair<bool, int64_t>>& mentions) {
  if (expr.op() == Expr::OP_SYMBOL || expr.op() == Expr::OP_PARAM) {
    const std::pair<bool, int64_t> mention = {expr.op() == Expr::OP_PARAM, expr.value()};
    if (std::find(mentions.begin(), mentions.end(), mention) == mentions.end()) {
      mentions.push_back(mention);
    }
    return;
  }
  if (expr.has_lhs()) CollectMentions(expr.lhs(), mentions);
  if (expr.has_rhs()) CollectMentions(expr.rhs(), mentions);
}

/// "K = 1000, Hkv = 5": the values of the symbols and params `expr` reads.
std::string FormatValues(const Expr& expr, const ExprEnv& env) {
  std::vector<std::pair<bool, int64_t>> mentions;
  CollectMentions(expr, mentions);
  std::vector<std::string> values;
  for (const auto& [is_param, index] : mentions) {
    std::string value = "?";
    if (!is_param && index >= 0 && index < static_cast<int64_t>(env.dims.size())) {
      value = absl::StrCat(env.dims[index]);
    } else if (is_param && index >= 0 && index < static_cast<int64_t>(env.params.size()) &&
               env.params[index].has_value()) {
      value = absl::StrCat(*env.params[index]);
    }
    values.push_back(absl::StrCat(
        is_param ? ParamName(index, env.param_names) : SymbolName(index, env.dim_names), " = ",
        value));
  }
  return absl::StrJoin(values, ", ");
}

/// Whether `expr` nests at most `levels` deep (the walk stops there, so a
/// damaged kernel's deep expression cannot exhaust the stack).
bool WithinDepth(const Expr& expr, int levels) {
  if (levels <= 0) return false;
  return (!expr.has_lhs() || WithinDepth(expr.lhs(), levels - 1)) &&
         (!expr.has_rhs() || WithinDepth(expr.rhs(), levels - 1));
}

absl::Status CheckDepth(const Expr& expr) {
  if (WithinDepth(expr, kMaxExprDepth + 1)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("expression nested deeper than ", kMaxExprDepth, " levels"));
}

}  // namespace

std::vector<int64_t> ExprParams(const Expr& expr) {
  std::vector<std::pair<bool, int64_t>> mentions;
  CollectMentions(expr, mentions);
  std::vector<int64_t> params;
  for (const auto& [is_param, index] : mentions)
    if (is_param) params.push_back(index);
  return params;
}

absl::StatusOr<int64_t> EvaluateExpr(const Expr& expr, absl::Span<const int64_t> dynamic_dims,
                                     absl::Span<const std::optional<int64_t>> params) {
  TESSERA_RETURN_IF_ERROR(CheckDepth(expr));
  return Evaluate(expr, ExprEnv{dynamic_dims, params, {}, {}});
}

std::string FormatExpr(const Expr& expr, absl::Span<const std::string> symbol_names,
                       absl::Span<const std::string> param_names) {
  return Format(expr, ExprEnv{{}, {}, symbol_names, param_names});
}

absl::Status CheckPreconditions(const CompiledKernel& kernel,
                                absl::Span<const std::string> dim_names,
                                absl::Span<const int64_t> dynamic_dims,
                                absl::Span<const std::optional<int64_t>> params) {
  std::vector<std::string> param_names;
  for (const Param& param : kernel.params()) param_names.push_back(param.name());
  const ExprEnv env{dynamic_dims, params, dim_names, param_names};
  for (const Precondition& precondition : kernel.preconditions()) {
    const Expr& condition = precondition.condition();
    if (absl::Status deep = CheckDepth(condition); !deep.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("precondition declared at ", precondition.where(), ": ", deep.message()));
    }
    absl::StatusOr<int64_t> holds = Evaluate(condition, env);
    if (holds.ok() && *holds != 0) continue;
    std::string text = absl::StrCat("precondition ", Format(condition, env));
    if (!precondition.where().empty()) {
      absl::StrAppend(&text, " (declared at ", precondition.where(), ")");
    }
    const std::string values = FormatValues(condition, env);
    if (!holds.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(text, " cannot be evaluated",
                                                     values.empty() ? "" : " with ", values, ": ",
                                                     holds.status().message()));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(text, " does not hold", values.empty() ? "" : ": ", values));
  }
  return absl::OkStatus();
}

}  // namespace tessera::runtime
