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
#include <functional>
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

/// The host side of a row-wise kernel's run: its input X: [m, n], the
/// [1, n] rows drawn after it (weight, bias) and its outputs, read back.
struct RowData {
  HostMatrix x;
  std::vector<HostMatrix> params;
  std::vector<std::vector<uint8_t>> outputs;
};

/// Runs a row-wise kernel and checks it. Its arguments: X: [m, n] of
/// `dtype` drawn from options.seed, `params` rows [1, n] drawn after it,
/// then one output of `dtype` per shape of `outputShapes`, poisoned
/// (TuneAndLaunch poisons the first, after tuning). Launched (tuned where
/// `options` ask) and read back; `check` compares the outputs with its
/// reference and fills the report's errors, tolerance, bytes and flops.
/// The report is correct without mismatches, and timed where asked.
absl::StatusOr<Report> RunAndCheckRows(const LoadedKernel& kernel, int64_t m, int64_t n,
                                       runtime::DType dtype, int params,
                                       const std::vector<std::vector<int64_t>>& outputShapes,
                                       const RunOptions& options,
                                       const std::function<void(const RowData&, Report&)>& check) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  RowData data{HostMatrix(dtype, m * n, random), {}, {}};
  int64_t eltBytes = data.x.ElementBytes();
  // The arguments, and their device buffers (kept for the timing).
  std::vector<KernelArg> args;
  std::vector<DeviceBuffer> buffers;
  auto pass = [&](DeviceBuffer buffer, std::vector<int64_t> shape) {
    args.push_back(TensorArg{buffer.ptr(), dtype, std::move(shape)});
    buffers.push_back(std::move(buffer));
  };
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(data.x.bytes));
  pass(std::move(dx), {m, n});
  for (int p = 0; p < params; ++p) {
    data.params.emplace_back(dtype, n, random);
    TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dp, Upload(data.params.back().bytes));
    pass(std::move(dp), {1, n});
  }
  size_t firstOutput = buffers.size();
  for (const std::vector<int64_t>& shape : outputShapes) {
    int64_t elements = 1;
    for (int64_t extent : shape) elements *= extent;
    data.outputs.emplace_back(elements * eltBytes);
    TESSERA_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Allocate(elements * eltBytes));
    if (buffers.size() > firstOutput) TESSERA_RETURN_IF_ERROR(out.Fill(kPoisonByte));
    pass(std::move(out), shape);
  }
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, buffers[firstOutput], report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  for (size_t k = 0; k < data.outputs.size(); ++k)
    TESSERA_RETURN_IF_ERROR(
        buffers[firstOutput + k].CopyToHost(data.outputs[k].data(), data.outputs[k].size()));
  check(data, report);
  report.correct = report.mismatches == 0;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
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
  auto check = [&](const RowData& data, Report& report) {
    const HostMatrix& x = data.x;
    int64_t eltBytes = x.ElementBytes();
    double eps = dtype == runtime::DTYPE_F64   ? 0x1p-53
                 : dtype == runtime::DTYPE_F32 ? 0x1p-24
                 : dtype == runtime::DTYPE_F16 ? 0x1p-11
                                               : 0x1p-8;
    double depth = double((n + 127) / 128 + 7);
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
        double got = DecodeElement(dtype, &data.outputs[k][i * eltBytes]);
        double err = CheckElement(report, i, k, got, ref, bound);
        // Reported relative to the sum of absolute values, as the tolerance.
        report.max_error = std::max(report.max_error, err / abs);
      }
    }
    report.tolerance = depth * eps;
    report.bytes = double(eltBytes) * (m * n + 4 * m);
    report.flops = 4.0 * m * n;
  };
  return RunAndCheckRows(kernel, m, n, dtype, /*params=*/0, {{m}, {m}, {m}, {m}}, options,
                         check);
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

/// The rows a row-wise check visits: all of them, or 64 drawn with `seed`.
std::vector<int64_t> RowsToCheck(int64_t m, bool fullCheck, uint64_t seed) {
  std::vector<int64_t> rows;
  Random pick(seed);
  for (int64_t i = 0; i < (fullCheck ? m : 64); ++i) rows.push_back(fullCheck ? i : pick.Index(m));
  return rows;
}

/// Y = softmax(X) over rows: float64 reference over every row (conformance)
/// or 64 random rows (benchmarks); per element |y - ref| <= rel * ref + abs
/// with bounds for the output type (f16 rounding 2^-11, its subnormal step).
absl::StatusOr<Report> RunSoftmax(const LoadedKernel& kernel, int64_t m, int64_t n,
                                  runtime::DType dtype, bool fullCheck,
                                  const RunOptions& options) {
  auto check = [&](const RowData& data, Report& report) {
    const HostMatrix& x = data.x;
    int64_t eltBytes = x.ElementBytes();
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
        float got = DecodeElement(dtype, &data.outputs[0][(i * n + j) * eltBytes]);
        double err = CheckElement(report, i, j, got, ref, rel * ref + abs);
        report.max_error = std::max(report.max_error, err / (ref + abs));
      }
    }
    report.tolerance = rel;
    report.bytes = 2.0 * eltBytes * m * n;
    report.flops = 5.0 * m * n;
  };
  return RunAndCheckRows(kernel, m, n, dtype, /*params=*/0, {{m, n}}, options, check);
}

/// RMSNorm (`layer` false) or LayerNorm (`layer` true) of [m, n] rows with
/// weight (and bias) rows; float64 reference over every row (conformance) or
/// 64 rows (benchmarks); per element |y - ref| <= rel |ref| + abs.
absl::StatusOr<Report> RunNorm(const LoadedKernel& kernel, int64_t m, int64_t n,
                               runtime::DType dtype, bool layer, bool fullCheck,
                               const RunOptions& options) {
  auto check = [&](const RowData& data, Report& report) {
    const HostMatrix& x = data.x;
    const std::vector<float>& w = data.params[0].values;
    int64_t eltBytes = x.ElementBytes();
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
        double ref = ((layer ? row[j] - mean : row[j]) * scale) * w[j] +
                     (layer ? data.params[1].values[j] : 0.0);
        float got = DecodeElement(dtype, &data.outputs[0][(i * n + j) * eltBytes]);
        double err = CheckElement(report, i, j, got, ref, rel * std::fabs(ref) + abs);
        report.max_error = std::max(report.max_error, err);
      }
    }
    report.tolerance = abs;
    report.bytes = 2.0 * eltBytes * m * n;
    report.flops = 4.0 * m * n;
  };
  return RunAndCheckRows(kernel, m, n, dtype, /*params=*/layer ? 2 : 1, {{m, n}}, options, check);
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

namespace {

/// softmax_varlen (examples/softmax_varlen.cc): rows of `lens` packed in X
/// [1, T] f16 (values in [-4, 4)), Cu their cumulative lengths; every
/// element of Y against the float64 softmax of its row, within f16's
/// rounding.
absl::StatusOr<Report> RunSoftmaxVarlen(const LoadedKernel& kernel,
                                        const std::vector<int32_t>& lens, bool benchmark,
                                        const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  std::vector<int32_t> cu(1, 0);
  for (int32_t len : lens) cu.push_back(cu.back() + len);
  int64_t total = cu.back(), rows = lens.size();
  Random random(options.seed);
  std::vector<uint16_t> x(total), y(total);
  std::vector<double> xf(total);
  for (int64_t e = 0; e < total; ++e) {
    x[e] = FloatToHalfBits(random.Uniform() * 4.0f);
    xf[e] = HalfBitsToFloat(x[e]);
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dcu, Upload(cu));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(total * 2));
  TESSERA_RETURN_IF_ERROR(dy.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F16, {1, total}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F16, {1, total}},
                                 TensorArg{dcu.ptr(), runtime::DTYPE_I32, {rows + 1}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), total * 2));
  for (int64_t b = 0; b < rows; ++b) {
    double top = -INFINITY, sum = 0;
    for (int64_t e = cu[b]; e < cu[b + 1]; ++e) top = std::max(top, xf[e]);
    for (int64_t e = cu[b]; e < cu[b + 1]; ++e) sum += std::exp(xf[e] - top);
    for (int64_t e = cu[b]; e < cu[b + 1]; ++e) {
      double ref = std::exp(xf[e] - top) / sum;
      CheckElement(report, b, e - cu[b], HalfBitsToFloat(y[e]), ref, 0x1p-9 * ref + 0x1p-24);
    }
  }
  report.tolerance = 0x1p-9;
  report.correct = report.mismatches == 0;
  report.bytes = 6.0 * total;
  if (benchmark) TESSERA_RETURN_IF_ERROR(TimeIfAsked(kernel, args, options, report));
  return report;
}

}  // namespace

std::vector<Workload> SoftmaxVarlenWorkloads() {
  std::vector<Workload> list;
  // Conformance: rows shorter than a chunk, of one element, empty, several
  // chunks with a partial last one, exactly one chunk.
  list.push_back(
      MakeWorkload("softmax_varlen/conformance", "softmax_varlen", true, false,
                   [](const LoadedKernel& loaded, const RunOptions& options) {
                     return RunSoftmaxVarlen(loaded, {1000, 1, 0, 4500, 2048, 77}, false, options);
                   }));
  // Benchmark: 256 rows of 16k to 48k elements (about 8M, 16 MB of f16).
  list.push_back(MakeWorkload("softmax_varlen/256x16k-48k", "softmax_varlen", false, true,
                              [](const LoadedKernel& loaded, const RunOptions& options) {
                                std::vector<int32_t> lens(256);
                                Random random(options.seed + 3);
                                for (int32_t& len : lens)
                                  len = 16384 + int32_t(random.Index(32769));
                                return RunSoftmaxVarlen(loaded, lens, true, options);
                              }));
  return list;
}

}  // namespace tessera::workloads::internal
