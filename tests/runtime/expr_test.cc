//===- expr_test.cc - Tests of grid expression evaluation -----------------===//
//
// This file tests EvaluateExpr and FormatExpr without a GPU.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/launch.h"
#include "tests/runtime/test_kernels.h"

namespace tessera::runtime {
namespace {

using ::testing::HasSubstr;
using test_kernels::Binary;
using test_kernels::Constant;
using test_kernels::Symbol;

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
            "((ceil_div(M, 128) * ceil_div(N, 64)) + 1)");
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

}  // namespace
}  // namespace tessera::runtime
