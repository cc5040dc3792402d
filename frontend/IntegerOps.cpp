//===- IntegerOps.cpp - Bit operations, bit casts, saturating casts -------===//
//
// This file implements the frontend's integer and bit operations on
// Scalars: & | ^ ~, shifts (arithmetic and logical, with PTX's clamping of
// large amounts), Bitcast between types of one width and SaturatingCast.
// Together with Cast they are enough to unpack int4 and FP4 weights in a
// Parallel body.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

#include <cmath>

namespace tessera {

using namespace detail;

namespace {

/// Records an author's error in the kernel being built, or as a misuse
/// outside one (constants fold without a builder).
void report(BuilderState *s, const std::string &message) {
  if (s)
    s->error(message);
  else
    recordMisuse("tessera: " + message);
}

/// The integer value of a constant scalar, or nullopt (after an error naming
/// `what`) when it has none: a fraction, NaN, or past int64.
std::optional<int64_t> integerConstant(BuilderState *s, const Scalar &x, const char *what) {
  double c = x.constant();
  if (c >= -0x1p63 && c < 0x1p63 && c == std::trunc(c))
    return int64_t(c);
  report(s,
         std::string(what) + " of the constant " + std::to_string(c) + ", which is not an integer");
  return std::nullopt;
}

/// The operands of a bit operation in their common integer type, or an
/// empty pair after an error: both typed the same (a constant takes the
/// other's type), an integer type (booleans only when `booleans`).
std::optional<std::pair<mlir::Value, mlir::Value>> integerOperands(BuilderState &s, const Scalar &a,
                                                                   const Scalar &b,
                                                                   const char *what,
                                                                   bool booleans) {
  mlir::Value x = s.resolve(a), y = s.resolve(b);
  mlir::Type type = (x ? x : y).getType();
  if (x && y && x.getType() != y.getType()) {
    s.error(std::string(what) + " of scalars of types " + BuilderState::stringify(x.getType()) +
            " and " + BuilderState::stringify(y.getType()) + "; Cast one");
    return std::nullopt;
  }
  auto integer = mlir::dyn_cast<mlir::IntegerType>(type);
  if (!integer || integer.isUnsigned() || (integer.getWidth() == 1 && !booleans)) {
    s.error(std::string(what) + " of a scalar of type " + BuilderState::stringify(type) +
            "; bit operations take i8, i32 or i64 (Cast u8 to i32, Bitcast f32 to i32)" +
            (booleans ? " or booleans" : ""));
    return std::nullopt;
  }
  for (const Scalar *side : {&a, &b})
    if (isConstant(*side) && !integerConstant(&s, *side, what))
      return std::nullopt;
  return std::make_pair(s.materialize(a, type), s.materialize(b, type));
}

/// &, | or ^ of two scalars.
template <typename Op>
Scalar bitwise(const Scalar &a, const Scalar &b, const char *what,
               int64_t (*fold)(int64_t, int64_t)) {
  if (isConstant(a) && isConstant(b)) {
    BuilderState *s = BuilderState::current;
    std::optional<int64_t> x = integerConstant(s, a, what), y = integerConstant(s, b, what);
    return x && y ? Scalar(double(fold(*x, *y))) : Scalar(0.0);
  }
  BuilderState *s = state(what, a, b);
  if (!s)
    return Scalar(0.0);
  auto operands = integerOperands(*s, a, b, what, /*booleans=*/true);
  if (!operands)
    return Scalar(0.0);
  return s->scalar(Op::create(s->b(), s->here(), operands->first, operands->second));
}

enum class Shift { kLeft, kRightArithmetic, kRightLogical };

/// A shift whose amounts at or past the width (negative ones too, as
/// unsigned) give what PTX's clamping shifts give: 0, or the sign in every
/// bit for an arithmetic right shift. arith (and LLVM) leave such shifts
/// undefined, so the clamp is explicit.
Scalar shift(const Scalar &a, const Scalar &b, Shift kind, const char *what) {
  if (isConstant(a) && isConstant(b)) {
    BuilderState *s = BuilderState::current;
    std::optional<int64_t> x = integerConstant(s, a, what), n = integerConstant(s, b, what);
    if (!x || !n)
      return Scalar(0.0);
    if (*n < 0 || *n >= 64) {
      report(s, std::string(what) + " of two constants by " + std::to_string(*n) +
                    ", outside [0, 64)");
      return Scalar(0.0);
    }
    uint64_t bits = uint64_t(*x);
    switch (kind) {
    case Shift::kLeft:
      return Scalar(double(int64_t(bits << *n)));
    case Shift::kRightArithmetic:
      return Scalar(double(*x >> *n));
    case Shift::kRightLogical:
      return Scalar(double(int64_t(bits >> *n)));
    }
  }
  BuilderState *s = state(what, a, b);
  if (!s)
    return Scalar(0.0);
  auto operands = integerOperands(*s, a, b, what, /*booleans=*/false);
  if (!operands)
    return Scalar(0.0);
  auto [x, n] = *operands;
  mlir::Type type = x.getType();
  int64_t width = type.getIntOrFloatBitWidth();
  if (isConstant(b) && (b.constant() < 0 || b.constant() >= double(width))) {
    s->error(std::string(what) + " by the constant " + std::to_string(int64_t(b.constant())) +
             ", outside [0, " + std::to_string(width) + ") for " + BuilderState::stringify(type));
    return Scalar(0.0);
  }
  mlir::OpBuilder &builder = s->b();
  mlir::Location loc = s->here();
  auto constant = [&](int64_t v) {
    return mlir::arith::ConstantOp::create(builder, loc, builder.getIntegerAttr(type, v))
        .getResult();
  };
  if (kind == Shift::kRightArithmetic) {
    // Amounts past width - 1 shift by width - 1: the sign in every bit.
    if (!isConstant(b))
      n = mlir::arith::MinUIOp::create(builder, loc, n, constant(width - 1));
    return s->scalar(mlir::arith::ShRSIOp::create(builder, loc, x, n));
  }
  mlir::Value shifted = kind == Shift::kLeft
                            ? mlir::Value(mlir::arith::ShLIOp::create(builder, loc, x, n))
                            : mlir::Value(mlir::arith::ShRUIOp::create(builder, loc, x, n));
  if (isConstant(b))
    return s->scalar(shifted);
  mlir::Value past = mlir::arith::CmpIOp::create(builder, loc, mlir::arith::CmpIPredicate::uge, n,
                                                 constant(width));
  return s->scalar(mlir::arith::SelectOp::create(builder, loc, past, constant(0), shifted));
}

} // namespace

Scalar operator&(const Scalar &a, const Scalar &b) {
  return bitwise<mlir::arith::AndIOp>(a, b, "Scalar &", [](int64_t x, int64_t y) { return x & y; });
}
Scalar operator|(const Scalar &a, const Scalar &b) {
  return bitwise<mlir::arith::OrIOp>(a, b, "Scalar |", [](int64_t x, int64_t y) { return x | y; });
}
Scalar operator^(const Scalar &a, const Scalar &b) {
  return bitwise<mlir::arith::XOrIOp>(a, b, "Scalar ^", [](int64_t x, int64_t y) { return x ^ y; });
}
Scalar operator~(const Scalar &a) {
  if (isConstant(a)) {
    std::optional<int64_t> x = integerConstant(BuilderState::current, a, "Scalar ~");
    return x ? Scalar(double(~*x)) : Scalar(0.0);
  }
  // All ones in the operand's type, which the constant -1 takes.
  return bitwise<mlir::arith::XOrIOp>(a, Scalar(-1.0), "Scalar ~",
                                      [](int64_t x, int64_t y) { return x ^ y; });
}
Scalar operator<<(const Scalar &a, const Scalar &b) {
  return shift(a, b, Shift::kLeft, "Scalar <<");
}
Scalar operator>>(const Scalar &a, const Scalar &b) {
  return shift(a, b, Shift::kRightArithmetic, "Scalar >>");
}
Scalar ShiftRightLogical(const Scalar &a, const Scalar &b, SourceLoc where) {
  ExpressionAt expression(where);
  return shift(a, b, Shift::kRightLogical, "ShiftRightLogical");
}

Index ToIndex(const Scalar &x, SourceLoc where) {
  ExpressionAt expression(where);
  if (isConstant(x)) {
    std::optional<int64_t> value = integerConstant(BuilderState::current, x, "ToIndex");
    return Index(value.value_or(0));
  }
  BuilderState *state = detail::state("ToIndex", x);
  if (!state)
    return Index(0);
  BuilderState &s = *state;
  mlir::Value v = s.resolve(x);
  auto integer = mlir::dyn_cast<mlir::IntegerType>(v.getType());
  if (!integer || integer.isUnsigned() || integer.getWidth() == 1) {
    s.error("ToIndex of a scalar of type " + BuilderState::stringify(v.getType()) +
            "; it takes i8, i32 or i64 (Cast first)");
    return Index(0);
  }
  return s.index(mlir::arith::IndexCastOp::create(s.b(), s.here(), s.b().getIndexType(), v));
}

Scalar SaturatingCast(const Scalar &x, DType to, SourceLoc where) {
  ExpressionAt expression(where);
  BuilderState *state = detail::state("SaturatingCast", x);
  if (!state)
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Type type = toMlirType(s.context.get(), to);
  if (isConstant(x)) {
    // An integer constant clamps to the type's range (FP8 constants
    // saturate where they are materialized, floats stay as they are).
    auto integer = mlir::dyn_cast<mlir::IntegerType>(type);
    if (!integer)
      return Cast(x, to);
    double lo = integer.isUnsigned() ? 0 : -std::ldexp(1.0, integer.getWidth() - 1);
    // i64's bound as the largest double below 2^63 (2^63 - 1 rounds up).
    double hi = integer.isUnsigned()       ? std::ldexp(1.0, integer.getWidth()) - 1
                : integer.getWidth() == 64 ? 0x1.fffffffffffffp62
                                           : std::ldexp(1.0, integer.getWidth() - 1) - 1;
    double c = x.constant();
    return Scalar(std::isnan(c) ? 0.0 : std::trunc(std::min(std::max(c, lo), hi)));
  }
  mlir::Value v = s.resolve(x);
  if (v.getType() == type)
    return x;
  if (!s.inParallel()) {
    s.error("SaturatingCast is only valid inside a Parallel body");
    return Scalar(0.0);
  }
  return s.scalar(tile::CastOp::create(s.b(), s.here(), type, v, /*saturate=*/true));
}

Scalar Bitcast(const Scalar &x, DType to, SourceLoc where) {
  ExpressionAt expression(where);
  BuilderState *state = detail::state("Bitcast", x);
  if (!state)
    return Scalar(0.0);
  BuilderState &s = *state;
  mlir::Type type = toMlirType(s.context.get(), to);
  mlir::Value v = s.resolve(x);
  if (!v) {
    s.error("Bitcast of a constant; write the constant of the type it stands for");
    return Scalar(0.0);
  }
  mlir::Type from = v.getType();
  auto computable = [](mlir::Type t) {
    return t.isF32() || t.isF64() || t.isSignlessInteger(32) || t.isSignlessInteger(64);
  };
  if (!computable(from) || !computable(type) ||
      from.getIntOrFloatBitWidth() != type.getIntOrFloatBitWidth()) {
    s.error("Bitcast of " + BuilderState::stringify(from) + " to " + BuilderState::stringify(type) +
            "; Bitcast reinterprets f32 as i32, f64 as i64 or back");
    return Scalar(0.0);
  }
  if (from == type)
    return x;
  return s.scalar(mlir::arith::BitcastOp::create(s.b(), s.here(), type, v));
}

} // namespace tessera
