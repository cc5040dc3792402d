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
        EXPECT_NE(ptx.find("atom.global.add.f32"), std::string::npos) << target;
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

TEST(Atomics, AtomicAddInsidePipelinedIsAnError) {
  Kernel kernel = AddRows(f32, /*inPipelined=*/true);
  ASSERT_FALSE(kernel.status().ok());
  EXPECT_NE(std::string(kernel.status().message())
                .find("atomic_add inside tile.pipelined is not supported yet"),
            std::string::npos)
      << kernel.status();
}

}  // namespace
}  // namespace tessera
