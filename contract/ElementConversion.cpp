//===- ElementConversion.cpp - Stored and converted elements ------------===//
//
// This file implements the storage and conversion of element types in
// lowered kernels: FP8 encoding and decoding as integer arithmetic (no
// target before sm_89 converts FP8, and LLVM has no FP8 type), ui8 as i8
// bits, and the conversions between the computable types with optional
// saturation.
//
//===----------------------------------------------------------------------===//

#include "contract/ElementConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>

namespace tessera {

using namespace mlir;

namespace {

/// The parameters of an FP8 format (OCP 8-bit floating point).
struct Fp8Format {
  /// Explicit mantissa bits and exponent bias.
  int64_t mantissa, bias;
  /// The largest finite magnitude's bits, the NaN bits, and what an
  /// overflow encodes without saturation (e4m3 has no infinity).
  int64_t maxFinite, nan, overflow;
};

/// e4m3 (f8E4M3FN): max 448 = 0x7e, NaN 0x7f, no infinity.
constexpr Fp8Format kE4M3{3, 7, 0x7e, 0x7f, 0x7f};
/// e5m2 (f8E5M2): max 57344 = 0x7b, infinity 0x7c, NaN 0x7e.
constexpr Fp8Format kE5M2{2, 15, 0x7b, 0x7e, 0x7c};

bool isFp8(Type type) { return isa<Float8E4M3FNType, Float8E5M2Type>(type); }

/// Small integer arithmetic on i32 values.
struct Ints {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  Value andi(Value x, int64_t m) { return arith::AndIOp::create(b, loc, x, c(m)); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, Value s) { return arith::ShLIOp::create(b, loc, x, s); }
  Value shr(Value x, Value s) { return arith::ShRUIOp::create(b, loc, x, s); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value p, Value x, Value y) { return arith::SelectOp::create(b, loc, p, x, y); }
};

/// The f32 value of e4m3 bits (i8): exact, subnormals included.
Value decodeE4M3(OpBuilder &b, Location loc, Value bits) {
  Ints i{b, loc};
  Type f32 = b.getF32Type();
  Value u = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
  Value sign = i.shl(i.andi(u, 0x80), i.c(24));
  Value mag = i.andi(u, 0x7f);
  // Normal: the exponent rebiased from 7 to 127, the mantissa moved up.
  Value normal = i.ori(sign, i.add(i.shl(mag, i.c(20)), i.c(120 << 23)));
  // Subnormal: mantissa x 2^-9, an exact f32 product.
  Value quantum = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0x1p-9f));
  Value scaled =
      arith::MulFOp::create(b, loc, arith::UIToFPOp::create(b, loc, f32, mag), quantum);
  Value subnormal = i.ori(sign, arith::BitcastOp::create(b, loc, b.getI32Type(), scaled));
  Value bitsF32 = i.select(i.cmp(arith::CmpIPredicate::ult, mag, i.c(8)), subnormal, normal);
  bitsF32 = i.select(i.cmp(arith::CmpIPredicate::eq, mag, i.c(0x7f)),
                     i.ori(sign, i.c(0x7fc00000)), bitsF32);
  return arith::BitcastOp::create(b, loc, f32, bitsF32);
}

/// The f32 value of e5m2 bits (i8): the high byte of an f16, extended.
Value decodeE5M2(OpBuilder &b, Location loc, Value bits) {
  Type i16 = b.getI16Type();
  Value wide = arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i16, bits),
                                     arith::ConstantIntOp::create(b, loc, i16, 8));
  Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), wide);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
}

/// FP8 bits (i8) of an f32 value, rounded to nearest even; beyond the
/// finite range the largest finite value (`saturate`) or the format's
/// overflow encoding; NaN to NaN.
Value encodeFp8(OpBuilder &b, Location loc, Value x, const Fp8Format &f, bool saturate) {
  Ints i{b, loc};
  using P = arith::CmpIPredicate;
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value sign = i.andi(i.shr(bits, i.c(24)), 0x80);
  Value a = i.andi(bits, 0x7fffffff);
  // Normal range: rebias the exponent, round the mantissa's low 23 - M bits
  // to nearest even (a carry moves into the exponent, as it should).
  int64_t t = 23 - f.mantissa;
  Value r = i.sub(a, i.c((127 - f.bias) << 23));
  Value lsb = i.andi(i.shr(r, i.c(t)), 1);
  Value normal = i.shr(i.add(i.add(r, i.c((int64_t(1) << (t - 1)) - 1)), lsb), i.c(t));
  // Below the smallest normal: the significand (implicit bit set) in units
  // of the smallest subnormal, 2^(1 - bias - M), rounded to nearest even.
  Value e = i.shr(a, i.c(23));
  Value m = i.ori(i.andi(a, 0x7fffff), i.c(0x800000));
  Value s = arith::MinUIOp::create(b, loc, i.sub(i.c(151 - f.bias - f.mantissa), e), i.c(31));
  Value q = i.shr(m, s);
  Value rem = i.sub(m, i.shl(q, s));
  Value half = i.shl(i.c(1), i.sub(s, i.c(1)));
  Value up = arith::OrIOp::create(
      b, loc, i.cmp(P::ugt, rem, half),
      arith::AndIOp::create(b, loc, i.cmp(P::eq, rem, half),
                            i.cmp(P::ne, i.andi(q, 1), i.c(0))));
  Value subnormal = i.add(q, arith::ExtUIOp::create(b, loc, b.getI32Type(), up));
  Value mag = i.select(i.cmp(P::ult, a, i.c((128 - f.bias) << 23)), subnormal, normal);
  mag = i.select(i.cmp(P::ugt, mag, i.c(f.maxFinite)),
                 i.c(saturate ? f.maxFinite : f.overflow), mag);
  mag = i.select(i.cmp(P::ugt, a, i.c(0x7f800000)), i.c(f.nan), mag);
  return arith::TruncIOp::create(b, loc, b.getI8Type(), i.ori(mag, sign));
}

/// `v` clamped to [lo, hi] (NaN stays NaN).
Value clampFloat(OpBuilder &b, Location loc, Value v, double lo, double hi) {
  Type type = v.getType();
  v = arith::MinimumFOp::create(b, loc, v,
                                arith::ConstantOp::create(b, loc, b.getFloatAttr(type, hi)));
  return arith::MaximumFOp::create(b, loc, v,
                                   arith::ConstantOp::create(b, loc, b.getFloatAttr(type, lo)));
}

/// A float of a computable type converted to another (f16 <-> bf16 through
/// f32).
Value floatToFloat(OpBuilder &b, Location loc, Value v, FloatType to, bool saturate) {
  auto from = cast<FloatType>(v.getType());
  if (from == to)
    return v;
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  if (from.getWidth() == to.getWidth())
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  if (saturate) {
    double largest = llvm::APFloat::getLargest(to.getFloatSemantics()).convertToDouble();
    v = clampFloat(b, loc, v, -largest, largest);
  }
  return arith::TruncFOp::create(b, loc, to, v);
}

} // namespace

Type getStorageType(Type type) {
  if (isFp8(type) || type.isUnsignedInteger(8))
    return IntegerType::get(type.getContext(), 8);
  return type;
}

Value convertElement(OpBuilder &b, Location loc, Value value, Type from, Type to,
                     bool saturate) {
  if (from == to)
    return value;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  // 1. A computable value: FP8 decoded to f32, ui8 zero-extended to i32.
  if (isa<Float8E4M3FNType>(from))
    value = decodeE4M3(b, loc, value), from = f32;
  else if (isa<Float8E5M2Type>(from))
    value = decodeE5M2(b, loc, value), from = f32;
  else if (from.isUnsignedInteger(8))
    value = arith::ExtUIOp::create(b, loc, i32, value), from = i32;
  if (from == to)
    return value;
  // 2. Into the destination.
  auto fromFloat = dyn_cast<FloatType>(from);
  if (isFp8(to)) {
    if (!fromFloat)
      value = arith::SIToFPOp::create(b, loc, f32, value);
    else
      value = floatToFloat(b, loc, value, cast<FloatType>(f32), saturate);
    return encodeFp8(b, loc, value, isa<Float8E4M3FNType>(to) ? kE4M3 : kE5M2, saturate);
  }
  if (auto toFloat = dyn_cast<FloatType>(to)) {
    if (fromFloat)
      return floatToFloat(b, loc, value, toFloat, saturate);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  // An integer destination (ui8 held as i8).
  unsigned width = to.getIntOrFloatBitWidth();
  bool toUnsigned = to.isUnsignedInteger(8);
  Type storage = getStorageType(to);
  double lo = toUnsigned ? 0 : -std::ldexp(1.0, width - 1);
  double hi = toUnsigned ? 255 : std::ldexp(1.0, width - 1) - 1;
  if (fromFloat) {
    if (saturate) {
      // In f64, which holds the bounds of i8, ui8 and i32 exactly (i64's
      // upper bound as the largest double below 2^63); NaN to 0.
      Value wide = floatToFloat(b, loc, value, b.getF64Type(), false);
      Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, wide, wide);
      wide = clampFloat(b, loc, wide, lo, width == 64 ? 0x1.fffffffffffffp62 : hi);
      Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0));
      value = arith::SelectOp::create(b, loc, nan, zero, wide);
    }
    if (toUnsigned)
      return arith::FPToUIOp::create(b, loc, storage, value);
    return arith::FPToSIOp::create(b, loc, storage, value);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  // Saturating into an integer whose range does not hold the source's
  // (narrower, or unsigned from signed): clamp in a type that holds both
  // bounds, at least 32 bits wide (what the target computes in anyway).
  if (saturate && (width < fromWidth || toUnsigned)) {
    unsigned wide = std::max(fromWidth, 32u);
    if (wide > fromWidth) {
      value = arith::ExtSIOp::create(b, loc, b.getIntegerType(wide), value);
      fromWidth = wide;
    }
    Type wideType = value.getType();
    auto bound = [&](double v) {
      return arith::ConstantIntOp::create(b, loc, wideType, int64_t(v)).getResult();
    };
    value = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, value, bound(hi)),
                                   bound(lo));
  }
  if (width < fromWidth)
    return arith::TruncIOp::create(b, loc, storage, value);
  if (width > fromWidth)
    return arith::ExtSIOp::create(b, loc, storage, value);
  return value;
}

bool saturatesInto(Type type) { return isFp8(type) || isa<IntegerType>(type); }

Value storageConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (isFp8(type)) {
    auto semantics = &cast<FloatType>(type).getFloatSemantics();
    llvm::APFloat f(value);
    bool lost = false;
    llvm::APFloat::opStatus status =
        f.convert(*semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
    if ((status & llvm::APFloat::opOverflow) || f.isInfinity())
      f = llvm::APFloat::getLargest(*semantics, f.isNegative());
    return arith::ConstantIntOp::create(b, loc, b.getI8Type(),
                                        f.bitcastToAPInt().getZExtValue());
  }
  Type storage = getStorageType(type);
  if (isa<FloatType>(storage))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(storage, value));
  return arith::ConstantIntOp::create(b, loc, storage, int64_t(value));
}

} // namespace tessera
