//===- variables_test.cc - Var, ScalarVar and Require in the frontend -----===//
//
// Builds kernels with block variables and preconditions and checks the IR
// they hold, that every target compiles them, what the compiled kernel
// records for the runtime (each precondition as an expression with the
// author's line), and that misuse is an error in Kernel::status(), never an
// abort.
//
//===----------------------------------------------------------------------===//

#include <string>

#include "frontend/Tessera.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.pb.h"
#include "runtime/launch.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

const char* const kTargets[] = {"sm_60", "sm_70", "sm_80", "sm_90a"};

/// Concatenates the rows of `count` variable-length pieces (lengths in
/// `L`) of X into Y: a running row offset advanced by each piece's length.
Kernel Concat() {
  KernelBuilder T("concat");
  Dim rows = Dim::Dynamic("R"), pieces = Dim::Dynamic("P");
  auto X = T.Tensor("X", {rows, 64}, f32), Y = T.Tensor("Y", {rows, 64}, f32);
  auto L = T.Tensor("L", {pieces}, i32);
  T.Launch({1}, 128, [&](Index) {
    T.Require(X.dim(0) % 8 == 0);
    auto tile = T.AllocFragment({8, 64}, f32, "tile");
    auto row = T.Var(0, "row");
    T.Serial(L.dim(0), [&](Index p) {
      Index length = L(p);
      T.Serial(CeilDiv(length, Index(8)), [&](Index c) {
        T.Copy(X.Tile(Index(row) + c * 8, 0).Until(Index(row) + length), tile);
        T.Copy(tile, Y.Tile(Index(row) + c * 8, 0).Until(Index(row) + length));
      });
      row += length;
    });
  });
  return T.Build();
}

TEST(Variables, EveryTargetCompilesARunningOffset) {
  Kernel kernel = Concat();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  EXPECT_THAT(text, HasSubstr("tile.var %"));
  EXPECT_THAT(text, HasSubstr("tile.var_get"));
  EXPECT_THAT(text, HasSubstr("tile.var_set"));
  EXPECT_THAT(text, HasSubstr("tile.require"));
  for (const char* target : kTargets) EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
}

TEST(Variables, CompiledKernelRecordsPreconditionsWithTheirLine) {
  KernelBuilder T("heads");
  Dim h = Dim::Dynamic("H"), d = Dim::Dynamic("D");
  auto Q = T.Tensor("Q", {h, d}, f32);
  Scalar hkv = T.ScalarArg("Hkv", i32);
  int line = 0;
  T.Launch({1}, 32, [&](Index) {
    line = __LINE__ + 1;
    T.Require(And(Q.dim(0) % ToIndex(hkv) == 0, hkv <= 64));
    T.Require(Q.dim(1) >= 16);
    auto frag = T.AllocFragment({4, 32}, f32);
    T.Clear(frag);
    T.Copy(frag, Q.Tile(0, 0));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  auto compiled = kernel.Compile({"sm_80"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(compiled->preconditions_size(), 2);
  const runtime::Precondition& first = compiled->preconditions(0);
  EXPECT_THAT(first.where(), ::testing::EndsWith("variables_test.cc:" + std::to_string(line)));
  EXPECT_EQ(first.condition().op(), runtime::Expr::OP_AND);
  const runtime::Expr& divides = first.condition().lhs();
  EXPECT_EQ(divides.op(), runtime::Expr::OP_EQ);
  EXPECT_EQ(divides.lhs().op(), runtime::Expr::OP_REM);  // Hkv may be negative: C++'s %
  EXPECT_EQ(divides.lhs().lhs().op(), runtime::Expr::OP_SYMBOL);
  EXPECT_EQ(divides.lhs().lhs().value(), 0);  // H, the first dynamic dimension
  EXPECT_EQ(divides.lhs().rhs().op(), runtime::Expr::OP_PARAM);
  EXPECT_EQ(divides.lhs().rhs().value(), 1);  // Hkv, the second parameter
  EXPECT_EQ(first.condition().rhs().op(), runtime::Expr::OP_LE);
  // D >= 16 is 16 <= D.
  const runtime::Expr& second = compiled->preconditions(1).condition();
  EXPECT_EQ(second.op(), runtime::Expr::OP_LE);
  EXPECT_EQ(second.lhs().op(), runtime::Expr::OP_CONSTANT);
  EXPECT_EQ(second.lhs().value(), 16);
  EXPECT_EQ(second.rhs().op(), runtime::Expr::OP_SYMBOL);
  EXPECT_EQ(second.rhs().value(), 1);
}

TEST(Variables, TheRuntimeRefusesALaunchWhosePreconditionFails) {
  // A precondition on the second tensor's dimension (after a tensor with
  // static and dynamic dimensions) and on a negative-capable scalar: the
  // compiled kernel's check, run by PrepareLaunch without a GPU.
  KernelBuilder T("checked");
  auto A = T.Tensor("A", {Dim(4), Dim::Dynamic("M"), Dim(8)}, f32);
  auto B = T.Tensor("B", {Dim::Dynamic("N"), Dim::Dynamic("K")}, f32);
  Scalar shift = T.ScalarArg("shift", i32);
  T.Launch({1}, 32, [&](Index) {
    T.Require(B.dim(1) % 128 == 0);
    T.Require(ToIndex(shift) % 4 == -3);  // C++'s remainder: true for -3, -7, ...
    auto frag = T.AllocFragment({4, 8}, f32);
    T.Clear(frag);
    T.Copy(frag, A.Tile(0, 0, 0).Along({1, 2}));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  auto compiled = kernel.Compile({"sm_80"});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto launch = [&](int64_t k, int64_t s) {
    std::vector<runtime::KernelArg> args = {
        runtime::TensorArg{0x1000, runtime::DTYPE_F32, {4, 5, 8}},
        runtime::TensorArg{0x2000, runtime::DTYPE_F32, {3, k}}, runtime::ScalarArg::I32(s)};
    return runtime::PrepareLaunch(*compiled, args).status();
  };
  EXPECT_TRUE(launch(256, -3).ok()) << launch(256, -3);
  EXPECT_TRUE(launch(128, -7).ok()) << launch(128, -7);
  absl::Status bad = launch(200, -3);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("precondition K % 128 == 0 (declared at "));
  EXPECT_THAT(bad.message(), HasSubstr("does not hold: K = 200"));
  bad = launch(256, 5);
  EXPECT_THAT(bad.message(), HasSubstr("does not hold: shift = 5"));
}

TEST(Variables, AScalarVarReadInParallelIsReadBeforeTheLoop) {
  KernelBuilder T("scaled");
  auto X = T.Tensor("X", {Dim::Dynamic("N"), 32}, f32);
  T.Launch({1}, 32, [&](Index) {
    auto tile = T.AllocFragment({4, 32}, f32);
    auto scale = T.ScalarVar(1.0, f32, "scale");
    T.Serial(X.dim(0) / 4, [&](Index i) {
      T.Copy(X.Tile(i * 4, 0), tile);
      T.Parallel({4, 32}, [&](Index r, Index c) { tile(r, c) = tile(r, c) * scale; });
      T.Copy(tile, X.Tile(i * 4, 0));
      scale = scale * 2.0;
    });
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  std::string text = kernel.ToString();
  size_t get = text.find("tile.var_get"), loop = text.find("tile.parallel");
  ASSERT_NE(get, std::string::npos) << text;
  EXPECT_LT(get, loop) << text;
  for (const char* target : kTargets) EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
}

TEST(Variables, AnOffsetFromAVarLeavesWarpSpecializationWithARemark) {
  KernelBuilder T("gemm_var");
  Dim m = Dim::Dynamic("M"), n = Dim::Dynamic("N", 8), k = Dim::Dynamic("K", 8);
  auto A = T.Tensor("A", {m, k}, f16), B = T.Tensor("B", {k, n}, f16);
  auto C = T.Tensor("C", {m, n}, f32);
  T.Launch({CeilDiv(n, 128), CeilDiv(m, 128)}, 128, [&](Index bx, Index by) {
    auto As = T.AllocShared({128, 64}, f16), Bs = T.AllocShared({64, 128}, f16);
    auto acc = T.AllocFragment({128, 128}, f32);
    auto row = T.Var(by * 128);
    T.Clear(acc);
    T.Pipelined(CeilDiv(A.dim(1), Index(64)), 3, [&](Index kk) {
      T.Copy(A.Tile(row, kk * 64), As);
      T.Copy(B.Tile(kk * 64, bx * 128), Bs);
      T.Gemm(As, Bs, acc);
    });
    T.Copy(acc, C.Tile(row, bx * 128));
  });
  Kernel kernel = T.Build();
  ASSERT_TRUE(kernel.status().ok()) << kernel.status();
  for (const char* target : kTargets) EXPECT_TRUE(kernel.Compile({target}).ok()) << target;
  auto remarks = kernel.GetRemarks({"sm_90a"});
  ASSERT_TRUE(remarks.ok()) << remarks.status();
  std::string all;
  for (const std::string& line : *remarks) all += line + "\n";
  EXPECT_THAT(all, HasSubstr("not arithmetic of the block coordinates")) << all;
}

/// The status of a one-block kernel whose body is `body`.
std::string Misuse(const std::function<void(KernelBuilder&, Tensor&)>& body) {
  KernelBuilder T("misuse");
  auto X = T.Tensor("X", {Dim::Dynamic("N"), 32}, f32);
  T.Launch({1}, 32, [&](Index) { body(T, X); });
  return std::string(T.Build().status().message());
}

TEST(Variables, MisuseIsAnErrorNamingTheVariable) {
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor&) {
                auto count = T.Var(0, "count");
                T.Parallel({32}, [&](Index i) { count = i; });
              }),
              HasSubstr("assigning variable 'count' inside a Parallel body"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                auto row = T.Var(0, "row");
                auto s = T.AllocShared({4, 32}, f32);
                T.Pipelined(4, 2, [&](Index k) {
                  T.Copy(X.Tile(row, 0), s);
                  row = k;
                });
              }),
              HasSubstr("assigning variable 'row' inside a Pipelined body"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                std::optional<tessera::Var> inner;
                T.Serial(X.dim(0), [&](Index i) { inner.emplace(T.Var(i)); });
                Index leaked = *inner;
                (void)leaked;
              }),
              HasSubstr("outside the If or Serial body that declared the variable"));
  EXPECT_THAT(
      Misuse([](KernelBuilder& T, Tensor&) { T.Parallel({32}, [&](Index i) { (void)T.Var(i); }); }),
      HasSubstr("Var inside a Parallel body"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                auto flag = T.ScalarVar(0, i32);
                flag = ToScalar(X.dim(0), f32);
              }),
              HasSubstr("assigning a scalar of type f32 to a ScalarVar of i32; Cast it"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor&) { (void)T.ScalarVar(0, f16); }),
              HasSubstr("a ScalarVar holds i8, i32, i64, f32 or f64, not f16"));
}

TEST(Variables, APreconditionMustBeTheKernelsAndEvaluable) {
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor&) { T.Require(Index(4) > Index(8)); }),
              HasSubstr("Require of a condition that is always false"));
  EXPECT_THAT(Misuse([](KernelBuilder& T, Tensor& X) {
                T.Serial(X.dim(0), [&](Index) { T.Require(X.dim(0) > 0); });
              }),
              HasSubstr("Require inside a loop or branch"));
  KernelBuilder T("from_data");
  auto table = T.Tensor("table", {Dim::Dynamic("N")}, i32);
  T.Launch({1}, 32, [&](Index) { T.Require(table(0) > 0); });
  EXPECT_THAT(std::string(T.Build().status().message()),
              HasSubstr("cannot evaluate 'tile.read' at launch"));
}

}  // namespace
}  // namespace tessera
