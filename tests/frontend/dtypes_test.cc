//===- dtypes_test.cc - The data types through the C++ kernel API ---------===//
//
// Builds kernels of FP8, u8, i8, TF32, f16 accumulation and f64 with the
// frontend and checks their IR, the atoms each target picks, the runtime
// description of their parameters, and that misuse is an error at the
// author's line.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tessera.h"

#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

/// Y = e4m3(X * 2) for X: f32 [N], 256 per block.
Kernel Quantize(DType to) {
  KernelBuilder T("quantize");
  Dim n = Dim::Dynamic("N");
  auto X = T.Tensor("X", {n}, f32), Y = T.Tensor("Y", {n}, to);
  T.Launch({CeilDiv(n, 256)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({256}, f32, "x");
    auto y = T.AllocFragment({256}, to, "y");
    T.Copy(X.Tile(bx * 256), x);
    T.Parallel({256}, [&](Index i) { y(i) = Cast(x(i) * 2.0, to); });
    T.Copy(y, Y.Tile(bx * 256));
  });
  return T.Build();
}

/// C = A B^T on one 64 x 64 tile: A, B of `in`, C of `acc`.
Kernel TileGemm(DType in, DType acc, Precision precision = Precision::kIEEE) {
  KernelBuilder T("tile_gemm");
  auto A = T.Tensor("A", {64, 64}, in), B = T.Tensor("B", {64, 64}, in);
  auto C = T.Tensor("C", {64, 64}, acc);
  T.Launch({1}, 128, [&](Index) {
    auto a = T.AllocShared({64, 64}, in, "a"), b = T.AllocShared({64, 64}, in, "b");
    auto c = T.AllocFragment({64, 64}, acc, "c");
    T.Clear(c);
    T.Copy(A.Tile(0, 0), a);
    T.Copy(B.Tile(0, 0), b);
    T.Gemm(a, b, c, precision, /*transposeA=*/false, /*transposeB=*/true);
    T.Copy(c, C.Tile(0, 0));
  });
  return T.Build();
}

std::string Ptx(const Kernel& kernel, const std::string& target) {
  CompileOptions options;
  options.target = target;
  absl::StatusOr<std::string> ptx = kernel.GetKernelSource(Stage::kPTX, options);
  EXPECT_TRUE(ptx.ok()) << ptx.status();
  return ptx.ok() ? *ptx : "";
}

TEST(Dtypes, CastToFp8SaturatesThroughTileCast) {
  Kernel kernel = Quantize(f8e4m3);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  EXPECT_NE(kernel.ToString().find("tile.cast %"), std::string::npos) << kernel.ToString();
  EXPECT_NE(kernel.ToString().find("{saturate} : f32 to f8E4M3FN"), std::string::npos);
  for (const char* target : {"sm_60", "sm_70", "sm_80", "sm_90a"}) {
    std::string ptx = Ptx(kernel, target);
    // Integer arithmetic, one byte stored per element: no FP8 type in PTX.
    EXPECT_NE(ptx.find("st.global.b8"), std::string::npos) << target;
  }
}

TEST(Dtypes, CompiledKernelsDescribeFp8AndU8Parameters) {
  for (auto [dtype, expected] : {std::pair{f8e4m3, runtime::DTYPE_F8E4M3},
                                 {f8e5m2, runtime::DTYPE_F8E5M2},
                                 {u8, runtime::DTYPE_U8}}) {
    Kernel kernel = Quantize(dtype);
    ASSERT_TRUE(kernel.status().ok()) << kernel.status();
    absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile({"sm_80"});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_EQ(compiled->params(1).dtype(), expected);
  }
}

TEST(Dtypes, ArithmeticOnFp8IsAnErrorAtTheAuthorsLine) {
  KernelBuilder T("fp8_add");
  auto A = T.Tensor("A", {Dim(64)}, f8e4m3);
  int line = 0;
  T.Launch({1}, 32, [&](Index) {
    auto a = T.AllocFragment({64}, f8e4m3, "a");
    T.Copy(A.Tile(0), a);
    line = __LINE__ + 1;
    T.Parallel({64}, [&](Index i) { a(i) = a(i) + a(i); });
    T.Copy(a, A.Tile(0));
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  EXPECT_NE(message.find("dtypes_test.cc:" + std::to_string(line)), std::string::npos)
      << message;
  EXPECT_NE(message.find("computes in 'f8E4M3FN', a storage type; tile.cast it to f32"),
            std::string::npos)
      << message;
}

TEST(Dtypes, GemmAccumulatorMustFitTheInputs) {
  Kernel kernel = TileGemm(i8, f32);
  ASSERT_FALSE(kernel.status().ok());
  EXPECT_NE(std::string(kernel.status().message())
                .find("accumulator C must hold i32 for 'i8' inputs, got 'f32'"),
            std::string::npos)
      << kernel.status();
}

TEST(Dtypes, EachTargetPicksItsAtomForEachType) {
  struct Expectation {
    DType in, acc;
    Precision precision;
    const char* target;
    const char* instruction;
  };
  constexpr Precision kIEEE = Precision::kIEEE, kTF32 = Precision::kTF32;
  for (const Expectation& e : {
           Expectation{u8, i32, kIEEE, "sm_80", "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"},
           {i8, i32, kIEEE, "sm_90a", "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8"},
           {f32, f32, kTF32, "sm_80", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"},
           {f32, f32, kTF32, "sm_90a", "m64n64k8.f32.tf32.tf32"},
           {f8e4m3, f32, kIEEE, "sm_90a", "m64n64k32.f32.e4m3.e4m3"},
           {f8e4m3, f32, kIEEE, "sm_89", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"},
           {f8e5m2, f16, kIEEE, "sm_90a", "m64n64k32.f16.e5m2.e5m2"},
           {f16, f16, kIEEE, "sm_80", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"},
           {f64, f64, kIEEE, "sm_80", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"},
           {f8e4m3, f32, kIEEE, "sm_80", "fma.rn.f32"},
           {f32, f32, kIEEE, "sm_90a", "fma.rn.f32"},
           {u8, i32, kIEEE, "sm_60", "mul.wide.u16"},
       }) {
    Kernel kernel = TileGemm(e.in, e.acc, e.precision);
    ASSERT_TRUE(kernel.status().ok()) << kernel.status();
    EXPECT_NE(Ptx(kernel, e.target).find(e.instruction), std::string::npos)
        << e.target << " " << e.instruction;
  }
}

TEST(Dtypes, TensorCoresNeedTf32Precision) {
  Kernel exact = TileGemm(f32, f32);
  ASSERT_TRUE(exact.status().ok());
  EXPECT_EQ(Ptx(exact, "sm_80").find("mma.sync"), std::string::npos);
}

TEST(Dtypes, FillsU8AndFp8Buffers) {
  KernelBuilder T("fill");
  auto U = T.Tensor("U", {Dim(256)}, u8), Q = T.Tensor("Q", {Dim(256)}, f8e5m2);
  T.Launch({1}, 128, [&](Index) {
    auto u = T.AllocFragment({256}, u8, "u");
    auto q = T.AllocShared({256}, f8e5m2, "q");
    T.Fill(u, 200);
    T.Fill(q, -1.5);
    T.Copy(u, U.Tile(0));
    T.Copy(q, Q.Tile(0));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string ptx = Ptx(kernel, "sm_80");
  EXPECT_NE(ptx.find("{200, 200}"), std::string::npos) << ptx;  // u8 200
  EXPECT_NE(ptx.find("], 190;"), std::string::npos) << ptx;  // e5m2 -1.5: 0xbe
}

}  // namespace
}  // namespace tessera
