//===- integer_ops_test.cc - Bit operations and integer casts -------------===//
//
// Builds kernels with the frontend's bit operations (& | ^ ~, shifts),
// Bitcast and SaturatingCast, checks the IR and PTX they give on every
// target, constant folding, and that misuse (floats, mixed types, constant
// shift amounts out of range, bit casts across widths) is an error in
// Kernel::status(), never an abort.
//
//===----------------------------------------------------------------------===//

#include <functional>

#include "frontend/Tessera.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

const char* const kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

/// Y = body(X, U) elementwise on i32 X and U [N], 256 per block.
Kernel Elementwise(const std::function<Scalar(Scalar, Scalar, Index)>& body, DType out = i32) {
  KernelBuilder T("elementwise");
  Dim n = Dim::Dynamic("N");
  auto X = T.Tensor("X", {n}, i32), U = T.Tensor("U", {n}, i32), Y = T.Tensor("Y", {n}, out);
  T.Launch({CeilDiv(n, 256)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({256}, i32, "x"), u = T.AllocFragment({256}, i32, "u");
    auto y = T.AllocFragment({256}, out, "y");
    T.Copy(X.Tile(bx * 256), x);
    T.Copy(U.Tile(bx * 256), u);
    T.Parallel({256}, [&](Index i) { y(i) = body(x(i), u(i), i); });
    T.Copy(y, Y.Tile(bx * 256));
  });
  return T.Build();
}

std::string Message(const Kernel& kernel) { return std::string(kernel.status().message()); }

TEST(IntegerOps, BitOperationsBuildArithAndCompileEverywhere) {
  Kernel kernel = Elementwise([](Scalar x, Scalar u, Index) {
    return ((x & 0xF0) | (u ^ 3)) + (~x) + (x << 2) + (x >> 3) + ShiftRightLogical(u, 28);
  });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  for (const char* op :
       {"arith.andi", "arith.ori", "arith.xori", "arith.shli", "arith.shrsi", "arith.shrui"})
    EXPECT_NE(text.find(op), std::string::npos) << op << "\n" << text;
  // Constant amounts in range need no clamp.
  EXPECT_EQ(text.find("arith.cmpi uge"), std::string::npos) << text;
  for (const char* target : kTargets) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    for (const char* instruction : {"shr.u32", "shr.s32", "xor.b32", "and.b32"})
      EXPECT_NE(compiled->ptx().find(instruction), std::string::npos) << target << instruction;
  }
}

TEST(IntegerOps, DynamicShiftAmountsClampAsPtxDoes) {
  Kernel kernel = Elementwise(
      [](Scalar x, Scalar u, Index) { return (x << u) + (x >> u) + ShiftRightLogical(x, u); });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  // << and the logical >> select 0 at amounts >= 32; >> clamps to 31.
  EXPECT_NE(text.find("arith.cmpi uge"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.minui"), std::string::npos) << text;
}

TEST(IntegerOps, ConstantsFoldAsSixtyFourBitIntegers) {
  Kernel kernel = Elementwise([](Scalar x, Scalar, Index) {
    Scalar folded = (Scalar(0xF0) | 0x0F) ^ (Scalar(1) << 4);  // 0xEF
    EXPECT_EQ(folded.handle(), nullptr);
    EXPECT_EQ(folded.constant(), double(0xEF));
    EXPECT_EQ((~Scalar(0)).constant(), -1.0);
    EXPECT_EQ((Scalar(-16) >> 2).constant(), -4.0);
    EXPECT_EQ(ShiftRightLogical(Scalar(-1), 60).constant(), 15.0);
    EXPECT_EQ(SaturatingCast(Scalar(300), i8).constant(), 127.0);
    EXPECT_EQ(SaturatingCast(Scalar(-3), u8).constant(), 0.0);
    return x + folded;
  });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
}

TEST(IntegerOps, BitcastAndSaturatingCast) {
  Kernel kernel = Elementwise(
      [](Scalar x, Scalar, Index) {
        Scalar f = Bitcast(x & 0x807FFFFF | 0x3F800000, f32);  // in [1, 2) by sign
        return SaturatingCast(Bitcast(f * 2.0, i32), i8);
      },
      i8);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find("arith.bitcast %"), std::string::npos) << text;
  EXPECT_NE(text.find("{saturate} : i32 to i8"), std::string::npos) << text;
  for (const char* target : kTargets) EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
}

TEST(IntegerOps, IntegerToHalfCompilesEverywhere) {
  Kernel kernel = Elementwise([](Scalar x, Scalar, Index) { return Cast(x & 0xF, f16); }, f16);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char* target : kTargets) {
    auto compiled = kernel.Compile({target});
    EXPECT_TRUE(compiled.ok()) << target << ": " << compiled.status();
  }
}

/// The error a kernel whose body is `body` reports, located at the
/// statement that holds the expression (Elementwise's Parallel).
void ExpectError(const std::function<Scalar(Scalar, Scalar, Index)>& body,
                 const std::string& expected) {
  Kernel kernel = Elementwise(body);
  ASSERT_FALSE(kernel.status().ok());
  std::string message = Message(kernel);
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_NE(message.find("integer_ops_test.cc:"), std::string::npos) << message;
}

TEST(IntegerOps, MisuseIsAnErrorInKernelStatus) {
  ExpectError([](Scalar x, Scalar, Index) { return Cast(Cast(x, f32) & 1, i32); },
              "Scalar & of a scalar of type f32; bit operations take i8, i32 or i64");
  ExpectError([](Scalar x, Scalar, Index) { return x | Cast(x, i64); },
              "Scalar | of scalars of types i32 and i64; Cast one");
  ExpectError([](Scalar x, Scalar, Index) { return x << 32; },
              "Scalar << by the constant 32, outside [0, 32) for i32");
  ExpectError([](Scalar x, Scalar, Index) { return x >> -1; },
              "Scalar >> by the constant -1, outside [0, 32) for i32");
  ExpectError([](Scalar x, Scalar, Index) { return x & 1.5; },
              "Scalar & of the constant 1.500000, which is not an integer");
  ExpectError([](Scalar x, Scalar, Index) { return Bitcast(Bitcast(x, f64), i32); },
              "Bitcast of i32 to f64; Bitcast reinterprets f32 as i32, f64 as i64 or back");
  ExpectError([](Scalar x, Scalar, Index) { return x + Bitcast(Scalar(1.0), i32); },
              "Bitcast of a constant");
  ExpectError([](Scalar x, Scalar, Index) { return ShiftRightLogical(x < 0, 1); },
              "ShiftRightLogical of a scalar of type i1");
}

/// A kernel reducing a [4, 64] fragment of `type` with `reduce`.
Kernel Reducing(DType type, const std::function<void(KernelBuilder&, Buffer)>& reduce) {
  KernelBuilder T("reducing");
  auto X = T.Tensor("X", {Dim::Dynamic("M"), 64}, type);
  T.Launch({1}, 128, [&](Index) {
    auto x = T.AllocFragment({4, 64}, type, "x");
    T.Copy(X.Tile(0, 0), x);
    reduce(T, x);
  });
  return T.Build();
}

TEST(IntegerOps, IntegerReductionsArgReductionsAndTopKCompileEverywhere) {
  Kernel kernel = Reducing(i32, [](KernelBuilder& T, Buffer x) {
    auto sum = T.AllocFragment({4}, i64, "sum"), top = T.AllocFragment({4}, i32, "top");
    auto at = T.AllocFragment({4}, i32, "at");
    auto values = T.AllocFragment({4, 3}, i32, "values"), where = T.AllocFragment({4, 3}, i32);
    T.ReduceSum(x, sum);
    T.ReduceArgMax(x, top, at);
    T.TopK(x, values, where);
  });
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find("tile.reduce sum"), std::string::npos) << text;
  EXPECT_NE(text.find("TopK.work"), std::string::npos) << text;
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"})
    EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
}

TEST(IntegerOps, ArgReductionAndTopKMisuseNamesTheCall) {
  EXPECT_THAT(Message(Reducing(f32,
                               [](KernelBuilder& T, Buffer x) {
                                 auto v = T.AllocFragment({4}, f32), i = T.AllocFragment({4}, f32);
                                 T.ReduceArgMax(x, v, i);
                               })),
              ::testing::HasSubstr("ReduceArgMax of a !tile.buffer<4x64xf32, fragment> needs "
                                   "values and indices fragments of shape [rows] and types f32 "
                                   "and i32"));
  EXPECT_THAT(Message(Reducing(f32,
                               [](KernelBuilder& T, Buffer x) {
                                 auto v = T.AllocFragment({4, 17}, f32);
                                 auto i = T.AllocFragment({4, 17}, i32);
                                 T.TopK(x, v, i);
                               })),
              ::testing::HasSubstr("TopK takes k in [1, min(16, n)], got k = 17 for n = 64"));
  EXPECT_THAT(Message(Reducing(i8,
                               [](KernelBuilder& T, Buffer x) {
                                 auto m = T.AllocFragment({4}, i8);
                                 T.ReduceMax(x, m);
                               })),
              ::testing::HasSubstr("or i32 or i64 ones (signed), got 'i8' and 'i8'"));
}

}  // namespace
}  // namespace tessera
