//===- workloads_elementwise.cc - Elementwise and copy workloads ----------===//
//
// This file implements the workloads of vector_add (exact f32 addition) and
// the conformance kernel scale_shared_2d (an exact affine map of f16
// inputs through shared memory).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "absl/strings/match.h"
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

}  // namespace

Workload VectorAdd(int64_t n, bool conformance, bool benchmark,
                   const std::string& kernel) {
  return MakeWorkload(absl::StrCat(kernel, "/n=", n), kernel, conformance, benchmark,
                      [n](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunVectorAdd(loaded, n, options);
                      });
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

Workload ScaleShared2D(int64_t m) {
  return MakeWorkload(absl::StrCat("scale_shared_2d/m=", m), "scale_shared_2d",
                      /*conformance=*/true, /*benchmark=*/false,
                      [m](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunScaleShared2D(loaded, m, options);
                      });
}

namespace {

/// paged_gather (examples/paged_gather.cc): Pool [pages, 16, 128] f16,
/// Table [batch, maxPages] i32 (a random permutation of the pool's pages;
/// entries past a sequence's pages are -1 and never read), Lens [batch];
/// every row r < Lens[b] of Out [batch, maxPages * 16, 128] exactly equals
/// Pool's row (bits), the other rows of Out are not checked.
absl::StatusOr<Report> RunPagedGather(const LoadedKernel& kernel, std::vector<int32_t> lens,
                                      int64_t maxPages, bool benchmark, const RunOptions& options) {
  constexpr int64_t kPage = 16, kDim = 128;
  Report report;
  report.target = kernel.spec().target();
  int64_t batch = lens.size(), seq = maxPages * kPage, pages = batch * maxPages + 3;
  Random random(options.seed);
  std::vector<uint16_t> pool(pages * kPage * kDim);
  for (uint16_t& x : pool) x = FloatToHalfBits(random.Uniform());
  std::vector<int32_t> order(pages);
  for (int64_t p = 0; p < pages; ++p) order[p] = int32_t(p);
  for (int64_t p = pages - 1; p > 0; --p) std::swap(order[p], order[random.Index(p + 1)]);
  std::vector<int32_t> table(batch * maxPages, -1);
  for (int64_t b = 0, next = 0; b < batch; ++b)
    for (int64_t k = 0; k < (lens[b] + kPage - 1) / kPage; ++k)
      table[b * maxPages + k] = order[next++];
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dpool, Upload(pool));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dtable, Upload(table));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlens, Upload(lens));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(batch * seq * kDim * 2));
  TESSERA_RETURN_IF_ERROR(dout.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dpool.ptr(), runtime::DTYPE_F16, {pages, kPage, kDim}},
                                 TensorArg{dtable.ptr(), runtime::DTYPE_I32, {batch, maxPages}},
                                 TensorArg{dlens.ptr(), runtime::DTYPE_I32, {batch}},
                                 TensorArg{dout.ptr(), runtime::DTYPE_F16, {batch, seq, kDim}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> out(batch * seq * kDim);
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(out.data(), out.size() * 2));
  int64_t rows = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < lens[b]; ++r, ++rows) {
      const uint16_t* want = &pool[(table[b * maxPages + r / kPage] * kPage + r % kPage) * kDim];
      const uint16_t* got = &out[(b * seq + r) * kDim];
      report.checked += kDim;
      for (int64_t c = 0; c < kDim; ++c) {
        if (got[c] == want[c]) continue;
        if (report.mismatches++ == 0)
          report.detail = absl::StrFormat(
              "first mismatch at sequence %d row %d column %d: "
              "0x%04x, expected 0x%04x",
              b, r, c, got[c], want[c]);
      }
    }
  report.correct = report.mismatches == 0;
  // The rows gathered, read and written once.
  report.bytes = 4.0 * rows * kDim;
  if (benchmark) TESSERA_RETURN_IF_ERROR(TimeIfAsked(kernel, args, options, report));
  return report;
}

/// control_flow (tests/conformance/cases_core.cc): X f32 [M, L]; Y doubles
/// the even 256-column chunks and negates the odd ones (exact), S[r] is
/// Y's row sum plus 1, times 10 in block 0 (rows 0-3), within f32
/// summation's bound.
absl::StatusOr<Report> RunControlFlow(const LoadedKernel& kernel, int64_t m, int64_t l,
                                      const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<float> x(m * l), y(m * l), s(m);
  for (float& v : x) v = random.Uniform();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(m * l * 4));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer ds, DeviceBuffer::Allocate(m * 4));
  TESSERA_RETURN_IF_ERROR(dy.Fill(kPoisonByte));
  TESSERA_RETURN_IF_ERROR(ds.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F32, {m, l}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F32, {m, l}},
                                 TensorArg{ds.ptr(), runtime::DTYPE_F32, {m}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size() * 4));
  TESSERA_RETURN_IF_ERROR(ds.CopyToHost(s.data(), s.size() * 4));
  for (int64_t i = 0; i < m; ++i) {
    double sum = 0, magnitude = 1;
    for (int64_t j = 0; j < l; ++j) {
      double want = (j / 256) % 2 == 0 ? 2.0 * x[i * l + j] : -double(x[i * l + j]);
      CheckElement(report, i, j, y[i * l + j], want, 0);
      sum += want;
      magnitude += std::fabs(want);
    }
    double scale = i < 4 ? 10 : 1;
    CheckElement(report, i, l, s[i], (sum + 1) * scale, 0x1p-20 * magnitude * scale);
  }
  report.correct = report.mismatches == 0;
  return report;
}

/// histogram (tests/conformance/cases_core.cc): X i32 and F f32 [N], H
/// and M [256] starting at random counts and values. Exactly: H[b] =
/// H0[b] + count of bin b; M[b] = max(M0[b], F over bin b); and each bin's
/// O values (the counts the atomics returned) are H0[b] .. H[b] - 1, each
/// once.
absl::StatusOr<Report> RunHistogram(const LoadedKernel& kernel, int64_t n,
                                    const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<int32_t> x(n), h0(256), h(256), o(n);
  std::vector<float> f(n), m0(256), m(256);
  for (int64_t e = 0; e < n; ++e) {
    x[e] = int32_t(random.Index(1 << 20)) - (1 << 19);
    f[e] = random.Uniform() * 100.0f;
  }
  for (int b = 0; b < 256; ++b) {
    h0[b] = int32_t(random.Index(1000));
    m0[b] = random.Uniform() * 100.0f;
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer df, Upload(f));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dh, Upload(h0));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dm, Upload(m0));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(n * 4));
  TESSERA_RETURN_IF_ERROR(dout.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_I32, {n}},
                                 TensorArg{df.ptr(), runtime::DTYPE_F32, {n}},
                                 TensorArg{dh.ptr(), runtime::DTYPE_I32, {256}},
                                 TensorArg{dm.ptr(), runtime::DTYPE_F32, {256}},
                                 TensorArg{dout.ptr(), runtime::DTYPE_I32, {n}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dh.CopyToHost(h.data(), 256 * 4));
  TESSERA_RETURN_IF_ERROR(dm.CopyToHost(m.data(), 256 * 4));
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(o.data(), n * 4));
  std::vector<int32_t> count(256, 0);
  std::vector<float> top(m0);
  std::vector<std::vector<int32_t>> seen(256);
  for (int64_t e = 0; e < n; ++e) {
    int b = x[e] & 255;
    ++count[b];
    top[b] = std::max(top[b], f[e]);
    seen[b].push_back(o[e]);
  }
  for (int b = 0; b < 256; ++b) {
    CheckElement(report, b, 0, h[b], h0[b] + count[b], 0);
    CheckElement(report, b, 1, m[b], top[b], 0);
    std::sort(seen[b].begin(), seen[b].end());
    for (int32_t k = 0; k < count[b]; ++k) CheckElement(report, b, 2 + k, seen[b][k], h0[b] + k, 0);
  }
  report.correct = report.mismatches == 0;
  return report;
}

/// Rows past a tensor's end that a run allocates, poisons and checks
/// stay poisoned (a block's last rows must not be written).
constexpr int64_t kPadRows = 4;

/// Counts each of `count` elements at `data` (rows past `row`) that is not
/// the poison bytes as a mismatch.
template <typename T>
void CheckPoisoned(Report& report, const T* data, int64_t count, int64_t row) {
  T poison;
  std::memset(&poison, kPoisonByte, sizeof(T));
  for (int64_t e = 0; e < count; ++e)
    if (std::memcmp(&data[e], &poison, sizeof(T)) != 0)
      CheckElement(report, row, e, double(data[e]), std::nan(""), 0);
}

/// pack_varlen (tests/conformance/cases_core.cc): X f32 [B, S, D], L i32
/// [B] (random lengths in [0, S], one 0, one past S: clamped to S). Y [T, D] (T = the total
/// plus 3) gets batch b's first L[b] rows times Scale^b, exact up to one
/// f32 rounding of the weight's product; Y's last 3 rows stay poisoned. A
/// D that is not a multiple of 4 must be refused at launch, naming D.
absl::StatusOr<Report> RunPackVarlen(const LoadedKernel& kernel, int64_t batches, int64_t s,
                                     int64_t d, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<int32_t> lengths(batches);
  int64_t total = 0;
  for (int64_t b = 0; b < batches; ++b) {
    // One empty batch; one longer than S (the kernel clamps it to S).
    lengths[b] = b == 1 ? 0 : b == 2 ? int32_t(s + 5) : int32_t(random.Index(s + 1));
    total += std::min<int64_t>(lengths[b], s);
  }
  const int64_t rows = total + 3;
  const float scale = 1.5f;
  std::vector<float> x(batches * s * d), y(rows * d);
  for (float& v : x) v = random.Uniform();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dl, Upload(lengths));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(rows * d * 4));
  TESSERA_RETURN_IF_ERROR(dy.Fill(kPoisonByte));
  auto args = [&](int64_t width) {
    return std::vector<KernelArg>{TensorArg{dx.ptr(), runtime::DTYPE_F32, {batches, s, width}},
                                  TensorArg{dl.ptr(), runtime::DTYPE_I32, {batches}},
                                  TensorArg{dy.ptr(), runtime::DTYPE_F32, {rows, width}},
                                  runtime::ScalarArg::F32(scale)};
  };
  // The precondition: D = d - 2 is not a multiple of 4 (d is).
  absl::Status refused = runtime::Launch(kernel, args(d - 2));
  if (refused.code() != absl::StatusCode::kInvalidArgument ||
      !absl::StrContains(refused.message(), "precondition D % 4 == 0") ||
      !absl::StrContains(refused.message(), absl::StrCat("D = ", d - 2))) {
    return absl::InternalError(absl::StrCat(
        "a launch with D = ", d - 2, " was not refused by the precondition: ", refused.ToString()));
  }
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args(d)));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size() * 4));
  float weight = 1.0f;
  int64_t row = 0;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t r = 0; r < std::min<int64_t>(lengths[b], s); ++r, ++row)
      for (int64_t j = 0; j < d; ++j) {
        double want = double(x[(b * s + r) * d + j]) * weight;
        CheckElement(report, row, j, y[row * d + j], want, 0x1p-23 * std::fabs(want));
      }
    weight *= scale;
  }
  float poison;
  std::memset(&poison, kPoisonByte, sizeof(poison));
  for (int64_t e = total * d; e < rows * d; ++e)
    if (std::memcmp(&y[e], &poison, sizeof(float)) != 0)
      CheckElement(report, e / d, e % d, y[e], std::nan(""), 0);
  report.correct = report.mismatches == 0;
  return report;
}

/// index_math (tests/conformance/cases_core.cc): pairs (a, b) of either
/// sign, some at the i32 extremes; R[i] must equal int64_t's a / b, a % b,
/// min, max, ceil(a / b), max(0, a - b) and a - min(a, b), exactly.
absl::StatusOr<Report> RunIndexMath(const LoadedKernel& kernel, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  // Pairs of either sign, at the extremes (INT32_MIN / -1 = 2^31).
  std::vector<int32_t> p = {7, 2, -7, 2, 7, -2, -7, -2, 0, 5, 3, 9, -2147483647 - 1, 3};
  for (int32_t v : {2147483647, -1, 1, 1, -2147483647 - 1, -1}) p.push_back(v);
  while (p.size() < 2 * 300) {
    int32_t a = int32_t(random.Index(2001)) - 1000, b = int32_t(random.Index(41)) - 20;
    p.push_back(a);
    p.push_back(b == 0 ? 1 : b);
  }
  const int64_t n = int64_t(p.size()) / 2;
  std::vector<int64_t> r(n * 7);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dp, Upload(p));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dr, DeviceBuffer::Allocate(r.size() * 8));
  TESSERA_RETURN_IF_ERROR(dr.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dp.ptr(), runtime::DTYPE_I32, {n, 2}},
                                 TensorArg{dr.ptr(), runtime::DTYPE_I64, {n, 7}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dr.CopyToHost(r.data(), r.size() * 8));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t a = p[2 * i], b = p[2 * i + 1];
    const int64_t quotient = a / b, remainder = a % b;
    const int64_t ceil = quotient + (remainder != 0 && ((a < 0) == (b < 0)) ? 1 : 0);
    const int64_t want[7] = {quotient,          remainder, std::min(a, b),
                             std::max(a, b),    ceil,      std::max<int64_t>(0, a - b),
                             a - std::min(a, b)};
    for (int k = 0; k < 7; ++k)
      CheckElement(report, i, k, double(r[i * 7 + k]), double(want[k]), 0);
  }
  report.correct = report.mismatches == 0;
  return report;
}

/// int_reduce (tests/conformance/cases_core.cc): X i32 [M, N] in
/// [-2^30, 2^30]; R[m] = {max, min, the i32 sum (wrapping), the i32 sum of
/// absolute values (wrapping), the i64 sum}, exactly.
absl::StatusOr<Report> RunIntReduce(const LoadedKernel& kernel, int64_t m, int64_t n,
                                    const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<int32_t> x(m * n);
  for (int64_t e = 0; e < m * n; ++e) {
    // Rows of one sign (0 mod 3 negative, 1 mod 3 positive: the tail's
    // identities matter), the others of both; row 2 holds INT32_MIN.
    const int64_t v = int64_t(random.Index((int64_t(1) << 30) + 1));
    const int64_t row = e / n;
    x[e] = int32_t(row % 3 == 0 ? -v - 1 : row % 3 == 1 ? v + 1 : v - (1 << 29));
  }
  if (m > 2) x[2 * n + n / 2] = std::numeric_limits<int32_t>::min();
  // Rows past M (a block's last rows) must stay poisoned.
  std::vector<int64_t> r((m + kPadRows) * 5);
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dr, DeviceBuffer::Allocate(r.size() * 8));
  TESSERA_RETURN_IF_ERROR(dr.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_I32, {m, n}},
                                 TensorArg{dr.ptr(), runtime::DTYPE_I64, {m, 5}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dr.CopyToHost(r.data(), r.size() * 8));
  for (int64_t i = 0; i < m; ++i) {
    int32_t top = std::numeric_limits<int32_t>::min(), bottom = std::numeric_limits<int32_t>::max();
    uint32_t sum = 0, abs = 0;
    int64_t wide = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int32_t v = x[i * n + j];
      top = std::max(top, v);
      bottom = std::min(bottom, v);
      sum += uint32_t(v);
      abs += v < 0 ? 0u - uint32_t(v) : uint32_t(v);
      wide += v;
    }
    const int64_t want[5] = {top, bottom, int32_t(sum), int32_t(abs), wide};
    for (int k = 0; k < 5; ++k)
      CheckElement(report, i, k, double(r[i * 5 + k]), double(want[k]), 0);
  }
  CheckPoisoned(report, r.data() + m * 5, kPadRows * 5, m);
  report.correct = report.mismatches == 0;
  return report;
}

/// arg_topk (tests/conformance/cases_core.cc): X f32 [M, N] and Xi i32
/// [M, 64] of small integers (many ties; Xi's row 0 all INT32_MIN but one,
/// X's row 3 holding a NaN). AV/AI the maximum of each row of X (NaN where
/// the row holds one) and its first position; AM the first position of Xi's row minimum; TV
/// and TI Xi's 4 largest, largest first, ties in increasing position. Exact.
absl::StatusOr<Report> RunArgTopK(const LoadedKernel& kernel, int64_t m, int64_t n,
                                  const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<float> x(m * n), av(m);
  std::vector<int32_t> xi(m * 64), ai(m), am(m), tv(m * 4), ti(m * 4);
  // Rows 0 mod 3 all negative: a tail read as 0 would be their maximum.
  for (int64_t e = 0; e < m * n; ++e)
    x[e] = float(int(random.Index(101)) - ((e / n) % 3 == 0 ? 101 : 50));
  for (int32_t& v : xi) v = int32_t(random.Index(41)) - 20;
  // Row 3 holds a NaN past the first chunk (the maximum: its position);
  // Xi's row 0 is the type's lowest value but for one element (top-k must
  // still give distinct positions).
  x[3 * n + n * 3 / 4] = std::nanf("");
  for (int j = 0; j < 64; ++j) xi[j] = j == 5 ? 3 : std::numeric_limits<int32_t>::min();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dxi, Upload(xi));
  std::vector<DeviceBuffer> outs;
  const int64_t rows = m + kPadRows;  // past M: must stay poisoned
  for (int64_t bytes : {rows * 4, rows * 4, rows * 4, rows * 16, rows * 16}) {
    TESSERA_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Allocate(bytes));
    TESSERA_RETURN_IF_ERROR(out.Fill(kPoisonByte));
    outs.push_back(std::move(out));
  }
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F32, {m, n}},
                                 TensorArg{dxi.ptr(), runtime::DTYPE_I32, {m, 64}},
                                 TensorArg{outs[0].ptr(), runtime::DTYPE_F32, {m}},
                                 TensorArg{outs[1].ptr(), runtime::DTYPE_I32, {m}},
                                 TensorArg{outs[2].ptr(), runtime::DTYPE_I32, {m}},
                                 TensorArg{outs[3].ptr(), runtime::DTYPE_I32, {m, 4}},
                                 TensorArg{outs[4].ptr(), runtime::DTYPE_I32, {m, 4}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  av.resize(rows);
  ai.resize(rows);
  am.resize(rows);
  tv.resize(rows * 4);
  ti.resize(rows * 4);
  TESSERA_RETURN_IF_ERROR(outs[0].CopyToHost(av.data(), rows * 4));
  TESSERA_RETURN_IF_ERROR(outs[1].CopyToHost(ai.data(), rows * 4));
  TESSERA_RETURN_IF_ERROR(outs[2].CopyToHost(am.data(), rows * 4));
  TESSERA_RETURN_IF_ERROR(outs[3].CopyToHost(tv.data(), rows * 16));
  TESSERA_RETURN_IF_ERROR(outs[4].CopyToHost(ti.data(), rows * 16));
  CheckPoisoned(report, av.data() + m, kPadRows, m);
  CheckPoisoned(report, ai.data() + m, kPadRows, m);
  CheckPoisoned(report, am.data() + m, kPadRows, m);
  CheckPoisoned(report, tv.data() + m * 4, kPadRows * 4, m);
  CheckPoisoned(report, ti.data() + m * 4, kPadRows * 4, m);
  for (int64_t i = 0; i < m; ++i) {
    const float* row = &x[i * n];
    const int64_t nan = std::find_if(row, row + n, [](float v) { return std::isnan(v); }) - row;
    const int64_t first = nan < n ? nan : std::max_element(row, row + n) - row;
    if (nan < n)
      CheckElement(report, i, 0, std::isnan(av[i]) ? 0.0 : 1.0, 0.0, 0);
    else
      CheckElement(report, i, 0, av[i], row[first], 0);
    CheckElement(report, i, 1, ai[i], double(first), 0);
    const int32_t* irow = &xi[i * 64];
    CheckElement(report, i, 2, am[i], double(std::min_element(irow, irow + 64) - irow), 0);
    std::vector<int> order(64);
    for (int j = 0; j < 64; ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return irow[a] > irow[b]; });
    for (int r = 0; r < 4; ++r) {
      CheckElement(report, i, 3 + r, tv[i * 4 + r], irow[order[r]], 0);
      CheckElement(report, i, 7 + r, ti[i * 4 + r], order[r], 0);
    }
  }
  report.correct = report.mismatches == 0;
  return report;
}

/// atomic_add_half (tests/conformance/cases_core.cc): Y (f16) and Z
/// (bf16) start at random values and gain X + 2 X in two atomic adds:
/// within the three roundings to the 16-bit type (each addend, each sum).
absl::StatusOr<Report> RunAtomicAddHalf(const LoadedKernel& kernel, int64_t m, int64_t n,
                                        const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<float> x(m * n);
  std::vector<uint16_t> y(m * n), z(m * n);
  for (float& v : x) v = random.Uniform();
  for (int64_t e = 0; e < m * n; ++e) {
    y[e] = FloatToHalfBits(random.Uniform());
    z[e] = FloatToBf16Bits(random.Uniform());
  }
  const std::vector<uint16_t> y0 = y, z0 = z;
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, Upload(y));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dz, Upload(z));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F32, {m, n}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F16, {m, n}},
                                 TensorArg{dz.ptr(), runtime::DTYPE_BF16, {m, n}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size() * 2));
  TESSERA_RETURN_IF_ERROR(dz.CopyToHost(z.data(), z.size() * 2));
  for (int64_t e = 0; e < m * n; ++e) {
    // Each addend is rounded to the 16-bit type, and so is each of the two
    // sums: three roundings, each within half an ulp of |start| + 3 |x|.
    const double added = 3.0 * double(x[e]), scale = 3.0 * std::fabs(double(x[e]));
    const double startY = HalfBitsToFloat(y0[e]), startZ = Bf16BitsToFloat(z0[e]);
    CheckElement(report, e / n, e % n, HalfBitsToFloat(y[e]), startY + added,
                 3 * 0x1p-11 * (std::fabs(startY) + scale));
    CheckElement(report, e / n, e % n, Bf16BitsToFloat(z[e]), startZ + added,
                 3 * 0x1p-8 * (std::fabs(startZ) + scale));
  }
  report.correct = report.mismatches == 0;
  return report;
}

/// atomic_in_pipelined (tests/conformance/cases_core.cc): Y [16, N] starts
/// at random values and gains the sum of X's [M, N] 16-row chunks (rows
/// past M read as 0), within f32 summation's bound.
absl::StatusOr<Report> RunAtomicInPipelined(const LoadedKernel& kernel, int64_t m, int64_t n,
                                            const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<float> x(m * n), y(16 * n);
  for (float& v : x) v = random.Uniform();
  for (float& v : y) v = random.Uniform();
  const std::vector<float> y0 = y;
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, Upload(y));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F32, {m, n}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F32, {16, n}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size() * 4));
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = y0[i * n + j], magnitude = std::fabs(want);
      for (int64_t r = i; r < m; r += 16) {
        want += x[r * n + j];
        magnitude += std::fabs(x[r * n + j]);
      }
      CheckElement(report, i, j, y[i * n + j], want, 0x1p-22 * magnitude * double(m / 16 + 2));
    }
  report.correct = report.mismatches == 0;
  return report;
}

}  // namespace

std::vector<Workload> PagedGatherWorkloads() {
  std::vector<Workload> list;
  // Conformance: lengths that end mid-page, a sequence of one row, one of
  // none, and more pages than a block's chunk (8). Benchmark: 64 sequences
  // of up to 4096 rows (a decode batch's keys).
  list.push_back(
      MakeWorkload("paged_gather/conformance", "paged_gather", true, false,
                   [](const LoadedKernel& loaded, const RunOptions& options) {
                     return RunPagedGather(loaded, {100, 1, 0, 203, 16}, 13, false, options);
                   }));
  for (auto [m, l] : {std::pair<int64_t, int64_t>{37, 1000}, {5, 256}, {9, 77}})
    list.push_back(
        MakeWorkload(absl::StrCat("control_flow/", m, "x", l), "control_flow", true, false,
                     [m = m, l = l](const LoadedKernel& loaded, const RunOptions& options) {
                       return RunControlFlow(loaded, m, l, options);
                     }));
  for (auto [b, s, d] : {std::tuple<int64_t, int64_t, int64_t>{7, 37, 100}, {3, 200, 256}})
    list.push_back(
        MakeWorkload(absl::StrCat("pack_varlen/", b, "x", s, "x", d), "pack_varlen", true, false,
                     [b = b, s = s, d = d](const LoadedKernel& loaded, const RunOptions& options) {
                       return RunPackVarlen(loaded, b, s, d, options);
                     }));
  list.push_back(MakeWorkload("index_math/300", "index_math", true, false, RunIndexMath));
  for (auto [m, n] : {std::pair<int64_t, int64_t>{1000, 200}, {5, 68}})
    list.push_back(MakeWorkload(absl::StrCat("atomic_in_pipelined/", m, "x", n),
                                "atomic_in_pipelined", true, false,
                                [m = m, n = n](const LoadedKernel& loaded, const RunOptions& options) {
                                  return RunAtomicInPipelined(loaded, m, n, options);
                                }));
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 200}, {16, 64}})
    list.push_back(
        MakeWorkload(absl::StrCat("atomic_add_half/", m, "x", n), "atomic_add_half", true, false,
                     [m = m, n = n](const LoadedKernel& loaded, const RunOptions& options) {
                       return RunAtomicAddHalf(loaded, m, n, options);
                     }));
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 1000}, {6, 77}})
    list.push_back(
        MakeWorkload(absl::StrCat("arg_topk/", m, "x", n), "arg_topk", true, false,
                     [m = m, n = n](const LoadedKernel& loaded, const RunOptions& options) {
                       return RunArgTopK(loaded, m, n, options);
                     }));
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 1000}, {5, 77}})
    list.push_back(
        MakeWorkload(absl::StrCat("int_reduce/", m, "x", n), "int_reduce", true, false,
                     [m = m, n = n](const LoadedKernel& loaded, const RunOptions& options) {
                       return RunIntReduce(loaded, m, n, options);
                     }));
  for (int64_t n : {int64_t(1000), int64_t(300001)})
    list.push_back(MakeWorkload(absl::StrCat("histogram/n=", n), "histogram", true, false,
                                [n](const LoadedKernel& loaded, const RunOptions& options) {
                                  return RunHistogram(loaded, n, options);
                                }));
  list.push_back(MakeWorkload("paged_gather/64x4096", "paged_gather", false, true,
                              [](const LoadedKernel& loaded, const RunOptions& options) {
                                std::vector<int32_t> lens(64);
                                Random random(options.seed + 5);
                                for (int32_t& len : lens) len = 2048 + int32_t(random.Index(2049));
                                return RunPagedGather(loaded, lens, 256, true, options);
                              }));
  return list;
}

}  // namespace tessera::workloads::internal
