//===- workloads_gemm.cc - GEMM workloads ---------------------------------===//
//
// This file implements the workloads of the f16, bf16 and f32 GEMMs, their
// fused epilogues (bias, activations, residual) and the chained GEMM with
// its intermediate in registers: float64 references on the CPU over every
// element (conformance sizes) or a random sample (benchmark sizes).
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

}  // namespace

Workload Gemm(const std::string& kernel, int64_t m, int64_t n, int64_t k, runtime::DType dtype,
              bool transposeB, bool conformance, bool benchmark, GemmEpilogue epilogue) {
  return MakeWorkload(absl::StrCat(kernel, "/", m, "x", n, "x", k), kernel, conformance, benchmark,
                      [=](const LoadedKernel& loaded, const RunOptions& options) {
                        return RunGemm(loaded, m, n, k, dtype, transposeB, conformance, epilogue,
                                       options);
                      });
}

namespace {

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

}  // namespace

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

namespace {

/// C += A B for A (M x K) and B (K x N) f16 and C f32 starting at random
/// values (the split-K example adds into C): against C's first values plus
/// the float64 product. The bound allows f32 accumulation over K (the
/// partial products and the atomic adds): a split added twice or lost is
/// off by about |A B| itself.
absl::StatusOr<Report> RunAccumulatingGemm(const LoadedKernel& kernel, int64_t m, int64_t n,
                                           int64_t k, bool fullCheck, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix a(runtime::DTYPE_F16, m * k, random), b(runtime::DTYPE_F16, k * n, random);
  std::vector<float> c0(m * n);
  for (float& v : c0) v = random.Uniform() * 4.0f;
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, Upload(c0));
  std::vector<KernelArg> args = {TensorArg{da.ptr(), runtime::DTYPE_F16, {m, k}},
                                 TensorArg{db.ptr(), runtime::DTYPE_F16, {k, n}},
                                 TensorArg{dc.ptr(), runtime::DTYPE_F32, {m, n}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<float> c(m * n);
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size() * 4));
  Random pick(options.seed + 17);
  int64_t points = fullCheck ? m * n : 4096;
  for (int64_t p = 0; p <= points; ++p) {
    int64_t i = p == points ? m - 1 : fullCheck ? p / n : pick.Index(m);
    int64_t j = p == points ? n - 1 : fullCheck ? p % n : pick.Index(n);
    double ref = c0[i * n + j], magnitude = std::fabs(ref);
    for (int64_t r = 0; r < k; ++r) {
      double term = double(a.values[i * k + r]) * b.values[r * n + j];
      ref += term;
      magnitude += std::fabs(term);
    }
    CheckElement(report, i, j, c[i * n + j], ref, 0x1p-17 * magnitude + 1e-6);
  }
  report.tolerance = 0x1p-17;
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * (m * k + k * n) + 8.0 * m * n;
  report.flops = 2.0 * m * n * k;
  // Timed launches keep adding into C: the time is what counts there.
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(kernel, args, options, report));
  return report;
}

/// gemm_paged_b (tests/conformance/cases_core.cc): C = sum over k-tiles k
/// of A's 64 columns at 64 k times page Table[k] of Bp ([pages, 64, N],
/// f16), the table a random choice of pages (repeats allowed), against
/// float64 with the f32 accumulation's bound.
absl::StatusOr<Report> RunGemmPagedB(const LoadedKernel& kernel, int64_t m, int64_t n, int64_t k,
                                     int64_t pages, const RunOptions& options) {
  constexpr int64_t kTile = 64;
  int64_t tiles = (k + kTile - 1) / kTile;
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix a(runtime::DTYPE_F16, m * k, random), b(runtime::DTYPE_F16, pages * kTile * n, random);
  std::vector<int32_t> table(tiles);
  for (int32_t& page : table) page = int32_t(random.Index(pages));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer da, Upload(a.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer db, Upload(b.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dt, Upload(table));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dc, DeviceBuffer::Allocate(m * n * 4));
  TESSERA_RETURN_IF_ERROR(dc.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{da.ptr(), runtime::DTYPE_F16, {m, k}},
                                 TensorArg{db.ptr(), runtime::DTYPE_F16, {pages, kTile, n}},
                                 TensorArg{dt.ptr(), runtime::DTYPE_I32, {tiles}},
                                 TensorArg{dc.ptr(), runtime::DTYPE_F32, {m, n}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<float> c(m * n);
  TESSERA_RETURN_IF_ERROR(dc.CopyToHost(c.data(), c.size() * 4));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, magnitude = 0;
      for (int64_t r = 0; r < k; ++r) {
        double term =
            double(a.values[i * k + r]) * b.values[(table[r / kTile] * kTile + r % kTile) * n + j];
        ref += term;
        magnitude += std::fabs(term);
      }
      CheckElement(report, i, j, c[i * n + j], ref, 0x1p-17 * magnitude + 1e-6);
    }
  report.tolerance = 0x1p-17;
  report.correct = report.mismatches == 0;
  return report;
}

}  // namespace

std::vector<Workload> SplitKWorkloads() {
  struct Shape {
    int64_t m, n, k;
    bool conformance;
  };
  // Conformance: tails in M, N and K; K of 3 k-tiles over 4 splits (one
  // block adds an empty range). Benchmarks: skinny products (decode's
  // projections), where tiles alone leave SMs idle.
  std::vector<Workload> list;
  for (Shape shape : {Shape{77, 200, 1000, true}, Shape{33, 136, 72, true},
                      Shape{128, 8192, 8192, false}, Shape{256, 4096, 14336, false},
                      Shape{16, 8192, 8192, false}, Shape{64, 28672, 4096, false}})
    list.push_back(MakeWorkload(absl::StrCat("gemm_split_k/", shape.m, "x", shape.n, "x", shape.k),
                                "gemm_split_k", shape.conformance, !shape.conformance,
                                [shape](const LoadedKernel& loaded, const RunOptions& options) {
                                  return RunAccumulatingGemm(loaded, shape.m, shape.n, shape.k,
                                                             shape.conformance, options);
                                }));
  // gemm_paged_b: tails in M, N and K, 16 k-tiles from 11 pages.
  list.push_back(MakeWorkload("gemm_paged_b/143x200x1000", "gemm_paged_b", true, false,
                              [](const LoadedKernel& loaded, const RunOptions& options) {
                                return RunGemmPagedB(loaded, 143, 200, 1000, 11, options);
                              }));
  return list;
}

}  // namespace tessera::workloads::internal
