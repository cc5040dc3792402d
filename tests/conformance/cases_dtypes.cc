//===- cases_dtypes.cc - Conformance cases of the data types --------------===//
//
// GEMMs of every data type beyond f16/bf16/f32 (C = A B^T with A M x K and
// B N x K, the K-major form 8-bit and TF32 tensor cores read) in each
// target's GEMM schedule, and a kernel of element conversions. Every
// backend runs them all: where a target has no tensor-core atom for a type
// the SIMT atom computes it. Their workloads are in
// examples/workloads/workloads_dtypes.cc.
//
//===----------------------------------------------------------------------===//

#include "examples/gemm.h"
#include "tests/conformance/cases.h"

namespace tessera::conformance {
namespace {

/// Q = e4m3(1000 X), R = e5m2(1000 X) (both saturated), Y = f32(Q) + f32(U)
/// for X: f32 [M, 256] and U: u8 [M, 256], two rows per block.
Kernel CastFp8() {
  constexpr int64_t kRows = 2, kCols = 256;
  Dim m = Dim::Dynamic("M");
  KernelBuilder T("cast_fp8");
  auto X = T.Tensor("X", {m, kCols}, f32), U = T.Tensor("U", {m, kCols}, u8);
  auto Q = T.Tensor("Q", {m, kCols}, f8e4m3), R = T.Tensor("R", {m, kCols}, f8e5m2);
  auto Y = T.Tensor("Y", {m, kCols}, f32);
  T.Launch({CeilDiv(m, kRows)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({kRows, kCols}, f32, "x");
    auto u = T.AllocFragment({kRows, kCols}, u8, "u");
    auto q = T.AllocFragment({kRows, kCols}, f8e4m3, "q");
    auto r = T.AllocFragment({kRows, kCols}, f8e5m2, "r");
    T.Copy(X.Tile(bx * kRows, 0), x);
    T.Copy(U.Tile(bx * kRows, 0), u);
    T.Parallel({kRows, kCols}, [&](Index i, Index j) {
      Scalar scaled = x(i, j) * 1000.0;
      q(i, j) = Cast(scaled, f8e4m3);
      r(i, j) = Cast(scaled, f8e5m2);
      x(i, j) = Cast(q(i, j), f32) + Cast(u(i, j), f32);
    });
    T.Copy(q, Q.Tile(bx * kRows, 0));
    T.Copy(r, R.Tile(bx * kRows, 0));
    T.Copy(x, Y.Tile(bx * kRows, 0));
  });
  return T.Build();
}

}  // namespace

void AddDtypeCases(std::vector<Case>& cases) {
  struct Gemm {
    const char* name;
    DType in, acc, out;
    Precision precision;
  };
  for (Gemm g : {Gemm{"gemm_e4m3", f8e4m3, f32, f32, Precision::kIEEE},
                 {"gemm_e5m2_f16acc", f8e5m2, f16, f16, Precision::kIEEE},
                 {"gemm_i8", i8, i32, i32, Precision::kIEEE},
                 {"gemm_u8", u8, i32, i32, Precision::kIEEE},
                 {"gemm_tf32", f32, f32, f32, Precision::kTF32},
                 {"gemm_f16_f16acc", f16, f16, f16, Precision::kIEEE},
                 {"gemm_f64", f64, f64, f64, Precision::kIEEE}}) {
    cases.push_back({g.name, [g](const std::string& target) {
                       auto c = examples::GemmConfig::ForType(target, g.in, g.acc, g.out,
                                                              g.precision);
                       return examples::Gemm(Dim::Dynamic("M"), Dim::Dynamic("N", 8),
                                             Dim::Dynamic("K", 16), c, g.name);
                     }});
  }
  cases.push_back({"cast_fp8", [](const std::string&) { return CastFp8(); }});
}

}  // namespace tessera::conformance
