//===- workloads_dtypes.cc - Workloads of the data-type kernels -----------===//
//
// This file implements the workloads of the FP8, int8, TF32, f16-accumulate
// and f64 GEMMs, the FP8 GEMM example with per-tensor scales, and the
// element conversions. Inputs are random values of each type's grid (FP8
// drawn as bit patterns of moderate exponents), outputs are poisoned, and
// every checked element is compared with a float64 (integers: exact)
// reference of the exact inputs, within bounds that fit the type: for
// float accumulators u times the sum of the magnitudes of the partial sums
// (the rounding error of any summation order), for TF32 2^-9 of the sum of
// the products' magnitudes (both inputs rounded to 10 mantissa bits), for
// FP8 outputs half an e4m3 ulp of the exact scaled product.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "examples/workloads/internal.h"
#include "runtime/device.h"

namespace tessera::workloads::internal {
namespace {

using runtime::DeviceBuffer;
using runtime::DType;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

/// The value of FP8 bits (e4m3: bias 7, no infinity, NaN 0x7f/0xff; e5m2:
/// bias 15, IEEE-like).
double DecodeFp8(uint8_t bits, bool e5m2) {
  int mantissaBits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  int exponent = (bits >> mantissaBits) & (e5m2 ? 0x1f : 0xf);
  int mantissa = bits & ((1 << mantissaBits) - 1);
  double sign = (bits & 0x80) ? -1.0 : 1.0;
  if (!e5m2 && (bits & 0x7f) == 0x7f) return std::numeric_limits<double>::quiet_NaN();
  if (e5m2 && exponent == 0x1f)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissaBits);
  return sign * std::ldexp((1 << mantissaBits) + mantissa, exponent - bias - mantissaBits);
}

/// The FP8 bits nearest `x` (ties to an even pattern), saturated to the
/// largest finite value: by search over the finite patterns, independent of
/// the kernels' bit arithmetic.
uint8_t EncodeFp8Saturated(double x, bool e5m2) {
  if (std::isnan(x)) return e5m2 ? 0x7e : 0x7f;
  uint8_t best = 0;
  double bestError = std::numeric_limits<double>::infinity();
  for (int bits = 0; bits < 0x80; ++bits) {
    double v = DecodeFp8(uint8_t(bits), e5m2);
    if (!std::isfinite(v)) continue;
    double error = std::fabs(std::fabs(x) - v);
    if (error < bestError || (error == bestError && (bits & 1) == 0)) {
      best = bits;
      bestError = error;
    }
  }
  return uint8_t(best | (x < 0 ? 0x80 : 0));
}

/// What a data-type GEMM reads and writes.
struct TypedGemm {
  DType in, out;
  /// Accumulation: "f32", "f16", "f64", "s32", and TF32 products.
  bool halfAcc = false, tf32 = false;
};

int64_t Bytes(DType t) {
  switch (t) {
    case runtime::DTYPE_F64: return 8;
    case runtime::DTYPE_F32:
    case runtime::DTYPE_I32: return 4;
    case runtime::DTYPE_F16:
    case runtime::DTYPE_BF16: return 2;
    default: return 1;
  }
}

/// A random matrix of `t` (its values exact in double, its device bytes).
struct Matrix {
  std::vector<double> values;
  std::vector<uint8_t> bytes;
  Matrix(DType t, int64_t n, Random& random) : values(n), bytes(n * Bytes(t)) {
    for (int64_t i = 0; i < n; ++i) {
      float u = random.Uniform();
      double v = 0;
      if (t == runtime::DTYPE_F8E4M3 || t == runtime::DTYPE_F8E5M2) {
        // Magnitudes 2^-4 .. 4 with every mantissa, either sign.
        bool e5m2 = t == runtime::DTYPE_F8E5M2;
        int bias = e5m2 ? 15 : 7, shift = e5m2 ? 2 : 3;
        uint32_t r = uint32_t((u + 1.0f) * 0.5f * 16777216.0f);
        uint8_t bits = uint8_t(((bias - 4 + r % 7) << shift) | ((r >> 3) & ((1 << shift) - 1)) |
                               ((r >> 8) & 1 ? 0x80 : 0));
        bytes[i] = bits;
        v = DecodeFp8(bits, e5m2);
      } else if (t == runtime::DTYPE_I8 || t == runtime::DTYPE_U8) {
        int q = int((u + 1.0f) * 128.0f);  // 0 .. 255
        if (q > 255) q = 255;
        int value = t == runtime::DTYPE_I8 ? q - 128 : q;
        bytes[i] = uint8_t(value);
        v = value;
      } else if (t == runtime::DTYPE_F16) {
        uint16_t h = FloatToHalfBits(u);
        std::memcpy(&bytes[2 * i], &h, 2);
        v = HalfBitsToFloat(h);
      } else if (t == runtime::DTYPE_F64) {
        v = double(u) + double(random.Uniform()) * 0x1p-30;  // bits past f32's
        std::memcpy(&bytes[8 * i], &v, 8);
      } else {
        std::memcpy(&bytes[4 * i], &u, 4);
        v = u;
      }
      values[i] = v;
    }
  }
};

double Decode(DType t, const uint8_t* p) {
  switch (t) {
    case runtime::DTYPE_F64: { double d; std::memcpy(&d, p, 8); return d; }
    case runtime::DTYPE_F32: { float f; std::memcpy(&f, p, 4); return f; }
    case runtime::DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case runtime::DTYPE_F16: { uint16_t h; std::memcpy(&h, p, 2); return HalfBitsToFloat(h); }
    case runtime::DTYPE_F8E4M3: return DecodeFp8(*p, false);
    case runtime::DTYPE_F8E5M2: return DecodeFp8(*p, true);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

/// The points a check visits: all of them, or 4096 and the corners.
std::vector<std::pair<int64_t, int64_t>> Points(int64_t m, int64_t n, bool full, uint64_t seed) {
  std::vector<std::pair<int64_t, int64_t>> points;
  if (full) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) points.push_back({i, j});
    return points;
  }
  Random pick(seed + 17);
  for (int s = 0; s < 4096; ++s) points.push_back({pick.Index(m), pick.Index(n)});
  points.push_back({m - 1, n - 1});
  points.push_back({0, n - 1});
  points.push_back({m - 1, 0});
  return points;
}

/// C = A B^T (A: M x K, B: N x K) of a data type, with `scales` (the FP8
/// example: A, B and output scales, e4m3 output) or none.
absl::StatusOr<Report> RunTypedGemm(const LoadedKernel& kernel, int64_t m, int64_t n, int64_t k,
                                    const TypedGemm& type, const std::vector<float>& scales,
                                    bool fullCheck, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  Matrix a(type.in, m * k, random), b(type.in, n * k, random);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(m * n * Bytes(type.out)));
  std::vector<KernelArg> args = {TensorArg{da.ptr(), type.in, {m, k}},
                                 TensorArg{db.ptr(), type.in, {n, k}}};
  for (float s : scales) args.push_back(ScalarArg::F32(s));
  args.push_back(TensorArg{dc.ptr(), type.out, {m, n}});
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dc, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> c(m * n * Bytes(type.out));
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size()));
  bool integer = type.out == runtime::DTYPE_I32;
  bool fp8In = type.in == runtime::DTYPE_F8E4M3 || type.in == runtime::DTYPE_F8E5M2;
  // The accumulation's unit roundoff (FP8 tensor cores add with about 13
  // bits on Hopper), the inputs' (TF32), the output's.
  double uAcc = type.halfAcc ? 0x1p-10 : type.in == runtime::DTYPE_F64 ? 0x1p-50
                : fp8In      ? 0x1p-12
                             : 0x1p-22;
  double uIn = type.tf32 ? 0x1p-9 : 0;
  double uOut = type.out == runtime::DTYPE_F16 ? 0x1p-11 : 0;
  double scale = 1;
  for (float s : scales) scale *= s;
  double errSq = 0, refSq = 0;
  for (auto [i, j] : Points(m, n, fullCheck, options.seed)) {
    double ref = 0, partials = 0, products = 0;
    for (int64_t p = 0; p < k; ++p) {
      double product = a.values[i * k + p] * b.values[j * k + p];
      ref += product;
      partials += std::fabs(ref);
      products += std::fabs(product);
    }
    double got = Decode(type.out, &c[(i * n + j) * Bytes(type.out)]);
    double bound = 0;
    if (!scales.empty()) {
      // e4m3 output: the exact scaled product, saturated, within half an
      // ulp (2^-4 relative; 2^-10 absolute among subnormals) plus the
      // accumulation's error, scaled.
      double exact = std::max(-448.0, std::min(448.0, ref * scale));
      bound = 0x1p-4 * std::fabs(exact) + 0x1p-10 + std::fabs(scale) * uAcc * partials;
      ref = exact;
    } else if (!integer) {
      bound = uAcc * partials + uIn * products + uOut * std::fabs(ref) + 1e-300;
    }
    double err = CheckElement(report, i, j, got, ref, bound);
    errSq += err * err;
    refSq += ref * ref;
  }
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  report.tolerance = integer ? 0 : scales.empty() ? 1e-2 : 0x1p-4;
  report.correct = report.mismatches == 0;
  report.bytes = double(Bytes(type.in)) * (m * k + n * k) + double(Bytes(type.out)) * m * n;
  report.flops = 2.0 * m * n * k;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

/// The per-tensor scales the FP8 example runs with: A's and B's (as a
/// quantizer picks them, inverse to their ranges) and the output's.
const std::vector<float> kFp8Scales = {0.75f, 1.5f, 0.125f};

Workload TypedGemmWorkload(const std::string& kernel, int64_t m, int64_t n, int64_t k,
                           TypedGemm type, std::vector<float> scales, bool conformance,
                           bool benchmark) {
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x", n, "x", k), kernel, conformance,
                      benchmark, [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunTypedGemm(loaded, m, n, k, type, scales, conformance, options);
                      });
}

/// The data-type GEMM kernels (tests/conformance/cases_dtypes.cc and
/// benchmarks/variants.cc build them) and their types.
struct GemmKernel {
  const char* name;
  TypedGemm type;
};
const GemmKernel kGemmKernels[] = {
    {"gemm_e4m3", {runtime::DTYPE_F8E4M3, runtime::DTYPE_F32}},
    {"gemm_e5m2_f16acc", {runtime::DTYPE_F8E5M2, runtime::DTYPE_F16, true}},
    {"gemm_i8", {runtime::DTYPE_I8, runtime::DTYPE_I32}},
    {"gemm_u8", {runtime::DTYPE_U8, runtime::DTYPE_I32}},
    {"gemm_tf32", {runtime::DTYPE_F32, runtime::DTYPE_F32, false, true}},
    {"gemm_f16_f16acc", {runtime::DTYPE_F16, runtime::DTYPE_F16, true}},
    {"gemm_f64", {runtime::DTYPE_F64, runtime::DTYPE_F64}},
};

/// A block-scaled FP8 dot product of `a` and `b` (k values each): the
/// float64 sum over the k-blocks of 128 of their exact products scaled by
/// scale(block), and the slack the kernels' FP8 accumulation and f32
/// promotion add beyond bf16's rounding.
struct ScaledDot {
  double value = 0, slack = 0;
};
template <typename Scale>
ScaledDot BlockScaledDot(const double* a, const double* b, int64_t k, Scale scale) {
  constexpr int64_t kBlock = 128;
  ScaledDot dot;
  for (int64_t blk = 0; blk * kBlock < k; ++blk) {
    double part = 0, partials = 0;
    for (int64_t p = blk * kBlock; p < std::min(k, (blk + 1) * kBlock); ++p) {
      part += a[p] * b[p];
      partials += std::fabs(part);
    }
    double s = scale(blk);
    dot.value += part * s;
    // FP8 tensor cores' accumulation, then the f32 running sum.
    dot.slack += std::fabs(s) * (0x1p-12 * partials) + 0x1p-23 * std::fabs(dot.value);
  }
  return dot;
}

/// A random block scale: 2^-2 .. 2^2 times 1 +- 0.5.
float RandomScale(Random& random) {
  return std::ldexp(1.0f + 0.5f * random.Uniform(), int(random.Index(5)) - 2);
}

/// The block-scaled FP8 GEMM (examples/fp8_gemm_blockwise.cc): A (M x K)
/// and B (N x K) e4m3, SA (K/128 x MP, A's scales transposed, MP = M rounded
/// up to a multiple of 4, the padding poisoned) and SB (N/128 x K/128) f32
/// scales, D bf16: against the float64 sum of each k-block's exact product scaled
/// by its two scales, within bf16's rounding and the f32 partial sums'.
absl::StatusOr<Report> RunFp8Blockwise(const LoadedKernel& kernel, int64_t m, int64_t n,
                                       int64_t k, bool fullCheck, const RunOptions& options) {
  constexpr int64_t kBlock = 128;
  int64_t kb = (k + kBlock - 1) / kBlock, nb = (n + kBlock - 1) / kBlock, mp = (m + 3) / 4 * 4;
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  Matrix a(runtime::DTYPE_F8E4M3, m * k, random), b(runtime::DTYPE_F8E4M3, n * k, random);
  std::vector<float> sa(kb * mp, std::numeric_limits<float>::quiet_NaN()), sb(nb * kb);
  for (int64_t blk = 0; blk < kb; ++blk)
    for (int64_t i = 0; i < m; ++i) sa[blk * mp + i] = RandomScale(random);
  for (float& s : sb) s = RandomScale(random);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dsa, Upload(sa));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dsb, Upload(sb));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dd, DeviceBuffer::Allocate(m * n * 2));
  std::vector<KernelArg> args = {TensorArg{da.ptr(), runtime::DTYPE_F8E4M3, {m, k}},
                                 TensorArg{db.ptr(), runtime::DTYPE_F8E4M3, {n, k}},
                                 TensorArg{dsa.ptr(), runtime::DTYPE_F32, {kb, mp}},
                                 TensorArg{dsb.ptr(), runtime::DTYPE_F32, {nb, kb}},
                                 TensorArg{dd.ptr(), runtime::DTYPE_BF16, {m, n}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dd, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> d(m * n);
  TESSERA_RETURN_IF_ERROR(dd.CopyToHost(d.data(), d.size() * 2));
  double errSq = 0, refSq = 0;
  for (auto point : Points(m, n, fullCheck, options.seed)) {
    const int64_t i = point.first, j = point.second;
    ScaledDot dot = BlockScaledDot(&a.values[i * k], &b.values[j * k], k, [&](int64_t blk) {
      return double(sa[blk * mp + i]) * sb[(j / kBlock) * kb + blk];
    });
    double ref = dot.value, slack = dot.slack;
    uint32_t bits = uint32_t(d[i * n + j]) << 16;
    float got;
    std::memcpy(&got, &bits, 4);
    double err = CheckElement(report, i, j, got, ref, 0x1p-8 * std::fabs(ref) + slack + 1e-30);
    errSq += err * err;
    refSq += ref * ref;
  }
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  report.tolerance = 0x1p-8;
  report.correct = report.mismatches == 0;
  report.bytes = double(m * k + n * k) + 4.0 * (mp + nb) * kb + 2.0 * m * n;
  report.flops = 2.0 * m * n * k;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

/// A block-scaled FP8 grouped problem (examples/grouped_gemm.cc): per group
/// its rows (contiguous: whole 128-row blocks, then `paddingBlocks` blocks of
/// group -1; masked: its count of `maxRows`), N and K.
struct Fp8GroupedProblem {
  std::vector<int64_t> rows;
  int64_t paddingBlocks = 0, maxRows = 0;
  int64_t n = 0, k = 0;
  bool masked = false;
};

/// The grouped FP8 GEMMs against the float64 block-scaled products (as
/// RunFp8Blockwise): contiguous padding blocks must hold zeros, masked rows
/// past a group's count the poison.
absl::StatusOr<Report> RunGroupedFp8(const LoadedKernel& kernel, const Fp8GroupedProblem& p,
                                     bool full, const RunOptions& options) {
  constexpr int64_t kBlock = 128;
  const int64_t groups = p.rows.size(), n = p.n, k = p.k;
  const int64_t kb = (k + kBlock - 1) / kBlock, nb = (n + kBlock - 1) / kBlock;
  Report report;
  report.target = kernel.spec().target();
  std::vector<int32_t> groupOfBlock, counts(p.rows.begin(), p.rows.end());
  for (int64_t g = 0; g < groups && !p.masked; ++g)
    groupOfBlock.insert(groupOfBlock.end(), p.rows[g] / kBlock, int32_t(g));
  groupOfBlock.insert(groupOfBlock.end(), p.masked ? 0 : p.paddingBlocks, -1);
  const int64_t m = p.masked ? groups * p.maxRows : int64_t(groupOfBlock.size()) * kBlock;
  // A row's group and its row within the group's A scales (-1: no group).
  auto groupOf = [&](int64_t row) -> int64_t {
    if (p.masked) return row % p.maxRows < counts[row / p.maxRows] ? row / p.maxRows : -1;
    return groupOfBlock[row / kBlock];
  };
  Random random(options.seed);
  Matrix a(runtime::DTYPE_F8E4M3, m * k, random), b(runtime::DTYPE_F8E4M3, groups * n * k, random);
  // SA: contiguous [KB, M]; masked [G, KB, MAXM] (each group's transposed).
  std::vector<float> sa(kb * m), sb(groups * nb * kb);
  for (float& s : sa) s = RandomScale(random);
  for (float& s : sb) s = RandomScale(random);
  auto scaleA = [&](int64_t row, int64_t blk) {
    return p.masked ? sa[((row / p.maxRows) * kb + blk) * p.maxRows + row % p.maxRows]
                    : sa[blk * m + row];
  };
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dsa, Upload(sa));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dsb, Upload(sb));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dindex, Upload(p.masked ? counts : groupOfBlock));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dd, DeviceBuffer::Allocate(m * n * 2));
  using runtime::DTYPE_F8E4M3;
  std::vector<KernelArg> args;
  if (p.masked) {
    args = {TensorArg{da.ptr(), DTYPE_F8E4M3, {groups, p.maxRows, k}},
            TensorArg{dsa.ptr(), runtime::DTYPE_F32, {groups, kb, p.maxRows}},
            TensorArg{db.ptr(), DTYPE_F8E4M3, {groups, n, k}},
            TensorArg{dsb.ptr(), runtime::DTYPE_F32, {groups, nb, kb}},
            TensorArg{dindex.ptr(), runtime::DTYPE_I32, {groups}},
            TensorArg{dd.ptr(), runtime::DTYPE_BF16, {groups, p.maxRows, n}}};
  } else {
    args = {TensorArg{da.ptr(), DTYPE_F8E4M3, {m, k}},
            TensorArg{dsa.ptr(), runtime::DTYPE_F32, {kb, m}},
            TensorArg{db.ptr(), DTYPE_F8E4M3, {groups, n, k}},
            TensorArg{dsb.ptr(), runtime::DTYPE_F32, {groups, nb, kb}},
            TensorArg{dindex.ptr(), runtime::DTYPE_I32, {int64_t(groupOfBlock.size())}},
            TensorArg{dd.ptr(), runtime::DTYPE_BF16, {m, n}}};
  }
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dd, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> d(m * n);
  TESSERA_RETURN_IF_ERROR(dd.CopyToHost(d.data(), d.size() * 2));
  Random pick(options.seed + 17);
  std::vector<int64_t> columns;
  for (int64_t j = 0; j < n; ++j)
    if (full || j == n - 1 || pick.Index(n) < 24) columns.push_back(j);
  double errSq = 0, refSq = 0;
  for (int64_t row = 0; row < m; row += full ? 1 : 37) {
    const int64_t g = groupOf(row);
    for (int64_t j : columns) {
      double got = Bf16BitsToFloat(d[row * n + j]);
      if (g < 0) {
        // Contiguous padding: zeros; masked rows past the count: unwritten.
        if (p.masked ? !std::isnan(got) : got != 0.0)
          CheckElement(report, row, j, got, p.masked ? NAN : 0.0, 0.0);
        continue;
      }
      ScaledDot dot =
          BlockScaledDot(&a.values[row * k], &b.values[(g * n + j) * k], k, [&](int64_t blk) {
            return double(scaleA(row, blk)) * sb[(g * nb + j / kBlock) * kb + blk];
          });
      double err = CheckElement(report, row, j, got, dot.value,
                                0x1p-8 * std::fabs(dot.value) + dot.slack + 1e-30);
      errSq += err * err;
      refSq += dot.value * dot.value;
    }
  }
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  report.tolerance = 0x1p-8;
  report.correct = report.mismatches == 0;
  const int64_t used = std::accumulate(p.rows.begin(), p.rows.end(), int64_t{0});
  report.flops = 2.0 * used * n * k;
  report.bytes = double(used * k + groups * n * k) + 4.0 * (sa.size() + sb.size()) + 2.0 * used * n;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload GroupedFp8(const Fp8GroupedProblem& p, bool conformance) {
  std::string kernel = p.masked ? "grouped_gemm_fp8_masked" : "grouped_gemm_fp8";
  std::string name =
      p.masked ? absl::StrCat(kernel, "/counts", absl::StrJoin(p.rows, "_"), "_max", p.maxRows)
               : absl::StrCat(kernel, "/rows", absl::StrJoin(p.rows, "_"), "_pad", p.paddingBlocks);
  return MakeWorkload(absl::StrCat(name, "_n", p.n, "_k", p.k), kernel, conformance, !conformance,
                      [p, conformance](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunGroupedFp8(loaded, p, conformance, options);
                      });
}

/// Q = e4m3(1000 X), R = e5m2(1000 X) saturated, Y = f32(Q) + f32(U) for
/// X: f32 [M, 256] and U: u8 [M, 256]: every element exactly against the
/// nearest pattern found by search.
absl::StatusOr<Report> RunCastFp8(const LoadedKernel& kernel, int64_t m,
                                  const RunOptions& options) {
  constexpr int64_t kCols = 256;
  Report report;
  report.target = kernel.spec().target();
  int64_t count = m * kCols;
  Random random(options.seed);
  std::vector<float> x(count);
  std::vector<uint8_t> u(count), q(count), r(count);
  std::vector<float> y(count);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = random.Uniform() * std::ldexp(1.0f, int(random.Index(12)) - 8);
    u[i] = uint8_t(random.Index(256));
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer du, Upload(u));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, DeviceBuffer::Allocate(count));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dr, DeviceBuffer::Allocate(count));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(count * 4));
  TESSERA_RETURN_IF_ERROR(dq.Fill(kPoisonByte));
  TESSERA_RETURN_IF_ERROR(dr.Fill(kPoisonByte));
  TESSERA_RETURN_IF_ERROR(dy.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F32, {m, kCols}},
                                 TensorArg{du.ptr(), runtime::DTYPE_U8, {m, kCols}},
                                 TensorArg{dq.ptr(), runtime::DTYPE_F8E4M3, {m, kCols}},
                                 TensorArg{dr.ptr(), runtime::DTYPE_F8E5M2, {m, kCols}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F32, {m, kCols}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dq.CopyToHost(q.data(), count));
  TESSERA_RETURN_IF_ERROR(dr.CopyToHost(r.data(), count));
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), count * 4));
  for (int64_t e = 0; e < count; ++e) {
    int64_t i = e / kCols, j = e % kCols;
    double scaled = double(x[e]) * 1000.0;
    uint8_t wantQ = EncodeFp8Saturated(scaled, false), wantR = EncodeFp8Saturated(scaled, true);
    // The FP8 bit patterns exactly; Y's value exactly.
    for (auto [got, want, e5m2] : {std::tuple{q[e], wantQ, false}, {r[e], wantR, true}}) {
      ++report.checked;
      if (got == want) continue;
      if (report.mismatches++ == 0)
        report.detail = absl::StrFormat("first mismatch at (%d, %d): %s of %g is 0x%02x, "
                                        "expected 0x%02x",
                                        i, j, e5m2 ? "e5m2" : "e4m3", scaled, got, want);
    }
    CheckElement(report, i, j, y[e], DecodeFp8(wantQ, false) + u[e], 0);
  }
  report.correct = report.mismatches == 0;
  report.bytes = 7.0 * count;
  return report;
}

/// int_bits (tests/conformance/cases_dtypes.cc): bit operations and
/// integer copies on X: i32 [M, 200] (every bit random) and U: u8, every
/// element of Y, W and V exactly against the same operations in uint32.
absl::StatusOr<Report> RunIntBits(const LoadedKernel& kernel, int64_t m,
                                  const RunOptions& options) {
  constexpr int64_t kCols = 200;
  Report report;
  report.target = kernel.spec().target();
  int64_t count = m * kCols;
  Random random(options.seed);
  std::vector<int32_t> x(count), y(count), v(count);
  std::vector<uint8_t> u(count);
  std::vector<int8_t> w(count);
  for (int64_t e = 0; e < count; ++e) {
    x[e] = int32_t(uint32_t(random.Index(1 << 16)) << 16 | uint32_t(random.Index(1 << 16)));
    u[e] = uint8_t(random.Index(256));
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer du, Upload(u));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(count * 4));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dw, DeviceBuffer::Allocate(count));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dv, DeviceBuffer::Allocate(count * 4));
  for (DeviceBuffer* out : {&dy, &dw, &dv}) TESSERA_RETURN_IF_ERROR(out->Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_I32, {m, kCols}},
                                 TensorArg{du.ptr(), runtime::DTYPE_U8, {m, kCols}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_I32, {m, kCols}},
                                 TensorArg{dw.ptr(), runtime::DTYPE_I8, {m, kCols}},
                                 TensorArg{dv.ptr(), runtime::DTYPE_I32, {m, kCols}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), count * 4));
  TESSERA_RETURN_IF_ERROR(dw.CopyToHost(w.data(), count));
  TESSERA_RETURN_IF_ERROR(dv.CopyToHost(v.data(), count * 4));
  for (int64_t e = 0; e < count; ++e) {
    int64_t i = e / kCols, j = e % kCols;
    uint32_t xu = uint32_t(x[e]), s = uint32_t(j % 37);
    uint32_t logical = s >= 32 ? 0 : xu >> s;
    int32_t wantY =
        int32_t((xu << 3) ^ uint32_t(x[e] >> 5)) | int32_t(logical & ~(uint32_t(u[e]) << 4));
    int32_t wantW = std::clamp(x[e] >> 20, -128, 127);
    float f = float(int32_t(u[e] & 7) - 4);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    int32_t wantV = int32_t(bits + uint32_t(wantW));
    for (auto [name, got, want] : {std::tuple<const char*, int64_t, int64_t>{"Y", y[e], wantY},
                                   {"W", w[e], wantW},
                                   {"V", v[e], wantV}}) {
      ++report.checked;
      if (got == want) continue;
      if (report.mismatches++ == 0)
        report.detail = absl::StrFormat("first mismatch at (%d, %d): %s is %d, expected %d", i, j,
                                        name, got, want);
    }
  }
  report.correct = report.mismatches == 0;
  report.bytes = 14.0 * count;
  return report;
}

}  // namespace

std::vector<Workload> DtypeWorkloads() {
  std::vector<Workload> list;
  // Conformance sizes: tails in M, N and K (257 x 200 x 208 against tiles
  // of 64 or 128 and k-tiles of 8 to 128; N a multiple of 8, K of 16).
  for (const GemmKernel& g : kGemmKernels)
    list.push_back(TypedGemmWorkload(g.name, 257, 200, 208, g.type, {}, true, false));
  // More tiles than the H200's 132 SMs, with tails in M and N: persistent
  // blocks with a second tile, whose first leaves through the bulk-store
  // epilogue (4-byte outputs: e4m3 and i8 to f32 and i32, TF32).
  for (int g : {0, 2, 4})
    list.push_back(TypedGemmWorkload(kGemmKernels[g].name, 2100, 2056, 208,
                                     kGemmKernels[g].type, {}, true, false));
  // The FP8 example promises N and K multiples of 16 (16-byte rows of D).
  list.push_back(TypedGemmWorkload("fp8_gemm", 257, 208, 208,
                                   {runtime::DTYPE_F8E4M3, runtime::DTYPE_F8E4M3}, kFp8Scales,
                                   true, false));
  list.push_back(TypedGemmWorkload("fp8_gemm", 2100, 2112, 1424,
                                   {runtime::DTYPE_F8E4M3, runtime::DTYPE_F8E4M3}, kFp8Scales,
                                   true, false));
  for (int64_t size : {4096, 8192})
    list.push_back(TypedGemmWorkload("fp8_gemm", size, size, size,
                                     {runtime::DTYPE_F8E4M3, runtime::DTYPE_F8E4M3}, kFp8Scales,
                                     false, true));
  list.push_back(TypedGemmWorkload("gemm_i8", 4096, 4096, 4096, kGemmKernels[2].type, {}, false,
                                   true));
  list.push_back(TypedGemmWorkload("gemm_tf32", 4096, 4096, 4096, kGemmKernels[4].type, {},
                                   false, true));
  struct Blockwise {
    int64_t m, n, k;
    bool conformance;
  };
  // The last two: the grouped FP8 benchmarks' total sizes (their dense
  // counterparts).
  for (Blockwise s : {Blockwise{257, 208, 400, true}, Blockwise{4096, 4096, 4096, false},
                      Blockwise{8192, 8192, 8192, false}, Blockwise{32768, 4096, 7168, false},
                      Blockwise{1024, 4096, 7168, false}})
    list.push_back(MakeWorkload(
        absl::StrCat("fp8_gemm_blockwise/", s.m, "x", s.n, "x", s.k), "fp8_gemm_blockwise",
        s.conformance, !s.conformance, [s](const LoadedKernel& loaded, const RunOptions& options) {
          return RunFp8Blockwise(loaded, s.m, s.n, s.k, s.conformance, options);
        }));
  // Grouped block-scaled FP8: uneven groups with an empty one and a padding
  // block, one group with every row; masked counts of 0, odd and the
  // maximum; N and K off the scale blocks. Benchmarks at DeepGEMM's shapes
  // (contiguous 4 x 8192 rows, masked 4 x 256; N 4096, K 7168).
  list.push_back(GroupedFp8({{256, 0, 128, 384}, 1, 0, 272, 400, false}, true));
  list.push_back(GroupedFp8({{0, 384, 0}, 0, 0, 144, 272, false}, true));
  list.push_back(GroupedFp8({{0, 200, 77, 1}, 0, 200, 272, 400, true}, true));
  list.push_back(GroupedFp8({std::vector<int64_t>(4, 8192), 0, 0, 4096, 7168, false}, false));
  list.push_back(GroupedFp8({std::vector<int64_t>(4, 256), 0, 256, 4096, 7168, true}, false));
  for (int64_t m : {37, 1001})
    list.push_back(MakeWorkload(absl::StrCat("int_bits/", m, "x200"), "int_bits", true, false,
                                [m](const LoadedKernel& loaded, const RunOptions& options) {
                                  return RunIntBits(loaded, m, options);
                                }));
  for (int64_t m : {37, 1000})
    list.push_back(MakeWorkload(absl::StrCat("cast_fp8/", m, "x256"), "cast_fp8", true, false,
                                [m](const LoadedKernel& loaded, const RunOptions& options) {
                                  return RunCastFp8(loaded, m, options);
                                }));
  return list;
}

std::optional<Workload> DtypeGemmBenchmarkAt(const std::string& kernel, int64_t m, int64_t n,
                                             int64_t k) {
  if (m < 1 || n < 1 || k < 1) return std::nullopt;
  if (kernel == "fp8_gemm")
    return TypedGemmWorkload(kernel, m, n, k, {runtime::DTYPE_F8E4M3, runtime::DTYPE_F8E4M3},
                             kFp8Scales, false, true);
  for (const GemmKernel& g : kGemmKernels)
    if (kernel == g.name) return TypedGemmWorkload(kernel, m, n, k, g.type, {}, false, true);
  return std::nullopt;
}

}  // namespace tessera::workloads::internal
