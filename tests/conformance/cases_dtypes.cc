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

/// Bit operations and integer copies, every element exact: for X: i32
/// [M, 200] and U: u8 [M, 200],
///   Y = ((x << 3) ^ (x >> 5)) | (ShiftRightLogical(x, s) & ~(u << 4)), with
///       s = j mod 37 (amounts past 31 give 0),
///   W = i8(saturated x >> 20), V = i32(W) + bits of the f32 of (u & 7) - 4.
/// Columns are not a multiple of the tile's vector (tails) and the copies
/// i32 -> i8 (saturating) and i8 -> i32 (sign-extending) are the copies'.
Kernel IntBits() {
  constexpr int64_t kRows = 2, kCols = 200;
  Dim m = Dim::Dynamic("M");
  KernelBuilder T("int_bits");
  auto X = T.Tensor("X", {m, kCols}, i32), U = T.Tensor("U", {m, kCols}, u8);
  auto Y = T.Tensor("Y", {m, kCols}, i32), W = T.Tensor("W", {m, kCols}, i8);
  auto V = T.Tensor("V", {m, kCols}, i32);
  T.Launch({CeilDiv(m, kRows)}, 128, [&](Index bx) {
    auto x = T.AllocFragment({kRows, kCols}, i32, "x");
    auto u = T.AllocFragment({kRows, kCols}, u8, "u");
    auto y = T.AllocFragment({kRows, kCols}, i32, "y");
    auto w = T.AllocShared({kRows, kCols}, i8, "w");
    auto v = T.AllocFragment({kRows, kCols}, i32, "v");
    T.Copy(X.Tile(bx * kRows, 0), x);
    T.Copy(U.Tile(bx * kRows, 0), u);
    T.Parallel({kRows, kCols}, [&](Index i, Index j) {
      Scalar xi = x(i, j), ui = Cast(u(i, j), i32);
      Scalar s = ToScalar(j % 37, i32);
      y(i, j) = ((xi << 3) ^ (xi >> 5)) | (ShiftRightLogical(xi, s) & ~(ui << 4));
      x(i, j) = xi >> 20;
      v(i, j) = Bitcast(Cast((ui & 7) - 4, f32), i32);
    });
    // x >> 20 lies in [-2048, 2047]: the copy into i8 saturates it.
    T.Copy(x, w);
    T.Copy(w, W.Tile(bx * kRows, 0));
    // Back through a sign-extending copy: V = i32(W) + bits(f32((u & 7) - 4)).
    T.Copy(w, x);
    T.Parallel({kRows, kCols}, [&](Index i, Index j) { v(i, j) = v(i, j) + x(i, j); });
    T.Copy(y, Y.Tile(bx * kRows, 0));
    T.Copy(v, V.Tile(bx * kRows, 0));
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
  cases.push_back({"int_bits", [](const std::string&) { return IntBits(); }});
}

}  // namespace tessera::conformance
