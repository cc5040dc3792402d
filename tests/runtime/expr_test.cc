//===- expr_test.cc - Tests of grid expression evaluation -----------------===//
//
// This file tests EvaluateExpr and FormatExpr without a GPU: grid operators,
// the precondition operators (comparisons, logic, min/max, params) and the
// infix printing that error messages use.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/launch.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using test_kernels::Binary;
using test_kernels::Constant;
using test_kernels::ParamRef;
using test_kernels::Symbol;
using ::testing::HasSubstr;

/// Evaluates `op(a, b)` over constants, expecting success.
int64_t Eval(Expr::Op op, int64_t a, int64_t b) {
  absl::StatusOr<int64_t> value =
      EvaluateExpr(Binary(op, Constant(a), Constant(b)), {});
  EXPECT_TRUE(value.ok()) << value.status();
  return value.value_or(-12345);
}

TEST(EvaluateExpr, ReturnsConstantsAndSymbols) {
  const std::vector<int64_t> dims = {7, 1000};
  EXPECT_EQ(*EvaluateExpr(Constant(42), dims), 42);
  EXPECT_EQ(*EvaluateExpr(Symbol(1), dims), 1000);
}

TEST(EvaluateExpr, CeilDivRoundsUp) {
  EXPECT_EQ(Eval(Expr::OP_CEIL_DIV, 1000, 256), 4);
  EXPECT_EQ(Eval(Expr::OP_CEIL_DIV, 1024, 256), 4);
  EXPECT_EQ(Eval(Expr::OP_CEIL_DIV, 1025, 256), 5);
  EXPECT_EQ(Eval(Expr::OP_CEIL_DIV, 0, 256), 0);
  EXPECT_EQ(Eval(Expr::OP_CEIL_DIV, -7, 2), -3);
}

TEST(EvaluateExpr, FloorDivRoundsDown) {
  EXPECT_EQ(Eval(Expr::OP_FLOOR_DIV, 1000, 256), 3);
  EXPECT_EQ(Eval(Expr::OP_FLOOR_DIV, -7, 2), -4);
  EXPECT_EQ(Eval(Expr::OP_FLOOR_DIV, 7, -2), -4);
  EXPECT_EQ(Eval(Expr::OP_FLOOR_DIV, -8, 2), -4);
}

TEST(EvaluateExpr, ModIsNonNegative) {
  EXPECT_EQ(Eval(Expr::OP_MOD, 1000, 256), 232);
  EXPECT_EQ(Eval(Expr::OP_MOD, -1, 256), 255);
  EXPECT_EQ(Eval(Expr::OP_MOD, 7, -3), 1);
}

TEST(EvaluateExpr, ModAtTheInt64Extremes) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Eval(Expr::OP_MOD, -1, kMin), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Eval(Expr::OP_MOD, kMin, -1), 0);
  EXPECT_EQ(Eval(Expr::OP_REM, kMin, -1), 0);
}

TEST(EvaluateExpr, RefusesExpressionsDeeperThanTheBundleLimit) {
  Expr deep = Constant(1);
  for (int i = 0; i < 100; ++i) deep = Binary(Expr::OP_ADD, deep, Constant(1));
  absl::StatusOr<int64_t> value = EvaluateExpr(deep, {});
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(value.status().message(), HasSubstr("nested deeper than 32 levels"));
  Expr shallow = Constant(1);
  for (int i = 0; i < 20; ++i) shallow = Binary(Expr::OP_ADD, shallow, Constant(1));
  EXPECT_EQ(*EvaluateExpr(shallow, {}), 21);
}

TEST(EvaluateExpr, DivAndRemTruncateAsCpp) {
  EXPECT_EQ(Eval(Expr::OP_DIV, 7, 2), 3);
  EXPECT_EQ(Eval(Expr::OP_DIV, -7, 2), -3);
  EXPECT_EQ(Eval(Expr::OP_DIV, 7, -2), -3);
  EXPECT_EQ(Eval(Expr::OP_REM, -7, 2), -1);
  EXPECT_EQ(Eval(Expr::OP_REM, 7, -2), 1);
  EXPECT_EQ(FormatExpr(Binary(Expr::OP_REM, Symbol(0), Constant(4)), std::vector<std::string>{"n"}),
            "n % 4");
  EXPECT_EQ(FormatExpr(Binary(Expr::OP_DIV, Symbol(0), Constant(2)), std::vector<std::string>{"n"}),
            "n / 2");
  EXPECT_EQ(
      EvaluateExpr(
          Binary(Expr::OP_DIV, Constant(std::numeric_limits<int64_t>::min()), Constant(-1)), {})
          .status()
          .code(),
      absl::StatusCode::kOutOfRange);
}

TEST(EvaluateExpr, NestsAddAndMulOverSymbols) {
  // (ceil_div(d0, 128) * ceil_div(d1, 64)) + 1 with d0 = 1000, d1 = 100.
  const Expr expr = Binary(
      Expr::OP_ADD,
      Binary(Expr::OP_MUL,
             Binary(Expr::OP_CEIL_DIV, Symbol(0), Constant(128)),
             Binary(Expr::OP_CEIL_DIV, Symbol(1), Constant(64))),
      Constant(1));
  EXPECT_EQ(*EvaluateExpr(expr, std::vector<int64_t>{1000, 100}), 8 * 2 + 1);
  EXPECT_EQ(FormatExpr(expr, std::vector<std::string>{"M", "N"}),
            "ceil_div(M, 128) * ceil_div(N, 64) + 1");
  EXPECT_EQ(FormatExpr(Symbol(3)), "d3");
}

TEST(EvaluateExpr, RejectsDivisionByZero) {
  for (Expr::Op op : {Expr::OP_CEIL_DIV, Expr::OP_FLOOR_DIV, Expr::OP_MOD}) {
    absl::StatusOr<int64_t> value =
        EvaluateExpr(Binary(op, Symbol(0), Symbol(1)), std::vector<int64_t>{5, 0});
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(value.status().message(), HasSubstr("division by zero"));
  }
}

TEST(EvaluateExpr, RejectsSymbolOutOfRange) {
  absl::StatusOr<int64_t> value = EvaluateExpr(Symbol(2), std::vector<int64_t>{1});
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(value.status().message(), HasSubstr("d2"));
}

TEST(EvaluateExpr, RejectsOverflowAndUnsetOps) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(EvaluateExpr(Binary(Expr::OP_MUL, Constant(kMax), Constant(2)), {})
                .status()
                .code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(EvaluateExpr(Binary(Expr::OP_ADD, Constant(kMax), Constant(1)), {})
                .status()
                .code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(EvaluateExpr(Expr(), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EvaluateExpr, SubtractsAndRejectsOverflow) {
  EXPECT_EQ(Eval(Expr::OP_SUB, 5, 7), -2);
  EXPECT_EQ(Eval(Expr::OP_SUB, -5, -7), 2);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  absl::StatusOr<int64_t> value =
      EvaluateExpr(Binary(Expr::OP_SUB, Constant(kMin), Constant(1)), {});
  EXPECT_EQ(value.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(value.status().message(), HasSubstr("integer overflow in -9223372036854775808 - 1"));
}

TEST(EvaluateExpr, ComparesSignedValuesToOneOrZero) {
  EXPECT_EQ(Eval(Expr::OP_EQ, 4, 4), 1);
  EXPECT_EQ(Eval(Expr::OP_EQ, 4, -4), 0);
  EXPECT_EQ(Eval(Expr::OP_NE, 4, -4), 1);
  EXPECT_EQ(Eval(Expr::OP_NE, 4, 4), 0);
  EXPECT_EQ(Eval(Expr::OP_LT, -1, 0), 1);
  EXPECT_EQ(Eval(Expr::OP_LT, 0, 0), 0);
  EXPECT_EQ(Eval(Expr::OP_LT, 1, -1), 0);
  EXPECT_EQ(Eval(Expr::OP_LE, 0, 0), 1);
  EXPECT_EQ(Eval(Expr::OP_LE, -2, -3), 0);
}

TEST(EvaluateExpr, CombinesNonZeroAsTrueToOneOrZero) {
  EXPECT_EQ(Eval(Expr::OP_AND, 5, -3), 1);
  EXPECT_EQ(Eval(Expr::OP_AND, 5, 0), 0);
  EXPECT_EQ(Eval(Expr::OP_AND, 0, 7), 0);
  EXPECT_EQ(Eval(Expr::OP_OR, 0, 0), 0);
  EXPECT_EQ(Eval(Expr::OP_OR, 0, 7), 1);
  EXPECT_EQ(Eval(Expr::OP_OR, -2, 0), 1);
}

TEST(EvaluateExpr, SkipsTheRightOperandWhenTheLeftDecides) {
  const Expr divide_by_zero = Binary(Expr::OP_MOD, Constant(1), Constant(0));
  EXPECT_EQ(*EvaluateExpr(Binary(Expr::OP_AND, Constant(0), divide_by_zero), {}), 0);
  EXPECT_EQ(*EvaluateExpr(Binary(Expr::OP_OR, Constant(3), divide_by_zero), {}), 1);
  EXPECT_THAT(
      EvaluateExpr(Binary(Expr::OP_AND, Constant(1), divide_by_zero), {}).status().message(),
      HasSubstr("division by zero in 1 % 0"));
}

TEST(EvaluateExpr, TakesMinAndMax) {
  EXPECT_EQ(Eval(Expr::OP_MIN, -3, 2), -3);
  EXPECT_EQ(Eval(Expr::OP_MIN, 7, 7), 7);
  EXPECT_EQ(Eval(Expr::OP_MAX, -3, 2), 2);
  EXPECT_EQ(Eval(Expr::OP_MAX, -3, -9), -3);
}

TEST(EvaluateExpr, ReadsIntegerParamsWhereGiven) {
  const std::vector<int64_t> dims = {32};
  const std::vector<std::optional<int64_t>> params = {std::nullopt, 8};
  EXPECT_EQ(*EvaluateExpr(ParamRef(1), dims, params), 8);
  // H % Hkv == 0 && Hkv <= H with H = 32, Hkv = 8.
  const Expr divides = Binary(
      Expr::OP_AND, Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, Symbol(0), ParamRef(1)), Constant(0)),
      Binary(Expr::OP_LE, ParamRef(1), Symbol(0)));
  EXPECT_EQ(*EvaluateExpr(divides, dims, params), 1);
  EXPECT_EQ(*EvaluateExpr(divides, dims, std::vector<std::optional<int64_t>>{0, 5}), 0);
}

TEST(EvaluateExpr, RejectsParamsWithoutAValue) {
  // A grid extent gets no params; a tensor param (nullopt) has no value.
  for (const auto& params : {std::vector<std::optional<int64_t>>{},
                             std::vector<std::optional<int64_t>>{std::nullopt, 8}}) {
    absl::StatusOr<int64_t> value = EvaluateExpr(ParamRef(0), {}, params);
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(value.status().message(), HasSubstr("param p0 has no integer value"));
  }
  EXPECT_THAT(
      EvaluateExpr(ParamRef(2), {}, std::vector<std::optional<int64_t>>{1, 2}).status().message(),
      HasSubstr("param p2 has no integer value"));
}

TEST(FormatExpr, PrintsInfixWithOnlyTheNeededParentheses) {
  const std::vector<std::string> dims = {"H", "K"};
  const std::vector<std::string> params = {"Q", "Hkv"};
  auto text = [&](const Expr& expr) { return FormatExpr(expr, dims, params); };
  const Expr h = Symbol(0), k = Symbol(1), hkv = ParamRef(1);
  EXPECT_EQ(text(Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, k, Constant(128)), Constant(0))),
            "K % 128 == 0");
  EXPECT_EQ(
      text(Binary(Expr::OP_AND, Binary(Expr::OP_EQ, Binary(Expr::OP_MOD, h, hkv), Constant(0)),
                  Binary(Expr::OP_LE, hkv, h))),
      "H % Hkv == 0 && Hkv <= H");
  EXPECT_EQ(text(Binary(Expr::OP_NE, h, k)), "H != K");
  EXPECT_EQ(text(Binary(Expr::OP_LT, h, k)), "H < K");
  EXPECT_EQ(text(Binary(Expr::OP_OR, Binary(Expr::OP_AND, h, k), hkv)), "(H && K) || Hkv");
  EXPECT_EQ(text(Binary(Expr::OP_SUB, h, Binary(Expr::OP_SUB, k, Constant(1)))), "H - (K - 1)");
  EXPECT_EQ(text(Binary(Expr::OP_SUB, Binary(Expr::OP_SUB, h, k), Constant(1))), "H - K - 1");
  EXPECT_EQ(text(Binary(Expr::OP_MUL, Binary(Expr::OP_ADD, h, k), Constant(2))), "(H + K) * 2");
  EXPECT_EQ(text(Binary(Expr::OP_EQ, Binary(Expr::OP_LT, h, k), Constant(1))), "(H < K) == 1");
  EXPECT_EQ(text(Binary(Expr::OP_MIN, Binary(Expr::OP_ADD, h, k), hkv)), "min(H + K, Hkv)");
  EXPECT_EQ(text(Binary(Expr::OP_MAX, h, Constant(64))), "max(H, 64)");
  EXPECT_EQ(FormatExpr(ParamRef(1)), "p1");
}

}  // namespace
}  // namespace tessera::runtime
