//===- element_conversion_test.cc - FP8 and ui8 conversions, folded -------===//
//
// This file checks the integer arithmetic that lowered kernels use to
// decode and encode FP8 and to convert ui8 (contract/ElementConversion.h)
// against LLVM's APFloat, without a GPU: each conversion is built on a
// constant and folded by MLIR's constant folders, which evaluate the same
// arith ops the GPU runs. Every e4m3 and e5m2 bit pattern decodes exactly;
// encoding rounds to nearest even, saturates or overflows as documented.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstdint>
#include <optional>

#include "contract/ElementConversion.h"
#include "gtest/gtest.h"
#include "llvm/ADT/APFloat.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera {
namespace {

using namespace mlir;

class ElementConversion : public ::testing::Test {
protected:
  ElementConversion() {
    context_.loadDialect<arith::ArithDialect, func::FuncDialect>();
  }

  /// convertElement(constant `input` of storage type of `from`) folded to
  /// an attribute.
  Attribute fold(Attribute input, Type from, Type to, bool saturate) {
    OpBuilder b(&context_);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    // A function returning the converted value, folded.
    Type resultType = getStorageType(to);
    auto func = func::FuncOp::create(b, loc, "f", b.getFunctionType({}, {resultType}));
    Block *body = func.addEntryBlock();
    b.setInsertionPointToEnd(body);
    Value v = arith::ConstantOp::create(b, loc, cast<TypedAttr>(input));
    Value result = convertElement(b, loc, v, from, to, saturate);
    auto ret = func::ReturnOp::create(b, loc, result);
    (void)applyPatternsGreedily(func, RewritePatternSet(&context_));
    Attribute folded;
    if (!matchPattern(ret.getOperand(0), m_Constant(&folded)))
      return {};
    return folded;
  }

  /// The f32 value `bits` (an FP8 pattern of `type`) decodes to.
  std::optional<float> decode(uint8_t bits, Type type) {
    OpBuilder b(&context_);
    Attribute out = fold(b.getI8IntegerAttr(bits), type, b.getF32Type(), false);
    if (auto f = dyn_cast_or_null<FloatAttr>(out))
      return f.getValue().convertToFloat();
    return std::nullopt;
  }

  /// The FP8 bits `x` encodes to.
  std::optional<uint8_t> encode(float x, Type type, bool saturate) {
    OpBuilder b(&context_);
    Attribute out = fold(b.getF32FloatAttr(x), b.getF32Type(), type, saturate);
    if (auto i = dyn_cast_or_null<IntegerAttr>(out))
      return uint8_t(i.getValue().getZExtValue());
    return std::nullopt;
  }

  /// What APFloat encodes `x` to (round to nearest even).
  static uint8_t reference(float x, Type type, bool saturate) {
    const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
    llvm::APFloat f(x);
    bool lost;
    auto status = f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
    bool overflow = (status & llvm::APFloat::opOverflow) || std::isinf(x);
    if (overflow && saturate)
      f = llvm::APFloat::getLargest(sem, std::signbit(x));
    return uint8_t(f.bitcastToAPInt().getZExtValue());
  }

  MLIRContext context_;
};

TEST_F(ElementConversion, DecodesEveryFp8PatternExactly) {
  for (Type type : {Type(Float8E4M3FNType::get(&context_)),
                    Type(Float8E5M2Type::get(&context_))}) {
    for (int bits = 0; bits < 256; ++bits) {
      llvm::APFloat expected(cast<FloatType>(type).getFloatSemantics(),
                             llvm::APInt(8, bits));
      std::optional<float> got = decode(uint8_t(bits), type);
      // e5m2's signaling NaNs widen through f16, whose folder leaves them
      // (the GPU's cvt gives a NaN).
      if (expected.isNaN()) {
        EXPECT_TRUE(!got || std::isnan(*got)) << "pattern " << bits;
        continue;
      }
      ASSERT_TRUE(got.has_value()) << "pattern " << bits << " did not fold";
      EXPECT_EQ(*got, expected.convertToFloat()) << "pattern " << bits;
    }
  }
}

TEST_F(ElementConversion, EncodesFp8RoundingToNearestEven) {
  // Every representable value, the midpoints and near-midpoints between
  // neighbors, values past the range, subnormals and tiny values.
  std::vector<float> inputs = {0.0f, -0.0f, 1e-30f, -1e-30f, 0x1p-10f, 0x1p-17f, 3e-9f,
                               447.9f, 448.0f, 464.0f, 464.1f, 479.9f, 480.0f, 1e6f,
                               57344.0f, 61440.0f, 61441.0f, 1e9f, INFINITY, -INFINITY};
  for (Type type : {Type(Float8E4M3FNType::get(&context_)),
                    Type(Float8E5M2Type::get(&context_))}) {
    const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
    for (int bits = 0; bits < 127; ++bits) {
      llvm::APFloat lo(sem, llvm::APInt(8, bits)), hi(sem, llvm::APInt(8, bits + 1));
      if (lo.isNaN() || hi.isNaN() || lo.isInfinity() || hi.isInfinity())
        continue;
      float a = lo.convertToFloat(), c = hi.convertToFloat(), mid = (a + c) / 2;
      for (float x : {a, mid, std::nextafter(mid, a), std::nextafter(mid, c)}) {
        inputs.push_back(x);
        inputs.push_back(-x);
      }
    }
    for (bool saturate : {false, true}) {
      for (float x : inputs) {
        std::optional<uint8_t> got = encode(x, type, saturate);
        ASSERT_TRUE(got.has_value()) << x << " did not fold";
        llvm::APFloat expected(sem, llvm::APInt(8, reference(x, type, saturate)));
        llvm::APFloat actual(sem, llvm::APInt(8, *got));
        if (expected.isNaN()) {
          EXPECT_TRUE(actual.isNaN()) << x << (saturate ? " saturated" : "");
          continue;
        }
        EXPECT_EQ(*got, reference(x, type, saturate))
            << x << (saturate ? " saturated" : "");
      }
      std::optional<uint8_t> nan = encode(NAN, type, saturate);
      ASSERT_TRUE(nan.has_value());
      EXPECT_TRUE(llvm::APFloat(sem, llvm::APInt(8, *nan)).isNaN());
    }
  }
}

TEST_F(ElementConversion, ZeroExtendsU8AndSaturatesIntegers) {
  OpBuilder b(&context_);
  Type u8 = b.getIntegerType(8, false), i8 = b.getI8Type(), i32 = b.getI32Type();
  auto i32Of = [&](Attribute a) { return cast<IntegerAttr>(a).getValue().getSExtValue(); };
  EXPECT_EQ(i32Of(fold(b.getI8IntegerAttr(-1), u8, i32, false)), 255);
  EXPECT_EQ(i32Of(fold(b.getI8IntegerAttr(-1), i8, i32, false)), -1);
  auto f32Of = [&](Attribute a) { return cast<FloatAttr>(a).getValueAsDouble(); };
  EXPECT_EQ(f32Of(fold(b.getI8IntegerAttr(-56), u8, b.getF32Type(), false)), 200.0);
  auto i8Bits = [&](Attribute a) { return cast<IntegerAttr>(a).getValue().getZExtValue(); };
  EXPECT_EQ(i8Bits(fold(b.getF32FloatAttr(300.0f), b.getF32Type(), u8, true)), 255u);
  EXPECT_EQ(i8Bits(fold(b.getF32FloatAttr(-7.0f), b.getF32Type(), u8, true)), 0u);
  EXPECT_EQ(i8Bits(fold(b.getF32FloatAttr(-300.0f), b.getF32Type(), i8, true)), 0x80u);
  EXPECT_EQ(i8Bits(fold(b.getI32IntegerAttr(1000), i32, i8, true)), 0x7fu);
}

}  // namespace
}  // namespace tessera
