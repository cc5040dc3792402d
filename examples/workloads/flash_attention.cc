//===- flash_attention.cc - The FlashAttention workloads ------------------===//
//
// This file implements the workloads of the FlashAttention kernels: Q
// [B, Sq, H, D], K and V [B, Skv, Hkv, D] of random values in [-1, 1)
// (f16 or bf16), O and LSE poisoned, a scale that is not 1/sqrt(D) (so a
// kernel that ignores its scale argument fails), and each checked row of
// O and LSE against float64 attention: query head h reads key head
// h / (H / Hkv); causal rows see keys j <= i + Skv - Sq, and a row that sees
// none has O = 0 and LSE = +infinity.
//
//===----------------------------------------------------------------------===//

#include "examples/workloads/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/workloads/attention_check.h"
#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"

namespace tessera::workloads {

using namespace internal;

void internal::CheckAttentionRow(const AttentionVariant& v, const AttentionProblem& p, double scale,
                                 const Bits16& q, const Bits16& k, const Bits16& val,
                                 const std::vector<uint16_t>& out, const std::vector<float>& lse,
                                 int64_t b, int64_t h, int64_t i, Report& report) {
  const int64_t d = v.d, dv = v.dv ? v.dv : v.d, kvh = h / (p.h / p.hkv);
  const bool f16 = v.dtype == runtime::DTYPE_F16;
  auto qAt = [&](int64_t c) { return q[((b * p.sq + i) * p.h + h) * d + c]; };
  auto kvAt = [&](const Bits16& t, int64_t j, int64_t c) {
    return t[((b * p.skv + j) * p.hkv + kvh) * (&t == &val ? ValueRow(v) : d) + c];
  };
  // Keys [0, seen): all, or up to the row's diagonal aligned bottom right.
  int64_t seen = v.causal ? std::clamp<int64_t>(i + p.skv - p.sq + 1, 0, p.skv) : p.skv;
  std::vector<double> s(seen);
  double top = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t j = 0; j < seen; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += qAt(c) * kvAt(k, j, c);
    top = std::max(top, s[j] = dot * scale);
  }
  for (int64_t j = 0; j < seen; ++j) sum += s[j] = std::exp(s[j] - top);
  int64_t row = (b * p.sq + i) * p.h + h;
  for (int64_t c = 0; c < dv; ++c) {
    double ref = 0, magnitude = 0;
    for (int64_t j = 0; j < seen; ++j) {
      ref += s[j] * kvAt(val, j, c);
      magnitude += s[j] * std::fabs(kvAt(val, j, c));
    }
    if (seen > 0) ref /= sum, magnitude /= sum;
    double got = f16 ? HalfBitsToFloat(out[row * dv + c]) : Bf16BitsToFloat(out[row * dv + c]);
    // P is rounded to the type before P V (half an ulp: 2^-11 f16, 2^-8
    // bf16), exp2 is approximate and O is rounded once: 4x and 2x margins.
    double bound = f16 ? std::ldexp(magnitude, -9) + std::ldexp(std::fabs(ref), -10)
                       : std::ldexp(magnitude, -6) + std::ldexp(std::fabs(ref), -7);
    report.max_error = std::max(report.max_error, CheckElement(report, row, c, got, ref, bound));
  }
  // The LSE in f32 from m ln 2 + log(l): 2^-12 relative to 1 + |LSE|.
  double got = lse[(b * p.h + h) * p.sq + i];
  if (seen == 0) {
    if (!(std::isinf(got) && got > 0)) {
      if (report.mismatches == 0)
        report.detail = absl::StrFormat("LSE of row (%d, %d, %d), which sees no key: got %g, "
                                        "expected +inf", b, h, i, got);
      ++report.mismatches;
    }
    ++report.checked;
    return;
  }
  double ref = top + std::log(sum);
  report.max_error = std::max(report.max_error, CheckElement(report, (b * p.h + h) * p.sq + i, -1,
                                                             got, ref,
                                                             std::ldexp(1 + std::fabs(ref), -12)));
}

absl::StatusOr<AttentionInputs> internal::MakeAttentionInputs(const AttentionVariant& v,
                                                              const AttentionProblem& p,
                                                              Random& random) {
  Bits16 q(v.dtype, p.b * p.sq * p.h * v.d, random), k(v.dtype, p.b * p.skv * p.hkv * v.d, random),
      val(v.dtype, p.b * p.skv * p.hkv * ValueRow(v), random);
  TESSERA_ASSIGN_OR_RETURN(runtime::DeviceBuffer dq, Upload(q.bits));
  TESSERA_ASSIGN_OR_RETURN(runtime::DeviceBuffer dk, Upload(k.bits));
  TESSERA_ASSIGN_OR_RETURN(runtime::DeviceBuffer dv, Upload(val.bits));
  return AttentionInputs{std::move(q),
                         std::move(k),
                         std::move(val),
                         std::move(dq),
                         std::move(dk),
                         std::move(dv),
                         1.25 / std::sqrt(double(v.d))};
}

std::vector<runtime::KernelArg> AttentionInputs::Args(const AttentionVariant& v,
                                                      const AttentionProblem& p) const {
  return {runtime::TensorArg{dq.ptr(), v.dtype, {p.b, p.sq, p.h, v.d}},
          runtime::TensorArg{dk.ptr(), v.dtype, {p.b, p.skv, p.hkv, v.d}},
          runtime::TensorArg{dv.ptr(), v.dtype, {p.b, p.skv, p.hkv, ValueRow(v)}}};
}

void internal::CheckAttentionRows(const AttentionVariant& v, const AttentionProblem& p,
                                  double scale, const Bits16& q, const Bits16& k, const Bits16& val,
                                  const std::vector<uint16_t>& out, const std::vector<float>& lse,
                                  int64_t sampled, Random& random, Report& report) {
  if (sampled > 0) {
    for (int64_t n = 0; n < sampled; ++n)
      CheckAttentionRow(v, p, scale, q, k, val, out, lse, random.Index(p.b), random.Index(p.h),
                        random.Index(p.sq), report);
    return;
  }
  for (int64_t b = 0; b < p.b; ++b)
    for (int64_t h = 0; h < p.h; ++h)
      for (int64_t i = 0; i < p.sq; ++i)
        CheckAttentionRow(v, p, scale, q, k, val, out, lse, b, h, i, report);
}

namespace {

/// Query rows a benchmark checks (sampled: a float64 row costs Skv D).
constexpr int64_t kSampledRows = 48;

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

absl::StatusOr<Report> RunFlashAttention(const LoadedKernel& kernel, const AttentionVariant& v,
                                         const AttentionProblem& p, bool sampled,
                                         const RunOptions& options) {
  if (p.hkv < 1 || p.h % p.hkv != 0)
    return absl::InvalidArgumentError(
        absl::StrFormat("flash attention: %d key heads do not divide %d query heads", p.hkv, p.h));
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  const int64_t d = v.d, dv = v.dv ? v.dv : d, outElements = p.b * p.sq * p.h * dv;
  TESSERA_ASSIGN_OR_RETURN(AttentionInputs in, MakeAttentionInputs(v, p, random));
  const Bits16 &q = in.q, &k = in.k, &val = in.val;
  const double scale = in.scale;
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(outElements * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlse, DeviceBuffer::Allocate(p.b * p.h * p.sq * 4));
  TESSERA_RETURN_IF_ERROR(dlse.Fill(kPoisonByte));
  std::vector<KernelArg> args = in.Args(v, p);
  args.insert(args.end(), {TensorArg{dout.ptr(), v.dtype, {p.b, p.sq, p.h, dv}},
                           TensorArg{dlse.ptr(), runtime::DTYPE_F32, {p.b, p.h, p.sq}},
                           ScalarArg::F32(float(scale))});
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dout, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> out(outElements);
  std::vector<float> lse(p.b * p.h * p.sq);
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(out.data(), out.size() * 2));
  TESSERA_RETURN_IF_ERROR(dlse.CopyToHost(lse.data(), lse.size() * 4));
  // The f32 scale the kernel received, as the reference's.
  const double used = double(float(scale));
  CheckAttentionRows(v, p, used, q, k, val, out, lse, sampled ? kSampledRows : 0, random, report);
  report.correct = report.mismatches == 0;
  report.bytes =
      2.0 * (q.bits.size() + outElements + k.bits.size() + val.bits.size()) + 4.0 * lse.size();
  // FlashAttention's count: 2 b h Sq Skv (D + Dv), half of it when causal.
  report.flops = 2.0 * p.b * p.h * p.sq * p.skv * (d + dv) * (v.causal ? 0.5 : 1.0);
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload Make(const AttentionVariant& v, const AttentionProblem& p, bool benchmark) {
  std::string name = absl::StrFormat("%s/b%d_sq%d_skv%d_h%d_hkv%d", v.kernel, p.b, p.sq, p.skv,
                                     p.h, p.hkv);
  return MakeWorkload(name, v.kernel, /*conformance=*/!benchmark, benchmark,
                      [v, p, benchmark](const LoadedKernel& kernel, const RunOptions& options) {
                        return RunFlashAttention(kernel, v, p, /*sampled=*/benchmark, options);
                      });
}

}  // namespace

std::vector<Workload> FlashAttentionWorkloads() {
  // Lengths that are not multiples of any block, Sq < Skv and Sq > Skv
  // (causal: the first Sq - Skv rows see no key), grouped-query heads (2:1,
  // 3:1), whole blocks, and one row against one key.
  const AttentionProblem kConformance[] = {
      {2, 77, 131, 4, 2}, {1, 200, 150, 2, 1}, {1, 128, 128, 3, 1}, {1, 1, 1, 1, 1}};
  std::vector<Workload> list;
  auto addConformance = [&](const AttentionVariant& v) {
    for (const AttentionProblem& p : kConformance) list.push_back(Make(v, p, /*benchmark=*/false));
  };
  // The example: f16, d128, not causal; one modest benchmark (it runs on
  // every target with the other examples).
  AttentionVariant example{"flash_attention", runtime::DTYPE_F16, 128, false};
  addConformance(example);
  list.push_back(Make(example, {4, 2048, 2048, 16, 16}, /*benchmark=*/true));
  // DeepSeek-V3's prefill: Q K^T over 192, V and O 128; its benchmark at
  // 16 heads, batch 2, sequence 4096 (cuDNN takes the shape; flash does not).
  for (bool causal : {false, true}) {
    AttentionVariant v{
        causal ? "flash_attention_f16_d192_v128_causal" : "flash_attention_f16_d192_v128",
        runtime::DTYPE_F16,
        192,
        causal,
        /*dv=*/128,
        /*ownValues=*/true};
    addConformance(v);
    list.push_back(Make(v, {2, 4096, 4096, 16, 16}, /*benchmark=*/true));
  }
  AttentionVariant bf16Split{
      "flash_attention_bf16_d192_v128_causal", runtime::DTYPE_BF16, 192, true, 128, true};
  addConformance(bf16Split);
  // Head dimensions whose rows are 32- or 64-byte swizzle panels; their
  // benchmark at batch 8, 16 heads, sequence 4096.
  for (auto [dtype, d, causal] :
       {std::tuple{runtime::DTYPE_F16, 96, false}, std::tuple{runtime::DTYPE_BF16, 80, true},
        std::tuple{runtime::DTYPE_F16, 112, false}, std::tuple{runtime::DTYPE_F16, 160, true}}) {
    AttentionVariant v{
        absl::StrCat("flash_attention_", dtype == runtime::DTYPE_F16 ? "f16" : "bf16", "_d", d,
                     causal ? "_causal" : ""),
        dtype, d, causal};
    addConformance(v);
    list.push_back(Make(v, {8, 4096, 4096, 16, 16}, /*benchmark=*/true));
  }
  for (runtime::DType dtype : {runtime::DTYPE_F16, runtime::DTYPE_BF16}) {
    for (int64_t d : {64, 128, 256}) {
      for (bool causal : {false, true}) {
        AttentionVariant v{
            absl::StrCat("flash_attention_", dtype == runtime::DTYPE_F16 ? "f16" : "bf16", "_d", d,
                         causal ? "_causal" : ""),
            dtype, d, causal};
        addConformance(v);
        // FlashAttention's benchmark: batch 8, 16 heads, 1k to 16k (4k at
        // head dimension 256).
        for (int64_t seq : {1024, 2048, 4096, 8192, 16384})
          if (d <= 128 || seq == 4096)
            list.push_back(Make(v, {8, seq, seq, 16, 16}, /*benchmark=*/true));
      }
    }
  }
  return list;
}

}  // namespace tessera::workloads
