//===- atomics_test.cc - AtomicAdd through the C++ kernel API -------------===//
//
// Builds kernels that add fragments into tensor tiles with AtomicAdd and
// checks the IR and PTX on every target (an atomic per element, no plain
// store of the tile), the conversions the copy rules allow, and that
// misuse is an error in Kernel::status(), never an abort.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tessera.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

const char* const kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

/// Y[rows of the block] += X * 2, X f32 and Y of `out`, 64 x 64 tiles.
Kernel AddRows(DType out, bool inPipelined = false) {
  KernelBuilder T("add_rows");
  Dim m = Dim::Dynamic("M");
  auto X = T.Tensor("X", {m, 64}, f32), Y = T.Tensor("Y", {m, 64}, out);
  T.Launch({CeilDiv(m, 64)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({64, 64}, f32, "x");
    T.Copy(X.Tile(bx * 64, 0), x);
    T.Parallel({64, 64}, [&](Index i, Index j) { x(i, j) = x(i, j) * 2.0; });
    if (inPipelined)
      T.Pipelined(2, 2, [&](Index) { T.AtomicAdd(x, Y.Tile(bx * 64, 0)); });
    else
      T.AtomicAdd(x, Y.Tile(bx * 64, 0));
  });
  return T.Build();
}

TEST(Atomics, AtomicAddIsAnAtomicPerElementOnEveryTarget) {
  for (DType out : {f32, f16, bf16, f64}) {
    Kernel kernel = AddRows(out);
    ASSERT_TRUE(kernel.status().ok()) << kernel.status();
    EXPECT_NE(kernel.ToString().find("{atomic_add}"), std::string::npos) << kernel.ToString();
    for (const char* target : kTargets) {
      auto compiled = kernel.Compile({target});
      ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
      const std::string& ptx = compiled->ptx();
      if (out == f32) {
        // sm_90a adds each thread's aligned run of f32 with one vector red.
        const char* add = std::string(target) == "sm_90a" ? "red.relaxed.gpu.global.add.v"
                                                          : "atom.global.add.f32";
        EXPECT_NE(ptx.find(add), std::string::npos) << target;
        EXPECT_EQ(ptx.find("st.global"), std::string::npos) << target;
      }
    }
  }
}

TEST(Atomics, AtomicAddIntoAnUnsupportedTypeIsAnError) {
  Kernel kernel = AddRows(i8);
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  EXPECT_NE(message.find("atomic_add into a tensor of 'i8'; atomics add f32, f64, f16, bf16, "
                         "i32 or i64"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("atomics_test.cc:"), std::string::npos) << message;
}

TEST(Atomics, AtomicAddInsidePipelinedCompilesEverywhere) {
  Kernel kernel = AddRows(f32, /*inPipelined=*/true);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char* target : kTargets) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    EXPECT_EQ(compiled->ptx().find("st.global"), std::string::npos) << target;
  }
}

/// H[bin of X[e]] += 1 and M[bin] = max(M[bin], F[e]) per element, the old
/// counts into O.
Kernel Histogram(DType countType) {
  KernelBuilder T("histogram");
  Dim n = Dim::Dynamic("N");
  auto X = T.Tensor("X", {n}, i32), F = T.Tensor("F", {n}, f32);
  auto H = T.Tensor("H", {64}, countType), M = T.Tensor("M", {64}, f32);
  auto O = T.Tensor("O", {n}, countType);
  T.Launch({CeilDiv(n, 256)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({256}, i32, "x"), f = T.AllocFragment({256}, f32, "f");
    auto o = T.AllocFragment({256}, countType, "o");
    T.Copy(X.Tile(bx * 256), x);
    T.Copy(F.Tile(bx * 256), f);
    T.Parallel({256}, [&](Index i) {
      Index bin = ToIndex(x(i) & 63);
      o(i) = T.AtomicAdd(H, {bin}, 1);
      T.AtomicMax(M, {bin}, f(i));
    });
    T.Copy(o, O.Tile(bx * 256));
  });
  return T.Build();
}

TEST(Atomics, ElementAtomicsCompileOnEveryTarget) {
  for (DType count : {i32, f32}) {
    Kernel kernel = Histogram(count);
    ASSERT_TRUE(kernel.status().ok()) << kernel.status();
    std::string text = kernel.ToString();
    EXPECT_NE(text.find("tile.atomic add"), std::string::npos) << text;
    EXPECT_NE(text.find("tile.atomic max"), std::string::npos) << text;
    for (const char* target : kTargets) {
      auto compiled = kernel.Compile({target});
      ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
      EXPECT_NE(compiled->ptx().find("atom.global"), std::string::npos) << target;
    }
  }
}

TEST(Atomics, ElementAtomicMisuseIsAnError) {
  KernelBuilder T("misuse");
  auto H = T.Tensor("H", {Dim(64)}, i32);
  T.Launch({1}, 32, [&](Index bx) {
    T.AtomicAdd(H, {bx}, 1);  // outside a Parallel body
    auto f = T.AllocFragment({32}, f32, "f");
    T.Parallel({32}, [&](Index i) {
      T.AtomicAdd(H, {i}, f(i));           // f32 into i32
      T.AtomicAdd(H, {ToIndex(f(i))}, 1);  // a float as an index
    });
  });
  Kernel kernel = T.Build();
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  for (const char* expected :
       {"AtomicAdd of one element belongs in a Parallel body (a whole tile: AtomicAdd(buffer, "
        "tile))",
        "AtomicAdd of a value of type f32 into a tensor of i32; Cast it",
        "ToIndex of a scalar of type f32; it takes i8, i32 or i64 (Cast first)"})
    EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message;
}

}  // namespace
}  // namespace tessera
