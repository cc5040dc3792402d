//===- flash_attention_bwd.cc - The attention backward's workloads --------===//
//
// The workloads of examples/flash_attention_bwd.cc: Q, K, V and dO random in
// [-1, 1) (f16 or bf16), the forward's O and LSE from float64 attention (O
// rounded to the type, LSE to f32, as the forward kernel gives them), then
// the three kernels (D, dQ, dK and dV; the first two are the runner's
// companions) into poisoned outputs, every gradient element checked against
// float64 gradients of the same inputs. Run twice: the second run's bits must
// equal the first's (the backward is deterministic). Timing covers all three
// kernels.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/workloads/attention_check.h"
#include "examples/workloads/flash_attention.h"
#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"
#include "runtime/timer.h"

namespace tessera::workloads {
namespace {

using namespace internal;
using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

/// Float64 gradients of one problem, and per element the magnitude of the
/// sum that gives it (the error bound scales with it).
struct Reference {
  std::vector<double> o, lse, rowD, rowDMag, dq, dk, dv, dqMag, dkMag, dvMag;
};

/// Which kernels a workload runs: the D kernel alone, the dQ kernel alone
/// (on float64 D), or all three (the dK/dV kernel's workloads).
enum class Part { kPre, kDq, kAll };

/// The values of `bits` as doubles, converted once for the reference's loops.
std::vector<double> Values(const Bits16& bits) {
  std::vector<double> values(bits.bits.size());
  for (size_t n = 0; n < values.size(); ++n) values[n] = bits[int64_t(n)];
  return values;
}

/// O, LSE and D for every head (the kernels' inputs); the gradients for the
/// query heads of the first `checkedKvHeads` key heads (what the workload
/// checks: all of them, or at benchmark sizes one group, so that the host's
/// float64 work stays a fraction of a minute).
Reference ReferenceGradients(const AttentionVariant& v, const AttentionProblem& p, double scale,
                             const Bits16& q16, const Bits16& k16, const Bits16& val16,
                             const Bits16& dout16, int64_t checkedKvHeads) {
  const int64_t d = v.d, group = p.h / p.hkv;
  const std::vector<double> q = Values(q16), k = Values(k16), val = Values(val16),
                            dout = Values(dout16);
  Reference r;
  const int64_t qn = p.b * p.sq * p.h * d, kn = p.b * p.skv * p.hkv * d;
  r.o.assign(qn, 0), r.dq.assign(qn, 0), r.dqMag.assign(qn, 0);
  r.dk.assign(kn, 0), r.dv.assign(kn, 0), r.dkMag.assign(kn, 0), r.dvMag.assign(kn, 0);
  r.lse.assign(p.b * p.h * p.sq, std::numeric_limits<double>::infinity());
  r.rowD.assign(p.b * p.h * p.sq, 0), r.rowDMag.assign(p.b * p.h * p.sq, 0);
  std::vector<double> pr(p.skv), dp(p.skv), o(d);
  for (int64_t b = 0; b < p.b; ++b)
    for (int64_t h = 0; h < p.h; ++h)
      for (int64_t i = 0; i < p.sq; ++i) {
        const int64_t kvh = h / group, qrow = ((b * p.sq + i) * p.h + h) * d;
        auto kv = [&](int64_t j) { return ((b * p.skv + j) * p.hkv + kvh) * d; };
        int64_t seen = v.causal ? std::clamp<int64_t>(i + p.skv - p.sq + 1, 0, p.skv) : p.skv;
        if (seen == 0) continue;  // O = 0, LSE = +inf, no gradient.
        double top = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < seen; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += q[qrow + c] * k[kv(j) + c];
          top = std::max(top, pr[j] = dot * scale);
        }
        for (int64_t j = 0; j < seen; ++j) sum += pr[j] = std::exp(pr[j] - top);
        for (int64_t j = 0; j < seen; ++j) pr[j] /= sum;
        r.lse[(b * p.h + h) * p.sq + i] = top + std::log(sum);
        double rowD = 0, rowDMag = 0;
        std::fill(o.begin(), o.end(), 0.0);
        for (int64_t j = 0; j < seen; ++j)
          for (int64_t c = 0; c < d; ++c) o[c] += pr[j] * val[kv(j) + c];
        for (int64_t c = 0; c < d; ++c) {
          r.o[qrow + c] = o[c];
          // D from O as the kernel sees it: rounded to the type.
          double rounded = v.dtype == runtime::DTYPE_F16
                               ? HalfBitsToFloat(FloatToHalfBits(float(o[c])))
                               : Bf16BitsToFloat(FloatToBf16Bits(float(o[c])));
          rowD += dout[qrow + c] * rounded;
          rowDMag += std::fabs(dout[qrow + c] * rounded);
        }
        r.rowD[(b * p.h + h) * p.sq + i] = rowD;
        r.rowDMag[(b * p.h + h) * p.sq + i] = rowDMag;
        if (kvh >= checkedKvHeads) continue;
        for (int64_t j = 0; j < seen; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += dout[qrow + c] * val[kv(j) + c];
          dp[j] = dot;
        }
        for (int64_t j = 0; j < seen; ++j) {
          double ds = pr[j] * (dp[j] - rowD), dsMag = pr[j] * (std::fabs(dp[j]) + std::fabs(rowD));
          for (int64_t c = 0; c < d; ++c) {
            r.dq[qrow + c] += scale * ds * k[kv(j) + c];
            r.dqMag[qrow + c] += scale * dsMag * std::fabs(k[kv(j) + c]);
            r.dk[kv(j) + c] += scale * ds * q[qrow + c];
            r.dkMag[kv(j) + c] += scale * dsMag * std::fabs(q[qrow + c]);
            r.dv[kv(j) + c] += pr[j] * dout[qrow + c];
            r.dvMag[kv(j) + c] += pr[j] * std::fabs(dout[qrow + c]);
          }
        }
      }
  return r;
}

/// Checks a gradient (16-bit bits) against the reference: P and dS are
/// rounded to the type before their GEMMs (half an ulp), the exponentials
/// are approximate and the result is rounded once: a bound of 2^-8 (f16) or
/// 2^-5 (bf16) of the sum's magnitude plus an ulp of the value.
/// Only the elements of heads below `checkedHeads` of the `heads` (rows of
/// `d`) are compared.
void CheckGradient(const char* what, runtime::DType dtype, const std::vector<uint16_t>& got,
                   const std::vector<double>& ref, const std::vector<double>& magnitude, int64_t d,
                   int64_t heads, int64_t checkedHeads, Report& report) {
  const bool f16 = dtype == runtime::DTYPE_F16;
  for (size_t n = 0; n < got.size(); ++n) {
    if ((int64_t(n) / d) % heads >= checkedHeads) continue;
    double value = f16 ? HalfBitsToFloat(got[n]) : Bf16BitsToFloat(got[n]);
    // f16's subnormals below 2^-14 have a fixed quantum of 2^-24: a floor.
    double bound = f16 ? std::ldexp(magnitude[n], -8) + std::ldexp(std::fabs(ref[n]), -10) +
                             std::ldexp(1.0, -24)
                       : std::ldexp(magnitude[n], -5) + std::ldexp(std::fabs(ref[n]), -7);
    bool before = report.mismatches;
    report.max_error =
        std::max(report.max_error, CheckElement(report, int64_t(n), -1, value, ref[n], bound));
    if (!before && report.mismatches) report.detail = absl::StrCat(what, ": ", report.detail);
  }
}

/// Checks D (f32) against float64: a sum of D products, rounded in f32.
void CheckRowSums(const std::vector<float>& got, const Reference& ref, Report& report) {
  for (size_t n = 0; n < got.size(); ++n)
    report.max_error =
        std::max(report.max_error, CheckElement(report, int64_t(n), -1, got[n], ref.rowD[n],
                                                std::ldexp(ref.rowDMag[n], -16) + 1e-30));
}

absl::StatusOr<Report> RunBackward(const LoadedKernel& kernel, const AttentionVariant& v,
                                   const AttentionProblem& p, Part part,
                                   const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  const int64_t d = v.d;
  TESSERA_ASSIGN_OR_RETURN(AttentionInputs in, MakeAttentionInputs(v, p, random));
  Bits16 dout(v.dtype, in.q.bits.size(), random);
  const double scale = double(float(in.scale));
  // At benchmark sizes the gradients of one group of heads are checked.
  const int64_t checkedKvHeads = options.time ? 1 : p.hkv;
  Reference ref = ReferenceGradients(v, p, scale, in.q, in.k, in.val, dout, checkedKvHeads);
  std::vector<uint16_t> o16(ref.o.size());
  for (size_t n = 0; n < o16.size(); ++n)
    o16[n] = v.dtype == runtime::DTYPE_F16 ? FloatToHalfBits(float(ref.o[n]))
                                           : FloatToBf16Bits(float(ref.o[n]));
  std::vector<float> lse32(ref.lse.begin(), ref.lse.end()),
      rowD32(ref.rowD.begin(), ref.rowD.end());
  // The family's base entry: a tuning variant "<entry>__..." or a
  // companion "<base>_pre" / "<base>_dq" names it.
  std::string base = kernel.spec().entry().substr(0, kernel.spec().entry().find("__"));
  if (part != Part::kAll) base = base.substr(0, base.rfind('_'));
  const LoadedKernel *pre = &kernel, *dqKernel = &kernel;
  if (part == Part::kAll) {
    TESSERA_ASSIGN_OR_RETURN(pre, CompanionKernel(base, base + "_pre", options));
    TESSERA_ASSIGN_OR_RETURN(dqKernel, CompanionKernel(base, base + "_dq", options));
  }
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dO, Upload(dout.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer oBuf, Upload(o16));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer lse, Upload(lse32));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer rowD, Upload(rowD32));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, DeviceBuffer::Allocate(o16.size() * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dk, DeviceBuffer::Allocate(in.k.bits.size() * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dv, DeviceBuffer::Allocate(in.k.bits.size() * 2));
  const std::vector<int64_t> qShape{p.b, p.sq, p.h, d}, kShape{p.b, p.skv, p.hkv, d},
      rows{p.b, p.h, p.sq};
  std::vector<KernelArg> inputs = in.Args(v, p);
  inputs.insert(inputs.end(), {TensorArg{dO.ptr(), v.dtype, qShape},
                               TensorArg{lse.ptr(), runtime::DTYPE_F32, rows},
                               TensorArg{rowD.ptr(), runtime::DTYPE_F32, rows}});
  std::vector<KernelArg> preArgs{TensorArg{oBuf.ptr(), v.dtype, qShape},
                                 TensorArg{dO.ptr(), v.dtype, qShape},
                                 TensorArg{rowD.ptr(), runtime::DTYPE_F32, rows}};
  std::vector<KernelArg> dqArgs = inputs, dkdvArgs = inputs;
  dqArgs.insert(dqArgs.end(), {TensorArg{dq.ptr(), v.dtype, qShape}, ScalarArg::F32(float(scale))});
  dkdvArgs.insert(dkdvArgs.end(),
                  {TensorArg{dk.ptr(), v.dtype, kShape}, TensorArg{dv.ptr(), v.dtype, kShape},
                   ScalarArg::F32(float(scale))});
  // The part's kernels in order, each launch checked and packed once: the
  // runs and the timed loop launch the packed forms (as TimeIfAsked does).
  std::vector<std::pair<const LoadedKernel*, runtime::PackedLaunch>> launches;
  launches.reserve(3);
  auto pack = [&](const LoadedKernel& k, const std::vector<KernelArg>& args) -> absl::Status {
    TESSERA_ASSIGN_OR_RETURN(runtime::PackedLaunch packed, runtime::PrepareLaunch(k.spec(), args));
    launches.emplace_back(&k, std::move(packed));
    return absl::OkStatus();
  };
  if (part != Part::kDq) TESSERA_RETURN_IF_ERROR(pack(*pre, preArgs));
  if (part != Part::kPre) TESSERA_RETURN_IF_ERROR(pack(*dqKernel, dqArgs));
  if (part == Part::kAll) TESSERA_RETURN_IF_ERROR(pack(kernel, dkdvArgs));
  auto launch = [&]() -> absl::Status {
    for (auto& [k, packed] : launches) TESSERA_RETURN_IF_ERROR(runtime::Launch(*k, packed));
    return absl::OkStatus();
  };
  std::vector<uint16_t> first[3];
  std::vector<float> firstD;
  for (int run = 0; run < 2; ++run) {
    for (DeviceBuffer* out : {&dq, &dk, &dv}) TESSERA_RETURN_IF_ERROR(out->Fill(kPoisonByte));
    if (part != Part::kDq) TESSERA_RETURN_IF_ERROR(rowD.Fill(kPoisonByte));
    TESSERA_RETURN_IF_ERROR(launch());
    TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
    std::vector<float> gotD(rowD32.size());
    TESSERA_RETURN_IF_ERROR(rowD.CopyToHost(gotD.data(), gotD.size() * 4));
    std::vector<uint16_t> got[3] = {std::vector<uint16_t>(o16.size()),
                                    std::vector<uint16_t>(in.k.bits.size()),
                                    std::vector<uint16_t>(in.k.bits.size())};
    TESSERA_RETURN_IF_ERROR(dq.CopyToHost(got[0].data(), got[0].size() * 2));
    TESSERA_RETURN_IF_ERROR(dk.CopyToHost(got[1].data(), got[1].size() * 2));
    TESSERA_RETURN_IF_ERROR(dv.CopyToHost(got[2].data(), got[2].size() * 2));
    if (run == 0) {
      if (part == Part::kPre) CheckRowSums(gotD, ref, report);
      const int64_t checkedHeads = checkedKvHeads * (p.h / p.hkv);
      if (part != Part::kPre)
        CheckGradient("dQ", v.dtype, got[0], ref.dq, ref.dqMag, d, p.h, checkedHeads, report);
      if (part == Part::kAll) {
        CheckGradient("dK", v.dtype, got[1], ref.dk, ref.dkMag, d, p.hkv, checkedKvHeads, report);
        CheckGradient("dV", v.dtype, got[2], ref.dv, ref.dvMag, d, p.hkv, checkedKvHeads, report);
      }
      for (int n = 0; n < 3; ++n) first[n] = std::move(got[n]);
      firstD = std::move(gotD);
    } else if (got[0] != first[0] || got[1] != first[1] || got[2] != first[2] ||
               std::memcmp(gotD.data(), firstD.data(), gotD.size() * 4) != 0) {
      if (report.mismatches == 0)
        report.detail = "a second run gave other bits (not deterministic)";
      ++report.mismatches;
    }
  }
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * (4 * in.q.bits.size() + 4 * in.k.bits.size()) + 8.0 * lse32.size();
  // FlashAttention's count: 2.5 times the forward's 4 b h Sq Skv D, half
  // causal (for the whole backward; the D kernel alone is its bytes).
  report.flops =
      part == Part::kPre ? 0.0 : 2.5 * 4.0 * p.b * p.h * p.sq * p.skv * d * (v.causal ? 0.5 : 1.0);
  if (options.time && (report.correct || options.time_wrong)) {
    TESSERA_ASSIGN_OR_RETURN(report.timing, runtime::TimeIt(launch, options.timing));
  }
  return report;
}

Workload Make(const AttentionVariant& v, const AttentionProblem& p, Part part, bool benchmark) {
  std::string name =
      absl::StrFormat("%s/b%d_sq%d_skv%d_h%d_hkv%d", v.kernel, p.b, p.sq, p.skv, p.h, p.hkv);
  return MakeWorkload(name, v.kernel, /*conformance=*/!benchmark, benchmark,
                      [v, p, part](const LoadedKernel& kernel, const RunOptions& options) {
                        return RunBackward(kernel, v, p, part, options);
                      });
}

}  // namespace

std::vector<Workload> FlashAttentionBwdWorkloads() {
  // Lengths off the blocks, Sq < Skv and Sq > Skv (causal: rows that see no
  // key), grouped heads (2:1, 3:1), one row against one key.
  const AttentionProblem kConformance[] = {
      {2, 77, 131, 4, 2}, {1, 200, 150, 3, 1}, {1, 128, 128, 2, 2}, {1, 1, 1, 1, 1}};
  std::vector<Workload> list;
  const std::pair<const char*, Part> kParts[] = {
      {"", Part::kAll}, {"_pre", Part::kPre}, {"_dq", Part::kDq}};
  for (auto [suffix, part] : kParts) {
    AttentionVariant v{absl::StrCat("flash_attention_bwd", suffix), runtime::DTYPE_F16, 128, false};
    for (const AttentionProblem& p : kConformance) list.push_back(Make(v, p, part, false));
    // The benchmark's reference costs b h Sq Skv D on the host: a modest size.
    list.push_back(Make(v, {1, 2048, 2048, 8, 8}, part, true));
  }
  // The family (the example's knobs, tessera.ops, and the conformance
  // suite's causal bf16 d64 and f16 d128): the causal mask with Sq > Skv
  // (rows that see no key), bf16, head dimensions 64 and 128.
  for (auto [dtype, name] :
       {std::pair{runtime::DTYPE_F16, "f16"}, std::pair{runtime::DTYPE_BF16, "bf16"}}) {
    for (int64_t d : {64, 128}) {
      for (bool causal : {false, true}) {
        for (auto [suffix, part] : kParts) {
          AttentionVariant v{
              absl::StrCat("flash_attention_bwd_", name, "_d", d, causal ? "_causal" : "", suffix),
              dtype, d, causal};
          for (const AttentionProblem& p : kConformance) list.push_back(Make(v, p, part, false));
        }
      }
    }
  }
  return list;
}

}  // namespace tessera::workloads
