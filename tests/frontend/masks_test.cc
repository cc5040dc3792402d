//===- masks_test.cc - Comparisons, selects and slices in the frontend ----===//
//
// Builds attention-shaped kernels with the frontend: causal masks written as
// comparisons of global indices and Select, loop counts that depend on the
// block index, tiles that are [rows, dim] slices of [batch, seq, heads, dim]
// tensors; and checks that misuse is an error in Kernel::status(), never an
// abort.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tessera.h"

#include <cmath>

#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

const char *const kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

/// Causal scores of a query block against the key blocks up to its
/// diagonal: S = Q Kᵀ masked where the key's position passes the query's,
/// summed over key blocks. Q, K and O are [batch, seq, heads, dim] slices.
Kernel CausalScores(int64_t bm, int64_t bn, int64_t d, int threads) {
  KernelBuilder T("causal_scores");
  Dim batch = Dim::Dynamic("B"), seq = Dim::Dynamic("S"), heads = Dim::Dynamic("H");
  auto Q = T.Tensor("Q", {batch, seq, heads, d}, f16);
  auto K = T.Tensor("K", {batch, seq, heads, d}, f16);
  auto O = T.Tensor("O", {batch, seq, heads, bn}, f32);
  T.Launch({CeilDiv(seq, bm), heads, batch}, threads, [&](Index bx, Index h, Index b) {
    auto Qs = T.AllocShared({bm, d}, f16, "Qs"), Ks = T.AllocShared({bn, d}, f16, "Ks");
    auto s = T.AllocFragment({bm, bn}, f32, "s"), acc = T.AllocFragment({bm, bn}, f32, "acc");
    T.Copy(Q.Tile(b, bx * bm, h, 0).Along({1, 3}), Qs);
    T.Clear(acc);
    // Causal early exit: key blocks up to the query block's last row.
    Index count = Min(CeilDiv((bx + 1) * bm, Index(bn)), CeilDiv(Q.dim(1), Index(bn)));
    T.Pipelined(count, 2, [&](Index k) {
      T.Copy(K.Tile(b, k * bn, h, 0).Along({1, 3}), Ks);
      T.Clear(s);
      T.Gemm(Qs, Ks, s, false, /*transposeB=*/true);
      T.Parallel({bm, bn}, [&](Index i, Index j) {
        Index row = bx * bm + i, col = k * bn + j;
        acc(i, j) = acc(i, j) + Select(col > row, -INFINITY, s(i, j) * ToScalar(row + 1));
      });
    });
    T.Copy(acc, O.Tile(b, bx * bm, h, 0).Along({1, 3}));
  });
  return T.Build();
}

TEST(Masks, CausalMaskBuildsComparisonsAndSelects) {
  Kernel kernel = CausalScores(64, 64, 64, 128);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find("arith.cmpi sgt"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.select"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.sitofp"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor_dims = array<i64: 1, 3>"), std::string::npos) << text;
}

TEST(Masks, CausalKernelCompilesOnEveryTarget) {
  Kernel kernel = CausalScores(64, 64, 64, 128);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char *target : kTargets) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    EXPECT_NE(compiled->ptx().find("selp"), std::string::npos) << target;
  }
}

TEST(Masks, SlicesOfRankFourTensorsUseCpAsyncOnSm80AndTmaOnSm90a) {
  Kernel kernel = CausalScores(64, 64, 64, 128);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  auto sm80 = kernel.Compile({"sm_80"});
  ASSERT_TRUE(sm80.ok()) << sm80.status();
  EXPECT_NE(sm80->ptx().find("cp.async.cg.shared.global"), std::string::npos);
  // sm_90a: a 4-D tensor map whose box is 1 on the fixed axes, one bulk
  // tensor copy per tile with a coordinate per dimension.
  auto sm90a = kernel.Compile({"sm_90a"});
  ASSERT_TRUE(sm90a.ok()) << sm90a.status();
  EXPECT_NE(sm90a->ptx().find("cp.async.bulk.tensor.4d"), std::string::npos);
  EXPECT_EQ(sm90a->ptx().find("cp.async.cg.shared.global"), std::string::npos);
}

/// A GEMM whose loop stops at the block's diagonal (a causal GEMM): its
/// count is index arithmetic of the block index and a dimension.
Kernel TriangularGemm(bool persistent, bool multicast) {
  KernelBuilder T("triangular_gemm");
  Dim m = Dim::Dynamic("M", 8), n = Dim::Dynamic("N", 8), k = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {m, k}, f16), B = T.Tensor("B", {k, n}, f16), C = T.Tensor("C", {m, n}, f16);
  T.Launch({CeilDiv(n, 128), CeilDiv(m, 128)}, 128, [&](Index bx, Index by) {
    if (persistent) T.Persistent();
    if (multicast) T.Multicast();
    auto As = T.AllocShared({128, 64}, f16, "As"), Bs = T.AllocShared({64, 128}, f16, "Bs");
    auto acc = T.AllocFragment({128, 128}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(Min(CeilDiv(A.dim(1), Index(64)), (by + 1) * 2), 4, [&](Index kk) {
      T.Copy(A.Tile(by * 128, kk * 64), As);
      T.Copy(B.Tile(kk * 64, bx * 128), Bs);
      T.Gemm(As, Bs, acc);
    });
    T.Copy(acc, C.Tile(by * 128, bx * 128));
  });
  return T.Build();
}

TEST(Masks, LoopCountOfTheBlockIndexCompilesOnEveryTarget) {
  Kernel kernel = TriangularGemm(false, false);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char *target : kTargets) {
    auto compiled = kernel.Compile({target});
    EXPECT_TRUE(compiled.ok()) << target << ": " << compiled.status();
  }
}

TEST(Masks, LoopCountOfTheBlockIndexKeepsTmaWarpSpecializationOnSm90a) {
  for (bool persistent : {false, true}) {
    auto compiled = TriangularGemm(persistent, false).Compile({"sm_90a"});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_NE(compiled->ptx().find("cp.async.bulk.tensor"), std::string::npos) << persistent;
    EXPECT_NE(compiled->ptx().find("wgmma.mma_async"), std::string::npos) << persistent;
    EXPECT_NE(compiled->ptx().find("mbarrier.try_wait"), std::string::npos) << persistent;
  }
}

TEST(Masks, ComparisonsOfEachScalarType) {
  KernelBuilder T("compare");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  T.Launch({1}, 64, [&](Index) {
    auto x = T.AllocFragment({64}, f32), y = T.AllocFragment({64}, f16);
    auto z = T.AllocFragment({64}, bf16), w = T.AllocFragment({64}, i32);
    T.Copy(A.Tile(0), x);
    T.Parallel({64}, [&](Index i) {
      y(i) = Cast(x(i), f16);
      z(i) = Cast(x(i), bf16);
      w(i) = Cast(x(i), i32);
      Scalar all = And(And(x(i) < 1.0, y(i) <= Cast(Scalar(2.0), f16)),
                       Or(z(i) >= Cast(x(i), bf16), Not(w(i) == 3.0)));
      x(i) = Select(And(all, i != Index(0)), x(i), ToScalar(i) + 0.5);
      w(i) = Select(w(i) > 0.0, w(i), ToScalar(i, i32));
    });
    T.Copy(x, A.Tile(0));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  for (const char *what : {"arith.cmpf olt", "arith.cmpf ole", "arith.cmpf oge", "arith.cmpi eq",
                           "arith.cmpi ne", "arith.cmpi sgt", "arith.andi", "arith.ori",
                           "arith.xori", ": f16", ": bf16", "arith.index_cast"})
    EXPECT_NE(text.find(what), std::string::npos) << what << "\n" << text;
  for (const char *target : kTargets)
    EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
}

TEST(Masks, ConstantComparisonsFold) {
  EXPECT_EQ((Index(3) < Index(4)).constant(), 1.0);
  EXPECT_EQ((Scalar(3.0) != Scalar(3.0)).constant(), 0.0);
  EXPECT_EQ(Select(Index(2) >= Index(2), 7.0, 8.0).constant(), 7.0);
  EXPECT_EQ(ToScalar(Index(5)).constant(), 5.0);
}

TEST(Masks, IndexZeroIsTheConstantZero) {
  Index zero(0);
  EXPECT_EQ(zero.handle(), nullptr);
  EXPECT_EQ(zero.constant(), 0);
  EXPECT_EQ(Index(0).constant(), 0);
}

void ExpectError(const Kernel &kernel, const std::string &what) {
  ASSERT_FALSE(kernel.status().ok());
  EXPECT_NE(std::string(kernel.status().message()).find(what), std::string::npos)
      << kernel.status();
}

TEST(Masks, ComparingScalarsOfTwoTypesIsAnErrorAtTheAuthorsLine) {
  KernelBuilder T("mixed");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  int line = 0;
  T.Launch({1}, 64, [&](Index) {
    auto x = T.AllocFragment({64}, f32), y = T.AllocFragment({64}, f16);
    T.Copy(A.Tile(0), x);
    line = __LINE__ + 1;
    T.Parallel({64}, [&](Index i) { x(i) = Select(x(i) < y(i), x(i), 0.0); });
    T.Copy(x, A.Tile(0));
  });
  Kernel kernel = T.Build();
  ExpectError(kernel, "masks_test.cc:" + std::to_string(line));
  ExpectError(kernel, "comparing (<) scalars of types f32 and f16; Cast one");
}

TEST(Masks, SelectOfTwoTypesOrOfANumberIsAnError) {
  KernelBuilder T("select");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  T.Launch({1}, 64, [&](Index) {
    auto x = T.AllocFragment({64}, f32), y = T.AllocFragment({64}, f16);
    T.Copy(A.Tile(0), x);
    T.Parallel({64}, [&](Index i) {
      x(i) = Select(x(i) > 0.0, x(i), y(i));
      x(i) = Select(x(i), x(i), 1.0);
    });
    T.Copy(x, A.Tile(0));
  });
  Kernel kernel = T.Build();
  ExpectError(kernel, "Select's branches have types f32 and f16; Cast one");
  ExpectError(kernel, "Select's condition takes a boolean (a comparison), not a scalar of type f32");
}

TEST(Masks, ArithmeticOutsideLaunchIsAnErrorNotAnAbort) {
  Index outside(0);
  Scalar value(0.0), positive(0.0);
  KernelBuilder T("outside");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  T.Launch({1}, 64, [&](Index bx) {
    outside = bx;
    auto x = T.AllocFragment({64}, f32);
    T.Copy(A.Tile(0), x);
    T.Parallel({64}, [&](Index i) {
      value = x(i);
      positive = x(i) > 0.0;
    });
    T.Copy(x, A.Tile(0));
  });
  Index escaped = outside * 2;
  Scalar compared = value < 1.0;
  Scalar selected = Select(positive, value, 2.0);
  (void)compared;
  (void)escaped;
  (void)selected;
  (void)A.dim(0);
  Kernel kernel = T.Build();
  ExpectError(kernel, "Index * is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Scalar < is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Select is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Tensor::dim is only valid inside KernelBuilder::Launch's body");
}

TEST(Masks, StatementsOutsideLaunchAreErrorsNotAborts) {
  KernelBuilder T("early");
  auto A = T.Tensor("A", {Dim(64)}, f32);
  auto x = T.AllocFragment({64}, f32);
  T.Copy(A.Tile(0), x);
  T.Launch({1}, 64, [&](Index) { T.Copy(x, A.Tile(0)); });
  Kernel kernel = T.Build();
  ExpectError(kernel, "AllocFragment is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Copy is only valid inside KernelBuilder::Launch's body");
  ExpectError(kernel, "Copy uses a buffer that was not allocated inside Launch's body");
}

TEST(Masks, ArithmeticWithNoBuilderIsReportedByTheNextOne) {
  Scalar escaped(0.0);
  {
    KernelBuilder T("first");
    auto A = T.Tensor("A", {Dim(64)}, f32);
    T.Launch({1}, 64, [&](Index) {
      auto x = T.AllocFragment({64}, f32);
      T.Copy(A.Tile(0), x);
      T.Parallel({64}, [&](Index i) { escaped = x(i); });
    });
    ASSERT_TRUE(T.Build().status().ok());
  }
  (void)Exp(escaped);
  KernelBuilder T("second");
  T.Launch({1}, 32, [&](Index) {});
  ExpectError(T.Build(), "Exp is only valid inside KernelBuilder::Launch's body");
}

TEST(Masks, SliceWithoutAlongIsAVerifierError) {
  KernelBuilder T("slice");
  auto Q = T.Tensor("Q", {Dim(2), Dim(128), Dim(4), Dim(64)}, f16);
  T.Launch({1}, 128, [&](Index) {
    auto Qs = T.AllocShared({64, 64}, f16, "Qs");
    T.Copy(Q.Tile(0, 0, 1, 0), Qs);
  });
  ExpectError(T.Build(), "tensor_dims names the dimensions a slice spans");
}

TEST(Masks, SliceMustSpanTheInnermostDimension) {
  KernelBuilder T("slice");
  auto Q = T.Tensor("Q", {Dim(2), Dim(128), Dim(4), Dim(64)}, f16);
  T.Launch({1}, 128, [&](Index) {
    auto Qs = T.AllocShared({64, 4}, f16, "Qs");
    T.Copy(Q.Tile(0, 0, 0, 1).Along({1, 2}), Qs);
  });
  ExpectError(T.Build(), "tensor_dims must span the source tensor's innermost dimension");
}

} // namespace
} // namespace tessera
