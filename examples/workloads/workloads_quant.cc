//===- workloads_quant.cc - Quantized-weight GEMM workloads ---------------===//
//
// The workloads of examples/gemm_w4a16.cc and gemv_w4a16.cc: 4-bit weights
// packed eight to an int32 along K with f16 scales per 128 rows, against a
// float64 reference of the same dequantized weights; conformance sizes with
// tails in M, N and K, and decode-shaped (M = 1 to 16) and large benchmarks.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "examples/workloads/internal.h"
#include "runtime/device.h"

namespace tessera::workloads::internal {
namespace {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::TensorArg;

constexpr int64_t kPerWord = 8, kGroup = 128;

/// Y = X W for X (M x K, f16), Wq (K/8 x N, i32: nibble i of word (p, n)
/// is W[8p + i, n] as q - 8) and S (ceil(K/128) x N, f16). Each weight is
/// (q - 8) * s, rounded to f16 where `roundedWeights` (gemm_w4a16's f16
/// tile holds them so; gemv_w4a16 multiplies them unrounded); the reference
/// sums in float64 and the bound allows f16's rounding of Y and f32
/// accumulation.
absl::StatusOr<Report> RunW4A16(const LoadedKernel& kernel, int64_t m, int64_t n, int64_t k,
                                bool roundedWeights, bool fullCheck, const RunOptions& options) {
  int64_t words = k / kPerWord, groups = (k + kGroup - 1) / kGroup;
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  HostMatrix x(runtime::DTYPE_F16, m * k, random);
  std::vector<int32_t> wq(words * n);
  std::vector<uint8_t> q(k * n);
  for (int64_t p = 0; p < words; ++p)
    for (int64_t j = 0; j < n; ++j) {
      uint32_t word = 0;
      for (int64_t i = 0; i < kPerWord; ++i) {
        uint8_t nibble = uint8_t(random.Index(16));
        q[(p * kPerWord + i) * n + j] = nibble;
        word |= uint32_t(nibble) << (4 * i);
      }
      wq[p * n + j] = int32_t(word);
    }
  // Scales of either sign, 2^-8 to 2^-6 in magnitude (exact in f16).
  std::vector<uint16_t> s(groups * n);
  std::vector<float> scale(groups * n);
  for (int64_t e = 0; e < groups * n; ++e) {
    scale[e] = RoundToHalf(std::ldexp(1.0f + 0.5f * random.Uniform(), -7));
    if (random.Uniform() < 0) scale[e] = -scale[e];
    s[e] = FloatToHalfBits(scale[e]);
  }
  std::vector<double> w(k * n);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double weight = double(int(q[r * n + j]) - 8) * scale[(r / kGroup) * n + j];
      w[r * n + j] = roundedWeights ? RoundToHalf(float(weight)) : weight;
    }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dx, Upload(x.bytes));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dwq, Upload(wq));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer ds, Upload(s));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dy, DeviceBuffer::Allocate(m * n * 2));
  std::vector<KernelArg> args = {TensorArg{dx.ptr(), runtime::DTYPE_F16, {m, k}},
                                 TensorArg{dwq.ptr(), runtime::DTYPE_I32, {words, n}},
                                 TensorArg{ds.ptr(), runtime::DTYPE_F16, {groups, n}},
                                 TensorArg{dy.ptr(), runtime::DTYPE_F16, {m, n}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dy, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> y(m * n);
  TESSERA_RETURN_IF_ERROR(dy.CopyToHost(y.data(), y.size() * 2));
  std::vector<std::pair<int64_t, int64_t>> points;
  Random pick(options.seed + 17);
  for (int64_t e = 0; e < (fullCheck ? m * n : 4096); ++e)
    points.push_back(fullCheck ? std::pair{e / n, e % n} : std::pair{pick.Index(m), pick.Index(n)});
  points.push_back({m - 1, n - 1});
  for (auto [i, j] : points) {
    double ref = 0, magnitude = 0;
    for (int64_t r = 0; r < k; ++r) {
      double term = x.values[i * k + r] * w[r * n + j];
      ref += term;
      magnitude += std::fabs(term);
    }
    double bound = 0x1p-11 * std::fabs(ref) + 0x1p-20 * magnitude + 1e-7;
    CheckElement(report, i, j, HalfBitsToFloat(y[i * n + j]), ref, bound);
  }
  report.tolerance = 0x1p-11;
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * m * k + 4.0 * words * n + 2.0 * groups * n + 2.0 * m * n;
  report.flops = 2.0 * m * n * k;
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

}  // namespace

std::vector<Workload> QuantWorkloads() {
  std::vector<Workload> list;
  // Conformance: tails in M and N, K a multiple of 8 but not of the k-tile
  // or the group (the last group is partial).
  // Benchmarks: decode (M = 1 to 16; memory-bound on the weights: the
  // projections of an 8B model) and, for gemm_w4a16, a large square product.
  struct Shape {
    int64_t m, n, k;
    bool conformance;
  };
  const Shape decode[] = {{1, 8192, 8192, false},
                          {16, 8192, 8192, false},
                          {1, 4096, 14336, false},
                          {1, 28672, 4096, false}};
  auto add = [&](const char* kernel, Shape shape, bool roundedWeights) {
    list.push_back(MakeWorkload(
        absl::StrCat(kernel, "/", shape.m, "x", shape.n, "x", shape.k), kernel, shape.conformance,
        !shape.conformance,
        [shape, roundedWeights](const LoadedKernel& loaded, const RunOptions& options) {
          return RunW4A16(loaded, shape.m, shape.n, shape.k, roundedWeights, shape.conformance,
                          options);
        }));
  };
  for (Shape shape : {Shape{77, 200, 392, true}, Shape{1, 264, 1064, true}})
    add("gemm_w4a16", shape, true), add("gemv_w4a16", shape, false);
  add("gemv_w4a16", Shape{3, 136, 2056, true}, false);
  for (Shape shape : decode) add("gemm_w4a16", shape, true), add("gemv_w4a16", shape, false);
  add("gemv_w4a16", Shape{4, 8192, 8192, false}, false);
  add("gemm_w4a16", Shape{4096, 4096, 4096, false}, true);
  return list;
}

}  // namespace tessera::workloads::internal
