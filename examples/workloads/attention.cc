//===- attention.cc - The online-softmax attention workload ---------------===//
//
// This file implements the workload of the conformance kernel
// attention_online_f16: O = softmax(Q K^T / sqrt(64) + mask) V for one head
// of width 64, Q and O of M rows, K and V of N rows, f16, against a float64
// reference over every element. The mask is an additive f32 row of
// ceil(N / 64) * 64 entries in log2 units: 0 for the keys that exist,
// -infinity for the padding of the last key block.
//
//===----------------------------------------------------------------------===//

#include "examples/workloads/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"

namespace tessera::workloads {
namespace {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::TensorArg;

/// The head width the kernel is built for.
constexpr int64_t kHeadDim = 64;
/// The kernel's key block: the mask covers whole blocks.
constexpr int64_t kKeyBlock = 64;

/// f16 values uniform in [-1, 1) from a fixed linear congruential stream,
/// as their bits and as doubles.
struct HalfMatrix {
  std::vector<uint16_t> bits;
  std::vector<double> values;
  HalfMatrix(int64_t count, uint64_t& state) {
    for (int64_t i = 0; i < count; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      float x = float((state >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f;
      bits.push_back(FloatToHalfBits(x));
      values.push_back(HalfBitsToFloat(bits.back()));
    }
  }
};

absl::StatusOr<DeviceBuffer> Upload(const void* data, size_t bytes) {
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(bytes));
  TESSERA_RETURN_IF_ERROR(buffer.CopyFromHost(data, bytes));
  return buffer;
}

/// Every output element against float64 softmax attention. The kernel
/// rounds P to f16 before P V (2^-11 relative per term), approximates exp2
/// (a few f32 ulp) and rounds O to f16: the bound is 2^-9 of the weighted
/// magnitude sum_j p_j |v_jc| / sum_j p_j, plus 2^-10 of the result.
absl::StatusOr<Report> RunAttention(const LoadedKernel& kernel, int64_t m, int64_t n,
                                    const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  uint64_t state = options.seed * 0x9E3779B97F4A7C15ull + 7;
  int64_t d = kHeadDim, padded = (n + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  HalfMatrix q(m * d, state), k(n * d, state), v(n * d, state);
  std::vector<float> mask(padded, 0.0f);
  std::fill(mask.begin() + n, mask.end(), -std::numeric_limits<float>::infinity());
  auto f16 = runtime::DTYPE_F16;
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, Upload(q.bits.data(), m * d * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dk, Upload(k.bits.data(), n * d * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dv, Upload(v.bits.data(), n * d * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dmask, Upload(mask.data(), padded * 4));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(m * d * 2));
  TESSERA_RETURN_IF_ERROR(dout.Fill(0xFF));  // NaN: an unwritten element fails
  std::vector<KernelArg> args = {
      TensorArg{dq.ptr(), f16, {m, d}}, TensorArg{dk.ptr(), f16, {n, d}},
      TensorArg{dv.ptr(), f16, {n, d}}, TensorArg{dmask.ptr(), runtime::DTYPE_F32, {padded}},
      TensorArg{dout.ptr(), f16, {m, d}}};
  TESSERA_RETURN_IF_ERROR(runtime::Launch(kernel, args));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> out(m * d);
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(out.data(), out.size() * 2));
  std::vector<double> p(n);
  double scale = 1.0 / std::sqrt(double(d));
  for (int64_t i = 0; i < m; ++i) {
    double rowMax = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      p[j] = 0;
      for (int64_t c = 0; c < d; ++c) p[j] += q.values[i * d + c] * k.values[j * d + c];
      p[j] *= scale;
      rowMax = std::max(rowMax, p[j]);
    }
    for (int64_t j = 0; j < n; ++j) sum += p[j] = std::exp(p[j] - rowMax);
    for (int64_t c = 0; c < d; ++c) {
      double ref = 0, magnitude = 0;
      for (int64_t j = 0; j < n; ++j) {
        ref += p[j] * v.values[j * d + c];
        magnitude += p[j] * std::fabs(v.values[j * d + c]);
      }
      ref /= sum, magnitude /= sum;
      double got = HalfBitsToFloat(out[i * d + c]);
      double bound = std::ldexp(1.0, -9) * magnitude + std::ldexp(1.0, -10) * std::fabs(ref);
      double err = std::isnan(got) ? std::numeric_limits<double>::infinity()
                                   : std::fabs(got - ref);
      ++report.checked;
      report.max_error = std::max(report.max_error, err);
      if (!(err <= bound)) {
        if (report.mismatches == 0)
          report.detail = absl::StrFormat("first mismatch at (%d, %d): got %g, expected %g", i,
                                          c, got, ref);
        ++report.mismatches;
      }
    }
  }
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * (2 * m * d + 2 * n * d);
  report.flops = 4.0 * m * n * d;
  return report;
}

Workload Attention(int64_t m, int64_t n) {
  Workload w;
  w.name = absl::StrCat("attention_online_f16/", m, "x", n, "x64");
  w.kernel = "attention_online_f16";
  w.conformance = true;
  w.run = [m, n, name = w.name](const LoadedKernel& loaded,
                                const RunOptions& options) -> absl::StatusOr<Report> {
    TESSERA_ASSIGN_OR_RETURN(Report report, RunAttention(loaded, m, n, options));
    report.workload = name;
    return report;
  };
  return w;
}

}  // namespace

std::vector<Workload> AttentionWorkloads() {
  // Query and key lengths that are not multiples of the blocks (128 or 32
  // query rows, 64 keys), one block of each, and a single row and key.
  return {Attention(200, 300), Attention(128, 64), Attention(1, 1)};
}

}  // namespace tessera::workloads
