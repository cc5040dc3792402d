//===- workloads.cc - Run, check and time compiled kernels ----------------===//
//
// This file implements the workloads of the example kernels. Inputs are
// random (never zeros), outputs are poisoned with NaN bytes before each run,
// and results are compared with a CPU reference computed in higher
// precision where rounding differs, or exactly where it cannot.
//
//===----------------------------------------------------------------------===//

#include "examples/workloads/workloads.h"
#include "examples/workloads/internal.h"

#include "examples/workloads/attention.h"
#include "examples/workloads/flash_attention.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/autotune.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"

namespace tessera::workloads {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::TensorArg;

namespace internal {

/// A workload whose `run` fills a Report; the workload's name is recorded on
/// the report.
Workload MakeWorkload(std::string name, std::string kernel, bool conformance, bool benchmark,
                      std::function<absl::StatusOr<Report>(const LoadedKernel&,
                                                           const RunOptions&)> run) {
  Workload w;
  w.name = std::move(name);
  w.kernel = std::move(kernel);
  w.conformance = conformance;
  w.benchmark = benchmark;
  w.run = [run = std::move(run), name = w.name](const LoadedKernel& loaded,
                                                const RunOptions& options)
      -> absl::StatusOr<Report> {
    TESSERA_ASSIGN_OR_RETURN(Report report, run(loaded, options));
    report.workload = name;
    return report;
  };
  return w;
}

/// Records one checked element of a 2-D result: a mismatch when the error
/// exceeds `bound` (NaN, e.g. an unwritten poisoned element, never passes).
/// Returns the absolute error.
double CheckElement(Report& report, int64_t i, int64_t j, double got, double ref, double bound) {
  double err = std::isnan(got) ? std::numeric_limits<double>::infinity() : std::fabs(got - ref);
  ++report.checked;
  if (!(err <= bound)) {
    if (report.mismatches == 0)
      report.detail =
          absl::StrFormat("first mismatch at (%d, %d): got %g, expected %g", i, j, got, ref);
    ++report.mismatches;
  }
  return err;
}

/// Tunes over options.tune_candidates when there are any (on these
/// arguments, before the check, unless options.tune_cache already holds a
/// choice: report.chosen and report.tuning say what won and what each
/// took), then poisons `output` and launches the chosen
/// kernel (or `kernel`) once for the check. Returns the kernel it launched.
absl::StatusOr<const LoadedKernel*> TuneAndLaunch(const LoadedKernel& kernel,
                                                  const std::vector<KernelArg>& args,
                                                  const RunOptions& options, DeviceBuffer& output,
                                                  Report& report) {
  const LoadedKernel* chosen = &kernel;
  if (!options.tune_candidates.empty()) {
    runtime::TuneResult tuned;
    runtime::TuneCache scratch;
    runtime::TimingOptions timing = runtime::DefaultTuneTiming();
    timing.stream = options.timing.stream;
    timing.flush_l2 = options.timing.flush_l2;
    timing.sync_each_run = options.timing.sync_each_run;
    TESSERA_ASSIGN_OR_RETURN(
        chosen, runtime::SelectTuned(options.tune_candidates, args, options.device_name,
                                     options.tune_cache ? *options.tune_cache : scratch, timing,
                                     &tuned));
    report.chosen = chosen->entry();
    report.tuning = tuned.trials.empty() ? "(the tuning cache's choice)" : tuned.Summary();
  }
  TESSERA_RETURN_IF_ERROR(output.Fill(kPoisonByte));
  TESSERA_RETURN_IF_ERROR(runtime::Launch(*chosen, args));
  return chosen;
}

/// Times the launch (warm-up, median, L2 flushed) when asked and correct
/// (or asked to time wrong results too).
absl::Status TimeIfAsked(const LoadedKernel& kernel, const std::vector<KernelArg>& args,
                         const RunOptions& options, Report& report) {
  if (!options.time || (!report.correct && !options.time_wrong)) return absl::OkStatus();
  TESSERA_ASSIGN_OR_RETURN(runtime::PackedLaunch packed,
                           runtime::PrepareLaunch(kernel.spec(), args));
  TESSERA_ASSIGN_OR_RETURN(
      report.timing,
      runtime::TimeIt([&] { return runtime::Launch(kernel, packed); }, options.timing));
  return absl::OkStatus();
}

}  // namespace internal

namespace {

using namespace internal;

/// C = A + B in f32: the GPU's add.rn.f32 and the CPU's float addition are
/// both IEEE round-to-nearest, so the check is exact equality.
absl::StatusOr<Report> RunVectorAdd(const LoadedKernel& kernel, int64_t n,
                                    const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  std::vector<float> a(n), b(n), c(n);
  Random random(options.seed);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = random.Uniform();
    b[i] = random.Uniform();
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(n * sizeof(float)));
  std::vector<KernelArg> args = {
      TensorArg{da.ptr(), runtime::DTYPE_F32, {n}},
      TensorArg{db.ptr(), runtime::DTYPE_F32, {n}},
      TensorArg{dc.ptr(), runtime::DTYPE_F32, {n}},
  };
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dc, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), n * sizeof(float)));
  for (int64_t i = 0; i < n; ++i) {
    float expected = a[i] + b[i];
    if (std::memcmp(&c[i], &expected, sizeof(float)) != 0) {
      if (report.mismatches == 0)
        report.detail = absl::StrFormat("first mismatch at %d: got %g, expected %g", i, c[i],
                                        expected);
      ++report.mismatches;
      double error = std::isnan(c[i]) ? std::numeric_limits<double>::infinity()
                                      : std::fabs(double(c[i]) - double(expected));
      report.max_error = std::max(report.max_error, error);
    }
  }
  report.checked = n;
  report.correct = report.mismatches == 0;
  report.tolerance = 0;
  report.bytes = 3.0 * sizeof(float) * n;
  report.flops = n;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload VectorAdd(int64_t n, bool conformance, bool benchmark,
                   const std::string& kernel = "vector_add") {
  return MakeWorkload(absl::StrCat(kernel, "/n=", n), kernel, conformance, benchmark,
                      [n](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunVectorAdd(loaded, n, options);
                      });
}

/// Rounds to the nearest f16 and back (round-to-nearest-even), exactly as
/// the GPU's cvt.f32.f16 of a cvt.rn.f16.f32 does.
float RoundToHalf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  uint32_t sign = bits & 0x80000000u;
  float ax = std::fabs(x);
  if (ax < 6.103515625e-05f) {  // subnormal half: quantum 2^-24
    float q = std::nearbyint(ax * 16777216.0f) / 16777216.0f;
    uint32_t qb;
    std::memcpy(&qb, &q, 4);
    qb |= sign;
    std::memcpy(&q, &qb, 4);
    return q;
  }
  // Keep 10 mantissa bits with round-to-nearest-even.
  uint32_t lsb = (bits >> 13) & 1u;
  bits += 0x0FFFu + lsb;
  bits &= ~0x1FFFu;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

}  // namespace

uint16_t FloatToHalfBits(float x) {
  float r = RoundToHalf(x);
  uint32_t bits;
  std::memcpy(&bits, &r, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = int32_t((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (r == 0) return uint16_t(sign);
  if (exponent <= 0) {  // subnormal
    uint32_t m = (mantissa | 0x800000u) >> (1 - exponent);
    return uint16_t(sign | (m >> 13));
  }
  return uint16_t(sign | (uint32_t(exponent) << 10) | (mantissa >> 13));
}

namespace {

/// Y = 2 X + 1 with X f16 [m, 200] and Y f32: X is exactly representable in
/// f32, so 2x + 1 in f32 on the CPU is the exact expected result.
absl::StatusOr<Report> RunScaleShared2D(const LoadedKernel& kernel, int64_t m,
                                        const RunOptions& options) {
  constexpr int64_t kCols = 200;
  Report report;
  report.target = kernel.spec().target();
  int64_t n = m * kCols;
  std::vector<uint16_t> x(n);
  std::vector<float> xf(n), y(n);
  Random random(options.seed);
  for (int64_t i = 0; i < n; ++i) {
    xf[i] = RoundToHalf(random.Uniform() * 8.0f);
    x[i] = FloatToHalfBits(xf[i]);
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(n * 4));
  TESSERA_RETURN_IF_ERROR(dy.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F16, {m, kCols}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F32, {m, kCols}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), n * 4));
  for (int64_t i = 0; i < n; ++i) {
    float expected = 2.0f * xf[i] + 1.0f;
    if (!(y[i] == expected)) {
      if (report.mismatches == 0)
        report.detail = absl::StrFormat("first mismatch at (%d, %d): got %g, expected %g",
                                        i / kCols, i % kCols, y[i], expected);
      ++report.mismatches;
      report.max_error = std::max(report.max_error,
                                  std::isnan(y[i]) ? std::numeric_limits<double>::infinity()
                                                   : std::fabs(double(y[i]) - expected));
    }
  }
  report.checked = n;
  report.correct = report.mismatches == 0;
  report.bytes = 6.0 * n;
  report.flops = 2.0 * n;
  return report;
}

}  // namespace

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  float result;
  if (exponent == 0) {
    result = std::ldexp(float(mantissa), -24);
  } else if (exponent == 31) {
    result = mantissa ? std::numeric_limits<float>::quiet_NaN()
                      : std::numeric_limits<float>::infinity();
  } else {
    result = std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &result, 4);
  bits |= sign;
  std::memcpy(&result, &bits, 4);
  return result;
}

namespace {

uint16_t FloatToBf16Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even
  return uint16_t(bits >> 16);
}

float Bf16BitsToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// A matrix in one of the GEMM element types, with its exact float values.
struct HostMatrix {
  runtime::DType dtype;
  std::vector<float> values;   // exactly representable in dtype
  std::vector<uint8_t> bytes;  // device representation

  /// Uniform in [-1, 1): drawn in float32 and rounded to `t` (f64 holds
  /// the float32 value exactly); with
  /// `torchStyle` the way `torch.rand(..., dtype=t) * 2 - 1` draws them, a
  /// uniform [0, 1) value rounded to `t` (one that rounds to 1 becomes 0, as
  /// torch's uniform kernel makes it), then scaled and rounded in `t` (the
  /// low mantissa bits of small values are zero), to time our kernels on the
  /// inputs peers.py --inputs=torch gives cuBLAS.
  HostMatrix(runtime::DType t, int64_t n, Random& random, bool torchStyle = false)
      : dtype(t), values(n) {
    bytes.resize(n * ElementBytes());
    for (int64_t i = 0; i < n; ++i) {
      float x = random.Uniform();
      if (torchStyle && (t == runtime::DTYPE_F16 || t == runtime::DTYPE_BF16)) {
        float u = 0.5f * (x + 1.0f);
        u = t == runtime::DTYPE_F16 ? HalfBitsToFloat(FloatToHalfBits(u))
                                    : Bf16BitsToFloat(FloatToBf16Bits(u));
        if (u == 1.0f) u = 0.0f;
        x = 2.0f * u - 1.0f;
      }
      if (t == runtime::DTYPE_F16) {
        uint16_t h = FloatToHalfBits(x);
        values[i] = HalfBitsToFloat(h);
        std::memcpy(&bytes[2 * i], &h, 2);
      } else if (t == runtime::DTYPE_BF16) {
        uint16_t b = FloatToBf16Bits(x);
        values[i] = Bf16BitsToFloat(b);
        std::memcpy(&bytes[2 * i], &b, 2);
      } else if (t == runtime::DTYPE_F64) {
        values[i] = x;
        double d = x;
        std::memcpy(&bytes[8 * i], &d, 8);
      } else {
        values[i] = x;
        std::memcpy(&bytes[4 * i], &x, 4);
      }
    }
  }
  int64_t ElementBytes() const {
    return dtype == runtime::DTYPE_F64 ? 8 : dtype == runtime::DTYPE_F32 ? 4 : 2;
  }
};

double DecodeElement(runtime::DType dtype, const uint8_t* p) {
  if (dtype == runtime::DTYPE_F64) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (dtype == runtime::DTYPE_F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == runtime::DTYPE_F16 ? HalfBitsToFloat(h) : Bf16BitsToFloat(h);
}

/// The fused epilogue a GEMM kernel applies: C = act(A B + bias) (+ R).
enum class Act { kNone, kGeluTanh, kGeluErf, kRelu, kSilu };
struct GemmEpilogue {
  bool bias = false;
  Act act = Act::kNone;
  bool residual = false;
};

/// C = A * B (B is N x K when transposed), with `epilogue` applied: float64
/// reference on the CPU over every element (conformance sizes) or a random
/// sample of 4096 elements (benchmark sizes), relative error bounds fitting
/// the type (f16 output rounding 2^-11, bf16 2^-8, f32 accumulation order).

absl::StatusOr<Report> RunGemm(const LoadedKernel& kernel, int64_t m, int64_t n, int64_t k,
                               runtime::DType dtype, bool transposeB, bool fullCheck,
                               GemmEpilogue epilogue, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix a(dtype, m * k, random, options.torch_inputs),
      b(dtype, k * n, random, options.torch_inputs);
  int64_t eltBytes = a.ElementBytes();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(m * n * eltBytes));
  std::vector<int64_t> bShape = transposeB ? std::vector<int64_t>{n, k}
                                           : std::vector<int64_t>{k, n};
  // The fused epilogue's bias row (C = GELU(A B + bias), tanh form).
  HostMatrix bias(dtype, n, random, options.torch_inputs);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dbias, Upload(bias.bytes));
  std::vector<KernelArg> args = {TensorArg{da.ptr(), dtype, {m, k}},
                                 TensorArg{db.ptr(), dtype, bShape}};
  if (epilogue.bias) args.push_back(TensorArg{dbias.ptr(), dtype, {1, n}});
  // The residual tensor (C = act(A B + bias) + R).
  HostMatrix residual(dtype, epilogue.residual ? m * n : 1, random, options.torch_inputs);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dres, Upload(residual.bytes));
  if (epilogue.residual) args.push_back(TensorArg{dres.ptr(), dtype, {m, n}});
  args.push_back(TensorArg{dc.ptr(), dtype, {m, n}});
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dc, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> c(m * n * eltBytes);
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size()));

  // Which elements to check.
  std::vector<std::pair<int64_t, int64_t>> points;
  if (fullCheck) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) points.push_back({i, j});
  } else {
    Random pick(options.seed + 17);
    for (int s = 0; s < 4096; ++s) points.push_back({pick.Index(m), pick.Index(n)});
    // Always include the corners (tails).
    points.push_back({m - 1, n - 1});
    points.push_back({0, n - 1});
    points.push_back({m - 1, 0});
  }
  // Column j of B starts at bColumns + j * columnStart, its elements
  // bStride apart. A full check reads every column m times: it reads them
  // from a copy with K contiguous (striding B by n made the full checks of
  // the larger conformance cases take tens of seconds); a sampled check
  // reads B in place (a copy would cost more than its 4099 dot products).
  std::vector<float> columns;
  const float* bColumns = b.values.data();
  int64_t columnStart = k, bStride = 1;
  if (!transposeB && fullCheck) {
    columns.resize(b.values.size());
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) columns[j * k + p] = b.values[p * n + j];
    bColumns = columns.data();
  } else if (!transposeB) {
    columnStart = 1, bStride = n;
  }
  double errSq = 0, refSq = 0;
  for (auto [i, j] : points) {
    double ref = 0;
    const float* aRow = &a.values[i * k];
    const float* bColumn = &bColumns[j * columnStart];
    for (int64_t p = 0; p < k; ++p) ref += double(aRow[p]) * double(bColumn[p * bStride]);
    double slack = 0;
    if (epilogue.bias) {
      double v = ref + bias.values[j];
      switch (epilogue.act) {
        case Act::kNone: ref = v; break;
        case Act::kGeluTanh:
          ref = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          slack = 5e-4 * std::fabs(v);  // tanh.approx.f32 (about 2^-11 relative)
          break;
        case Act::kGeluErf: ref = 0.5 * v * (1.0 + std::erf(v * 0.7071067811865476)); break;
        case Act::kRelu: ref = std::max(v, 0.0); break;
        case Act::kSilu: ref = v / (1.0 + std::exp(-v)); break;
      }
      if (epilogue.residual) {
        ref += residual.values[i * n + j];
        slack += 1e-3 * std::fabs(v);  // the f16 rounding of R's addend
      }
    }
    float got = DecodeElement(dtype, &c[(i * n + j) * eltBytes]);
    // Per element: rounding of the output plus accumulation in f32.
    double bound = (dtype == runtime::DTYPE_F32 ? 1e-5 : dtype == runtime::DTYPE_F16 ? 2e-3 : 1e-2) *
                       std::fabs(ref) + 1e-5 * std::sqrt(double(k)) + slack;
    double err = CheckElement(report, i, j, got, ref, bound);
    errSq += err * err;
    refSq += ref * ref;
  }
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  report.tolerance = dtype == runtime::DTYPE_F32 ? 1e-5 : dtype == runtime::DTYPE_F16 ? 1e-3 : 5e-3;
  report.correct = report.mismatches == 0 && (epilogue.bias || report.max_error <= report.tolerance);
  report.bytes = double(eltBytes) * (m * k + k * n + m * n);
  report.flops = 2.0 * m * n * k;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload Gemm(const std::string& kernel, int64_t m, int64_t n, int64_t k, runtime::DType dtype,
              bool transposeB, bool conformance, bool benchmark, GemmEpilogue epilogue = {}) {
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x", n, "x", k), kernel, conformance, benchmark,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunGemm(loaded, m, n, k, dtype, transposeB, conformance, epilogue,
                                       options);
                      });
}

/// O = f16(Q K^T) V (Q, O: M x d; K, V: N x d; f16): every element against
/// float64 with exact S = Q K^T. The kernel rounds S (accumulated in f32)
/// to f16 before the second product, so each term S_ij V_jc may be off by
/// 2^-11 |S_ij V_jc|: the bound is that sum, plus O's own rounding.
absl::StatusOr<Report> RunGemmChain(const LoadedKernel& kernel, int64_t m, int64_t n, int64_t d,
                                    const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  auto f16 = runtime::DTYPE_F16;
  HostMatrix q(f16, m * d, random), k(f16, n * d, random), v(f16, n * d, random);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, Upload(q.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dk, Upload(k.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dv, Upload(v.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(m * d * 2));
  std::vector<KernelArg> args = {
      TensorArg{dq.ptr(), f16, {m, d}}, TensorArg{dk.ptr(), f16, {n, d}},
      TensorArg{dv.ptr(), f16, {n, d}}, TensorArg{dout.ptr(), f16, {m, d}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dout, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> out(m * d * 2);
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(out.data(), out.size()));
  std::vector<double> s(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      s[j] = 0;
      for (int64_t p = 0; p < d; ++p) s[j] += double(q.values[i * d + p]) * k.values[j * d + p];
    }
    for (int64_t c = 0; c < d; ++c) {
      double ref = 0, magnitude = 0;
      for (int64_t j = 0; j < n; ++j) {
        ref += s[j] * v.values[j * d + c];
        magnitude += std::fabs(s[j] * v.values[j * d + c]);
      }
      double got = DecodeElement(f16, &out[(i * d + c) * 2]);
      double bound = std::ldexp(1.0, -11) * (1.2 * magnitude + std::fabs(ref)) + 1e-4;
      report.max_error = std::max(report.max_error, CheckElement(report, i, c, got, ref, bound));
    }
  }
  report.tolerance = 0;
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * (2 * m * d + 2 * n * d);
  report.flops = 4.0 * m * n * d;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload GemmChain(int64_t m, int64_t n) {
  return MakeWorkload(absl::StrCat("gemm_chain_f16/", m, "x", n, "x64"), "gemm_chain_f16", true,
                      false, [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunGemmChain(loaded, m, n, 64, options);
                      });
}

/// C = act(A B + bias) (+ R) at a conformance size and, for `benchmark`,
/// at 2048^3 and 8192^3.
std::vector<Workload> GemmEpilogueWorkloads(const std::string& kernel, Act act, bool residual,
                                            bool benchmark) {
  GemmEpilogue e{true, act, residual};
  std::vector<Workload> list = {
      Gemm(kernel, 257, 392, 136, runtime::DTYPE_F16, false, true, false, e)};
  if (benchmark) {
    list.push_back(Gemm(kernel, 2048, 2048, 2048, runtime::DTYPE_F16, false, false, true, e));
    list.push_back(Gemm(kernel, 8192, 8192, 8192, runtime::DTYPE_F16, false, false, true, e));
  }
  return list;
}

/// Row max, min, sum and sum of absolute values of X: [m, n] (the
/// conformance kernel row_reduce_<type>), against float64 (long double
/// sums, for f64) over every row:
/// max and min exactly; a sum within (ceil(n / 128) + 7) eps of the sum of
/// absolute values (a reduction tree at most that deep: each thread's
/// chunks, five shuffle steps, four warps) plus the output's rounding. The
/// error is reported relative to that sum, as the tolerance.
absl::StatusOr<Report> RunRowReduce(const LoadedKernel& kernel, int64_t m, int64_t n,
                                    runtime::DType dtype, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix x(dtype, m * n, random);
  int64_t eltBytes = x.ElementBytes();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x.bytes));
  std::vector<DeviceBuffer> outs;
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), dtype, {m, n}}};
  for (int k = 0; k < 4; ++k) {
    TESSERA_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Allocate(m * eltBytes));
    TESSERA_RETURN_IF_ERROR(out.Fill(kPoisonByte));
    args.push_back(TensorArg{out.ptr(), dtype, {m}});
    outs.push_back(std::move(out));
  }
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  double eps = dtype == runtime::DTYPE_F64   ? 0x1p-53
               : dtype == runtime::DTYPE_F32 ? 0x1p-24
               : dtype == runtime::DTYPE_F16 ? 0x1p-11
                                             : 0x1p-8;
  double depth = double((n + 127) / 128 + 7);
  std::vector<std::vector<uint8_t>> ys(4, std::vector<uint8_t>(m * eltBytes));
  for (int k = 0; k < 4; ++k)
    TESSERA_RETURN_IF_ERROR(outs[k].CopyToHost(ys[k].data(), ys[k].size()));
  for (int64_t i = 0; i < m; ++i) {
    const float* row = &x.values[i * n];
    double max = -std::numeric_limits<double>::infinity();
    double min = std::numeric_limits<double>::infinity();
    long double exactSum = 0, exactAbs = 0;  // beyond f64's precision for its bound
    for (int64_t j = 0; j < n; ++j) {
      max = std::max(max, double(row[j]));
      min = std::min(min, double(row[j]));
      exactSum += row[j];
      exactAbs += std::fabs(row[j]);
    }
    double sum = double(exactSum), abs = double(exactAbs);
    for (int k = 0; k < 4; ++k) {
      double ref = k == 0 ? max : k == 1 ? min : k == 2 ? sum : abs;
      double bound = k < 2 ? 0 : depth * eps * abs + eps * std::fabs(ref);
      double err =
          CheckElement(report, i, k, DecodeElement(dtype, &ys[k][i * eltBytes]), ref, bound);
      // Reported relative to the sum of absolute values, as the tolerance.
      report.max_error = std::max(report.max_error, err / abs);
    }
  }
  report.tolerance = depth * eps;
  report.correct = report.mismatches == 0;
  report.bytes = double(eltBytes) * (m * n + 4 * m);
  report.flops = 4.0 * m * n;
  return report;
}

Workload RowReduce(runtime::DType dtype, const std::string& type, int64_t m) {
  std::string kernel = "row_reduce_" + type;
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x1000"), kernel, /*conformance=*/true,
                      /*benchmark=*/false,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunRowReduce(loaded, m, 1000, dtype, options);
                      });
}

/// Y = softmax(X) over rows: float64 reference over every row (conformance)
/// or 64 random rows (benchmarks); per element |y - ref| <= rel * ref + abs
/// with bounds for the output type (f16 rounding 2^-11, its subnormal step).
/// The rows a row-wise check visits: all of them, or 64 drawn with `seed`.
std::vector<int64_t> RowsToCheck(int64_t m, bool fullCheck, uint64_t seed) {
  std::vector<int64_t> rows;
  Random pick(seed);
  for (int64_t i = 0; i < (fullCheck ? m : 64); ++i) rows.push_back(fullCheck ? i : pick.Index(m));
  return rows;
}

absl::StatusOr<Report> RunSoftmax(const LoadedKernel& kernel, int64_t m, int64_t n,
                                  runtime::DType dtype, bool fullCheck,
                                  const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix x(dtype, m * n, random);
  int64_t eltBytes = x.ElementBytes();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(x.bytes.size()));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), dtype, {m, n}},
                                 TensorArg{dy.ptr(), dtype, {m, n}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dy, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> y(x.bytes.size());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size()));
  std::vector<int64_t> rows = RowsToCheck(m, fullCheck, options.seed + 5);
  if (!fullCheck) rows.push_back(m - 1);
  double rel = dtype == runtime::DTYPE_F32 ? 1e-5 : dtype == runtime::DTYPE_F16 ? 2e-3 : 1e-2;
  double abs = dtype == runtime::DTYPE_F32 ? 1e-12 : 1e-7;
  for (int64_t i : rows) {
    double max = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < n; ++j) max = std::max(max, double(x.values[i * n + j]));
    for (int64_t j = 0; j < n; ++j) sum += std::exp(double(x.values[i * n + j]) - max);
    for (int64_t j = 0; j < n; ++j) {
      double ref = std::exp(double(x.values[i * n + j]) - max) / sum;
      float got = DecodeElement(dtype, &y[(i * n + j) * eltBytes]);
      double err = CheckElement(report, i, j, got, ref, rel * ref + abs);
      report.max_error = std::max(report.max_error, err / (ref + abs));
    }
  }
  report.tolerance = rel;
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * eltBytes * m * n;
  report.flops = 5.0 * m * n;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

/// RMSNorm (`layer` false) or LayerNorm (`layer` true) of [m, n] rows with
/// weight (and bias) rows; float64 reference over every row (conformance) or
/// 64 rows (benchmarks); per element |y - ref| <= rel |ref| + abs.
absl::StatusOr<Report> RunNorm(const LoadedKernel& kernel, int64_t m, int64_t n,
                               runtime::DType dtype, bool layer, bool fullCheck,
                               const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix x(dtype, m * n, random), w(dtype, n, random), b(dtype, n, random);
  int64_t eltBytes = x.ElementBytes();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dw, Upload(w.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(x.bytes.size()));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), dtype, {m, n}},
                                 TensorArg{dw.ptr(), dtype, {1, n}}};
  if (layer) args.push_back(TensorArg{db.ptr(), dtype, {1, n}});
  args.push_back(TensorArg{dy.ptr(), dtype, {m, n}});
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dy, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint8_t> y(x.bytes.size());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size()));
  std::vector<int64_t> rows = RowsToCheck(m, fullCheck, options.seed + 9);
  double rel = dtype == runtime::DTYPE_F32 ? 1e-5 : dtype == runtime::DTYPE_F16 ? 2e-3 : 1e-2;
  double abs = dtype == runtime::DTYPE_F32 ? 1e-6 : 2e-3;
  for (int64_t i : rows) {
    const float* row = &x.values[i * n];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += row[j];
    mean /= n;
    for (int64_t j = 0; j < n; ++j) {
      double centred = layer ? row[j] - mean : row[j];
      var += centred * centred;
    }
    double scale = 1.0 / std::sqrt(var / n + (layer ? 1e-5 : 1e-6));
    for (int64_t j = 0; j < n; ++j) {
      double ref = ((layer ? row[j] - mean : row[j]) * scale) * w.values[j] +
                   (layer ? b.values[j] : 0.0);
      float got = DecodeElement(dtype, &y[(i * n + j) * eltBytes]);
      double err = CheckElement(report, i, j, got, ref, rel * std::fabs(ref) + abs);
      report.max_error = std::max(report.max_error, err);
    }
  }
  report.tolerance = abs;
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * eltBytes * m * n;
  report.flops = 4.0 * m * n;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload Norm(const std::string& kernel, int64_t m, int64_t n, runtime::DType dtype, bool layer,
              bool conformance, bool benchmark) {
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x", n), kernel, conformance, benchmark,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunNorm(loaded, m, n, dtype, layer, conformance, options);
                      });
}

Workload Softmax(const std::string& kernel, int64_t m, int64_t n, runtime::DType dtype,
                 bool conformance, bool benchmark) {
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x", n), kernel, conformance, benchmark,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunSoftmax(loaded, m, n, dtype, conformance, options);
                      });
}

Workload ScaleShared2D(int64_t m) {
  return MakeWorkload(absl::StrCat("scale_shared_2d/m=", m), "scale_shared_2d",
                      /*conformance=*/true, /*benchmark=*/false,
                      [m](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunScaleShared2D(loaded, m, options);
                      });
}

}  // namespace

double Report::TerabytesPerSecond() const {
  if (!timing || timing->median_ms <= 0) return 0;
  return bytes / (timing->median_ms * 1e-3) / 1e12;
}

const std::vector<Workload>& AllWorkloads() {
  static const auto* workloads = [] {
  auto* list = new std::vector<Workload>{
      // Conformance: a block-multiple length, an odd length (tail inside the
      // last block), a length shorter than one block, and one element.
      VectorAdd(1 << 20, true, false),
      VectorAdd((1 << 20) + 3, true, false),
      VectorAdd(1000, true, false),
      VectorAdd(1, true, false),
      // Benchmarks of the issue: 2^28 and 2^28 - 3 elements.
      VectorAdd(int64_t{1} << 28, false, true),
      VectorAdd((int64_t{1} << 28) - 3, false, true),
      // Conformance-only kernels (tests/conformance/cases.cc).
      VectorAdd(1000003, true, false, "vector_add_static"),
      ScaleShared2D(1000),
      ScaleShared2D(7),
      RowReduce(runtime::DTYPE_F32, "f32", 37),
      RowReduce(runtime::DTYPE_F16, "f16", 37),
      RowReduce(runtime::DTYPE_BF16, "bf16", 37),
      RowReduce(runtime::DTYPE_F64, "f64", 37),
      // GEMM: the example (f16, N and K multiples of 8) and the conformance
      // kernels (bf16, f32, transposed B, and any shape).
      Gemm("gemm_f16", 256, 256, 128, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16", 2048, 2048, 2048, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 4096, 4096, 4096, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 8192, 8192, 8192, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 3000, 5000, 4000, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 8192, 8192, 1000, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_bf16", 257, 392, 136, runtime::DTYPE_BF16, false, true, false),
      Gemm("gemm_bf16", 2048, 2048, 2048, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 4096, 4096, 4096, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 8192, 8192, 8192, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 3000, 5000, 4000, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 8192, 8192, 1000, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_f32", 129, 200, 72, runtime::DTYPE_F32, false, true, false),
      Gemm("gemm_f16_tn", 257, 392, 136, runtime::DTYPE_F16, true, true, false),
      Gemm("gemm_f16_k16", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_k16", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_overhang", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_overhang", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_any", 257, 383, 129, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_any", 1, 1, 1, runtime::DTYPE_F16, false, true, false),
      // A and B in fragments; chained gemms with the intermediate in
      // registers (tails: M, N not multiples of 64).
      // Ping-pong: 3 and 5 tile rows leave the last block one tile.
      Gemm("gemm_f16_pingpong", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_pingpong", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      // Grid launch (sm_90a: the producer leaves before the kernel's code).
      Gemm("gemm_f16_grid", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      // Clusters of two along x: 392 wide is two tiles of 256 (pairs share
      // B), 264 is two with the second at the edge; 3 and 5 tile rows put
      // pairs of other tiles (each loads alone) and padded blocks in.
      Gemm("gemm_f16_grid_mc", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      // Persistent in clusters of two, tiles t and t ^ 1 paired: 6 tiles
      // (fewer than the blocks); 153 (blocks loop, the last tile alone, the
      // last tile row's pairs on two columns); 72.
      Gemm("gemm_f16_persistent_mc", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc", 2100, 2104, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      // Clusters of four: 257 x 392 is 3 tile rows of 2 (no group of four
      // complete on sm_90a: every tile loads alone), 2100 x 2104 153 tiles
      // (blocks loop, the last group short), 1031 x 1800 and 600 x 1000 (B's
      // row pitch of 2000 bytes 16 off a 32-byte sector) mixed groups.
      Gemm("gemm_f16_persistent_mc4", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc4", 2100, 2104, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc4", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc4", 600, 1000, 264, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc_n192", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc_n192", 2100, 2104, 1032, runtime::DTYPE_F16, false, true,
           false),
      Gemm("gemm_f16_persistent_mc_n192", 600, 1000, 264, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 600, 1000, 264, runtime::DTYPE_F16, false, true, false),
      // Persistent: 2100 x 2104 has more tiles than the device holds blocks
      // (17 x 9 of 128 x 256, 17 x 17 of 128 x 128), so blocks loop.
      Gemm("gemm_f16_persistent", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent", 2100, 2104, 136, runtime::DTYPE_F16, false, true, false),
      // Stream-K: 2100 x 2104 leaves a partial wave whose tiles are split
      // over every block (up to seven pieces a tile; with K = 1416 a block's
      // split on sm_90a, 21 of 153 tiles of 128 x 256 over 132 blocks, runs
      // 4 iterations instead of a whole tile's 23, which saves more than its
      // cost model's 14, so it splits there too); 257 x 392 has less than a
      // wave (every tile whole).
      Gemm("gemm_f16_streamk", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk", 2100, 2104, 8, runtime::DTYPE_F16, false, true, false),
      // Stream-K in clusters of two: 2100 x 2104 x 1416 splits (see above)
      // after one whole round that multicasts, 1031 x 1800 x 520 runs 64
      // whole tiles of 128 x 256 (fewer than a wave: none split), pairs and
      // a tile alone.
      Gemm("gemm_f16_streamk_mc", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_mc", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_mc", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      // Clusters of four: on 120 blocks 2100 x 2104 x 1416 runs one whole
      // round (30 groups of four multicast) and splits the other 33 tiles.
      Gemm("gemm_f16_streamk_mc4", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_mc4", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      // The edge loop: M, N and K tails (K = 136 and 1416: 4 and 44 k-tiles
      // of 32 and a tail of 8), N a multiple of 8 only; split tiles.
      Gemm("gemm_f16_edge", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_edge", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_edge", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_edge", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_fragments", 257, 383, 129, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_staged_b", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      // The accumulator through a shared tile (stmatrix on sm_90).
      Gemm("gemm_f16_via_shared", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_via_shared", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      GemmChain(200, 300),
      GemmChain(64, 64),
      GemmChain(1, 1),
      // Softmax: the example (f16 rows of 8192) and row lengths that are not
      // multiples of the tile, several rows per block with a row tail.
      Softmax("softmax_f16", 64, 8192, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f16", 16384, 8192, runtime::DTYPE_F16, false, true),
      Softmax("softmax_f32", 16384, 8192, runtime::DTYPE_F32, false, true),
      Softmax("softmax_f16_32000", 4096, 32000, runtime::DTYPE_F16, false, true),
      Softmax("softmax_f16_32000", 37, 32000, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f16_1000", 65536, 1000, runtime::DTYPE_F16, false, true),
      Softmax("softmax_f16_1000", 37, 1000, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f32_rows4", 37, 1000, runtime::DTYPE_F32, true, false),
      Softmax("softmax_f16_online", 37, 3000, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f16_online_prime", 37, 3001, runtime::DTYPE_F16, true, false),
      // Normalizations.
      Norm("rmsnorm_f16", 37, 8192, runtime::DTYPE_F16, false, true, false),
      Norm("rmsnorm_f16", 16384, 8192, runtime::DTYPE_F16, false, false, true),
      Norm("layernorm_f16", 37, 8192, runtime::DTYPE_F16, true, true, false),
      Norm("layernorm_f16", 16384, 8192, runtime::DTYPE_F16, true, false, true),
      Norm("rmsnorm_f32_1000", 37, 1000, runtime::DTYPE_F32, false, true, false),
  };
  // GEMM with fused epilogues: C = act(A B + bias) (+ R).
  for (auto [kernel, act, residual, benchmark] :
       {std::tuple<const char*, Act, bool, bool>{"gemm_bias_gelu_f16", Act::kGeluTanh, false, true},
        {"gemm_bias_gelu_erf_f16", Act::kGeluErf, false, true},
        {"gemm_bias_relu_f16", Act::kRelu, false, false},
        {"gemm_bias_silu_f16", Act::kSilu, false, true},
        {"gemm_bias_residual_f16", Act::kNone, true, true},
        {"gemm_bias_gelu_f16_pingpong", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_grid", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_grid_mc", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_persistent_mc", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_persistent_mc4", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_grid_mc4", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_persistent_mc_n192", Act::kGeluTanh, false, false}})
    for (Workload& w : GemmEpilogueWorkloads(kernel, act, residual, benchmark))
      list->push_back(std::move(w));
  // Ping-pong with a long K: slot 0's epilogue (its bias tile in shared
  // memory) runs while slot 1's main loop still fills the stages.
  list->push_back(Gemm("gemm_bias_gelu_f16_pingpong", 520, 264, 1032, runtime::DTYPE_F16, false,
                       true, false, GemmEpilogue{true, Act::kGeluTanh, false}));
  // Grid launch, fused: the consumers load the bias row before the main
  // loop while the producer already fills its stages (the bias moved off
  // the stages' bytes).
  list->push_back(Gemm("gemm_bias_gelu_f16_grid", 520, 264, 1032, runtime::DTYPE_F16, false,
                       true, false, GemmEpilogue{true, Act::kGeluTanh, false}));
  // Stream-K, fused: the accumulator starts at the bias row, which the
  // tile's first piece keeps and its later pieces (starting at zero) do not
  // add again; split tiles on every target (see gemm_f16_streamk).
  list->push_back(Gemm("gemm_bias_gelu_f16_streamk", 2100, 2104, 1416, runtime::DTYPE_F16,
                       false, true, false, GemmEpilogue{true, Act::kGeluTanh, false}));
  for (const char* kernel : {"gemm_bias_gelu_f16_edge", "gemm_bias_gelu_f16_streamk_edge",
                             "gemm_bias_gelu_f16_streamk_mc", "gemm_bias_gelu_f16_streamk_mc4"})
    list->push_back(Gemm(kernel, 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false,
                         GemmEpilogue{true, Act::kGeluTanh, false}));
  // Persistent, fused: the next tile's stages fill while the bias tile of
  // this one is read.
  for (const char* kernel : {"gemm_bias_gelu_f16_persistent", "gemm_bias_gelu_f16_persistent_mc",
                             "gemm_bias_gelu_f16_persistent_mc4"})
    list->push_back(Gemm(kernel, 2100, 2104, 264, runtime::DTYPE_F16, false, true, false,
                         GemmEpilogue{true, Act::kGeluTanh, false}));
  for (Workload& w : DtypeWorkloads()) list->push_back(std::move(w));
  for (Workload& w : AttentionWorkloads()) list->push_back(std::move(w));
  for (Workload& w : FlashAttentionWorkloads()) list->push_back(std::move(w));
  return list;
  }();
  return *workloads;
}

std::vector<const Workload*> WorkloadsForKernel(const std::string& kernel) {
  // A tuning variant "vector_add__b4096_t256" runs vector_add's workloads.
  std::string base = kernel.substr(0, kernel.find("__"));
  std::vector<const Workload*> result;
  for (const Workload& w : AllWorkloads())
    if (w.kernel == base) result.push_back(&w);
  return result;
}

std::optional<Workload> GemmBenchmarkAt(const std::string& kernel, int64_t m, int64_t n,
                                        int64_t k) {
  std::string base = kernel.substr(0, kernel.find("__"));
  if (m < 1 || n < 1 || k < 1) return std::nullopt;
  if (base == "gemm_f16") return Gemm(base, m, n, k, runtime::DTYPE_F16, false, false, true);
  if (base == "gemm_bf16") return Gemm(base, m, n, k, runtime::DTYPE_BF16, false, false, true);
  return DtypeGemmBenchmarkAt(base, m, n, k);
}

std::string FormatReport(const Report& r) {
  std::string timing = "-";
  if (r.timing && r.flops > 2 * r.bytes)  // compute-bound: report TFLOP/s
    timing = absl::StrFormat("%.4f ms  %.1f TFLOP/s", r.timing->median_ms,
                             r.flops / (r.timing->median_ms * 1e-3) / 1e12);
  else if (r.timing)
    timing = absl::StrFormat("%.4f ms  %.3f TB/s", r.timing->median_ms, r.TerabytesPerSecond());
  return absl::StrFormat("%-8s %-42s %-4s err %-10.3g (tol %.1g, %d wrong of %d)  %s%s%s%s%s",
                         r.target, r.workload, r.correct ? "ok" : "FAIL", r.max_error,
                         r.tolerance, r.mismatches, r.checked, timing,
                         r.chosen.empty() ? "" : "  tuned: ", r.chosen,
                         r.detail.empty() ? "" : "  ", r.detail);
}

}  // namespace tessera::workloads
