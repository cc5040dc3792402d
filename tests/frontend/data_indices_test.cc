//===- data_indices_test.cc - Indices read from tensors -------------------===//
//
// Builds kernels whose tile offsets and loop counts come from integer
// tensors (Tensor::operator()): the IR holds tile.read, the warp-specialized
// schedule survives a read inside the pipelined loop on sm_90a (the page is
// a TMA coordinate), every target compiles, and misuse is an error in
// Kernel::status(), never an abort.
//
//===----------------------------------------------------------------------===//

#include <functional>

#include "frontend/Tessera.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"

namespace tessera {
namespace {

const char* const kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

/// C = A times B's k-tiles picked by Table, the loop count Table's length.
Kernel PagedGemm(int threads) {
  KernelBuilder T("paged_gemm");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8);
  auto A = T.Tensor("A", {m, Dim::Dynamic("K", 8)}, f16);
  auto Bp = T.Tensor("Bp", {Dim::Dynamic("P"), 64, n}, f16);
  auto Table = T.Tensor("Table", {Dim::Dynamic("KT")}, i32);
  auto C = T.Tensor("C", {m, n}, f32);
  T.Launch({CeilDiv(n, 128), CeilDiv(m, 128)}, threads, [&](Index bx, Index by) {
    auto As = T.AllocShared({128, 64}, f16, "As"), Bs = T.AllocShared({64, 128}, f16, "Bs");
    auto acc = T.AllocFragment({128, 128}, f32, "acc");
    T.Clear(acc);
    T.Pipelined(Table.dim(0), 3, [&](Index k) {
      T.Copy(A.Tile(by * 128, k * 64), As);
      T.Copy(Bp.Tile(Table(k), 0, bx * 128).Along({1, 2}), Bs);
      T.Gemm(As, Bs, acc);
    });
    T.Copy(acc, C.Tile(by * 128, bx * 128));
  });
  return T.Build();
}

TEST(DataIndices, ReadsBecomeTileReadAndCompileEverywhere) {
  Kernel kernel = PagedGemm(128);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  EXPECT_NE(kernel.ToString().find("tile.read"), std::string::npos) << kernel.ToString();
  for (const char* target : kTargets) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    EXPECT_NE(compiled->ptx().find("ld.global"), std::string::npos) << target;
  }
}

TEST(DataIndices, ReadInsideThePipelinedLoopKeepsWarpSpecializationOnSm90a) {
  auto tile = PagedGemm(128).GetKernelSource(Stage::kGpu, {"sm_90a"});
  ASSERT_TRUE(tile.ok()) << tile.status();
  auto ptx = PagedGemm(128).Compile({"sm_90a"});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->ptx().find("cp.async.bulk.tensor.3d"), std::string::npos);
  EXPECT_NE(ptx->ptx().find("wgmma.mma_async"), std::string::npos);
}

/// O = Q's rows of sequence b (a packed [tokens, 64] batch, Cu the
/// cumulative lengths) through a pipelined loop of 64-row tiles that end at
/// the sequence's end.
Kernel PackedRows() {
  KernelBuilder T("packed_rows");
  Dim tokens = Dim::Dynamic("T");
  auto Q = T.Tensor("Q", {tokens, 64}, f16), O = T.Tensor("O", {tokens, 64}, f16);
  auto Cu = T.Tensor("Cu", {Dim::Dynamic("B1")}, i32);
  T.Launch({Dim::Dynamic("B1")}, 128, [&](Index b) {
    auto qs = T.AllocShared({64, 64}, f16, "qs");
    Index start = Cu(b), stop = Max(Cu(b + 1), start);
    T.Pipelined(CeilDiv(stop - start, Index(64)), 2, [&](Index r) {
      T.Copy(Q.Tile(start + r * 64, 0).Until(stop), qs);
      T.Copy(qs, O.Tile(start + r * 64, 0).Until(stop));
    });
  });
  return T.Build();
}

TEST(DataIndices, TilesEndAtASequencesEndOnEveryTarget) {
  Kernel kernel = PackedRows();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find(" until "), std::string::npos) << text;
  EXPECT_NE(text.find("arith.maxsi"), std::string::npos) << text;  // values read: signed
  for (const char* target : kTargets) EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
}

/// A kernel whose body reads `read` (returns its first index).
Kernel Reading(const std::function<Index(const Tensor&, const Tensor&, Index)>& read) {
  KernelBuilder T("reading");
  auto I = T.Tensor("I", {Dim::Dynamic("N")}, i32), F = T.Tensor("F", {Dim::Dynamic("N")}, f32);
  auto O = T.Tensor("O", {Dim::Dynamic("N")}, f32);
  T.Launch({1}, 32, [&](Index bx) {
    auto x = T.AllocFragment({32}, f32, "x");
    T.Copy(F.Tile(read(I, F, bx)), x);
    T.Copy(x, O.Tile(0));
  });
  return T.Build();
}

void ExpectError(const Kernel& kernel, const std::string& expected) {
  ASSERT_FALSE(kernel.status().ok());
  std::string message(kernel.status().message());
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_NE(message.find("data_indices_test.cc:"), std::string::npos) << message;
}

/// PackedRows with a grid over (row tiles of the longest sequence, sequences)
/// and `loopOverSize`: a Pipelined loop of CeilDiv(max_len, 64) steps.
Kernel SizedRows(bool loopOverSize) {
  KernelBuilder T("sized_rows");
  Dim tokens = Dim::Dynamic("T"), sequences = Dim::Dynamic("B1");
  auto Q = T.Tensor("Q", {tokens, 64}, f16), O = T.Tensor("O", {tokens, 64}, f16);
  auto Cu = T.Tensor("Cu", {sequences}, i32);
  Dim maxLen = T.SizeArg("max_len");
  T.Launch({CeilDiv(maxLen, 64), sequences}, 128, [&](Index bx, Index b) {
    auto qs = T.AllocShared({64, 64}, f16, "qs");
    Index start = Cu(b), stop = Max(Cu(b + 1), start);
    if (loopOverSize) {
      T.Pipelined(CeilDiv(maxLen, 64), 2, [&](Index r) {
        T.Copy(Q.Tile(start + r * 64, 0).Until(stop), qs);
        T.Copy(qs, O.Tile(start + r * 64, 0).Until(stop));
      });
      return;
    }
    T.Copy(Q.Tile(start + bx * 64, 0).Until(stop), qs);
    T.Copy(qs, O.Tile(start + bx * 64, 0).Until(stop));
  });
  return T.Build();
}

TEST(DataIndices, SizeArgumentsSizeTheGridAndLoops) {
  Kernel kernel = SizedRows(false);
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_NE(text.find("size_args = array<i64: 3>"), std::string::npos) << text;
  EXPECT_NE(text.find("()[s0, s1, s2, s3] -> (s3 ceildiv 64, s2)"), std::string::npos) << text;
  for (const char* target : kTargets) {
    auto compiled = kernel.Compile({target});
    ASSERT_TRUE(compiled.ok()) << target << ": " << compiled.status();
    ASSERT_EQ(compiled->grid_size(), 2);
    EXPECT_EQ(compiled->grid(0).lhs().op(), runtime::Expr::OP_PARAM) << target;
    EXPECT_EQ(compiled->grid(0).lhs().value(), 3) << target;
    EXPECT_EQ(compiled->grid(1).op(), runtime::Expr::OP_SYMBOL) << target;
  }
  Kernel looped = SizedRows(true);
  ASSERT_TRUE(looped.status().ok()) << looped.status();
  for (const char* target : kTargets) EXPECT_TRUE(looped.Compile({target}).ok()) << target;
}

TEST(DataIndices, SizeArgumentMisuseIsAnErrorInKernelStatus) {
  {
    KernelBuilder T("size_as_tensor_dim");
    Dim n = T.SizeArg("N");
    T.Tensor("X", {n}, f32);
    T.Launch({n}, 32, [&](Index) {});
    ExpectError(T.Build(), "tensor 'X' has dimension 'N', which is a size argument (SizeArg)");
  }
  {
    KernelBuilder T("size_clash");
    T.Tensor("X", {Dim::Dynamic("N")}, f32);
    T.SizeArg("N");
    T.Launch({1}, 32, [&](Index) {});
    ExpectError(T.Build(), "size argument 'N' has the name of a tensor dimension");
  }
  {
    KernelBuilder T("unknown_extent");
    T.Tensor("X", {Dim::Dynamic("N")}, f32);
    T.Launch({Dim::Dynamic("M")}, 32, [&](Index) {});
    ExpectError(T.Build(),
                "grid extent uses dimension 'M', which no tensor argument has and no size "
                "argument is");
  }
}

/// The tile IR of a kernel whose body writes `make(bx, value read)` to R.
std::string IndexIr(const std::function<Index(Index, Index)>& make) {
  KernelBuilder T("index_ops");
  auto P = T.Tensor("P", {Dim::Dynamic("N")}, i32);
  auto R = T.Tensor("R", {Dim::Dynamic("N")}, i64);
  T.Launch({Dim::Dynamic("N")}, 32, [&](Index bx) {
    Index result = make(bx, P(bx));
    auto out = T.AllocFragment({1}, i64);
    T.Parallel({1}, [&](Index) { out(0) = ToScalar(result, i64); });
    T.Copy(out, R.Tile(bx));
  });
  Kernel kernel = T.Build();
  EXPECT_TRUE(kernel.status().ok()) << kernel.status();
  return kernel.ToString();
}

TEST(DataIndices, IndexArithmeticIsSignedUnlessBothSidesAreKnownNonNegative) {
  auto has = [](const std::string& ir, const char* op) { return ir.find(op) != std::string::npos; };
  // Block indices, dimensions and their sums: the unsigned instructions.
  std::string ir = IndexIr([](Index bx, Index) { return (bx + 3) / 4 + Min(bx, Index(9)) % 5; });
  EXPECT_TRUE(has(ir, "arith.divui") && has(ir, "arith.minui") && has(ir, "arith.remui")) << ir;
  EXPECT_FALSE(has(ir, "arith.divsi") || has(ir, "arith.minsi") || has(ir, "arith.remsi")) << ir;
  // A value read from memory, or a difference: signed.
  ir = IndexIr([](Index, Index a) { return a / 4 + a % 3 + CeilDiv(a, Index(8)); });
  EXPECT_TRUE(has(ir, "arith.divsi") && has(ir, "arith.remsi") && has(ir, "arith.ceildivsi")) << ir;
  ir = IndexIr([](Index bx, Index a) { return Max(Index(0), bx - a) / 2; });
  EXPECT_TRUE(has(ir, "arith.maxsi") && has(ir, "arith.divui")) << ir;  // the max is >= 0
  ir = IndexIr([](Index bx, Index a) { return Min(bx - 1, a); });
  EXPECT_TRUE(has(ir, "arith.minsi")) << ir;
  // a - Min(a, b) is known non-negative.
  ir = IndexIr([](Index bx, Index) { return (bx - Min(bx, Index(7))) / 2; });
  EXPECT_TRUE(has(ir, "arith.divui")) << ir;
}

TEST(DataIndices, MisuseIsAnErrorInKernelStatus) {
  ExpectError(Reading([](const Tensor&, const Tensor& f, Index b) { return f(b); }),
              "reading an element of tensor 'F' of type f32 as an Index; indices come from "
              "i32 or i64 tensors");
  ExpectError(Reading([](const Tensor& i, const Tensor&, Index b) { return i(b, b); }),
              "reading an element of tensor 'I' of rank 1 with 2 indices");
  KernelBuilder T("in_parallel");
  auto I = T.Tensor("I", {Dim(32)}, i32);
  T.Launch({1}, 32, [&](Index) {
    auto x = T.AllocFragment({32}, f32, "x");
    T.Parallel({32}, [&](Index i) { x(i) = ToScalar(I(i)); });
  });
  ExpectError(T.Build(), "reading an element of tensor 'I' inside a Parallel body");
}

}  // namespace
}  // namespace tessera
