//===- workloads_rows.cc - Row-wise workloads -----------------------------===//
//
// This file implements the workloads of the row-wise kernels: row
// reductions (max, min, sums), softmax, RMSNorm and LayerNorm, each against
// a float64 reference over every row (conformance sizes) or sampled rows
// (benchmark sizes).
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace tessera::workloads::internal {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::TensorArg;

namespace {

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

}  // namespace

Workload RowReduce(runtime::DType dtype, const std::string& type, int64_t m) {
  std::string kernel = "row_reduce_" + type;
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x1000"), kernel, /*conformance=*/true,
                      /*benchmark=*/false,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunRowReduce(loaded, m, 1000, dtype, options);
                      });
}

namespace {

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

}  // namespace

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

}  // namespace tessera::workloads::internal
