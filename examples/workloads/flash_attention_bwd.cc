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
#include <functional>
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

/// One backward problem laid out as the kernels take it: the float64
/// reference, the forward's O, LSE and D as the kernels read them, the
/// inputs on the device, the three kernels' arguments, and what is checked
/// (the gradients of the query heads of the first `checkedKvHeads` key
/// heads).
struct BackwardCase {
  Reference ref;
  std::vector<uint16_t> o16;
  std::vector<float> lse32, rowD32;
  int64_t qElements = 0, kElements = 0, h = 0, hkv = 0, checkedKvHeads = 0;
  std::vector<DeviceBuffer> buffers;  // the inputs, kept alive
  DeviceBuffer rowD, dq, dk, dv;
  std::vector<KernelArg> preArgs, dqArgs, dkdvArgs;
  double flops = 0;
};

/// The forward's O (rounded to the type), LSE and D (f32) from the reference.
void RoundForward(const AttentionVariant& v, BackwardCase& c) {
  c.o16.resize(c.ref.o.size());
  for (size_t n = 0; n < c.o16.size(); ++n)
    c.o16[n] = v.dtype == runtime::DTYPE_F16 ? FloatToHalfBits(float(c.ref.o[n]))
                                             : FloatToBf16Bits(float(c.ref.o[n]));
  c.lse32.assign(c.ref.lse.begin(), c.ref.lse.end());
  c.rowD32.assign(c.ref.rowD.begin(), c.ref.rowD.end());
}

/// Uploads `host` into a buffer `c` keeps, and returns its address.
template <typename T>
absl::StatusOr<CUdeviceptr> Keep(BackwardCase& c, const std::vector<T>& host) {
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer buffer, Upload(host));
  c.buffers.push_back(std::move(buffer));
  return c.buffers.back().ptr();
}

/// Allocates the outputs and the D buffer (uploaded: the dQ kernel alone
/// reads the float64 D).
absl::Status AllocateOutputs(BackwardCase& c) {
  TESSERA_ASSIGN_OR_RETURN(c.rowD, Upload(c.rowD32));
  TESSERA_ASSIGN_OR_RETURN(c.dq, DeviceBuffer::Allocate(c.qElements * 2));
  TESSERA_ASSIGN_OR_RETURN(c.dk, DeviceBuffer::Allocate(c.kElements * 2));
  TESSERA_ASSIGN_OR_RETURN(c.dv, DeviceBuffer::Allocate(c.kElements * 2));
  return absl::OkStatus();
}

/// The fixed-length problem p: Q, K, V and dO random, [B, S, heads, D].
absl::StatusOr<BackwardCase> FixedLengthCase(const AttentionVariant& v, const AttentionProblem& p,
                                             bool time, Random& random) {
  BackwardCase c;
  const int64_t d = v.d;
  TESSERA_ASSIGN_OR_RETURN(AttentionInputs in, MakeAttentionInputs(v, p, random));
  Bits16 dout(v.dtype, in.q.bits.size(), random);
  const double scale = double(float(in.scale));
  // At benchmark sizes the gradients of one group of heads are checked.
  c.checkedKvHeads = time ? 1 : p.hkv;
  c.ref = ReferenceGradients(v, p, scale, in.q, in.k, in.val, dout, c.checkedKvHeads);
  RoundForward(v, c);
  c.qElements = int64_t(in.q.bits.size()), c.kElements = int64_t(in.k.bits.size());
  c.h = p.h, c.hkv = p.hkv;
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dO, Keep(c, dout.bits));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr o, Keep(c, c.o16));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr lse, Keep(c, c.lse32));
  TESSERA_RETURN_IF_ERROR(AllocateOutputs(c));
  const std::vector<int64_t> qShape{p.b, p.sq, p.h, d}, kShape{p.b, p.skv, p.hkv, d},
      rows{p.b, p.h, p.sq};
  std::vector<KernelArg> inputs = in.Args(v, p);
  inputs.insert(inputs.end(),
                {TensorArg{dO, v.dtype, qShape}, TensorArg{lse, runtime::DTYPE_F32, rows},
                 TensorArg{c.rowD.ptr(), runtime::DTYPE_F32, rows}});
  c.preArgs = {TensorArg{o, v.dtype, qShape}, TensorArg{dO, v.dtype, qShape},
               TensorArg{c.rowD.ptr(), runtime::DTYPE_F32, rows}};
  c.dqArgs = c.dkdvArgs = inputs;
  c.dqArgs.insert(c.dqArgs.end(),
                  {TensorArg{c.dq.ptr(), v.dtype, qShape}, ScalarArg::F32(float(scale))});
  c.dkdvArgs.insert(c.dkdvArgs.end(),
                    {TensorArg{c.dk.ptr(), v.dtype, kShape}, TensorArg{c.dv.ptr(), v.dtype, kShape},
                     ScalarArg::F32(float(scale))});
  c.buffers.push_back(std::move(in.dq));
  c.buffers.push_back(std::move(in.dk));
  c.buffers.push_back(std::move(in.dv));
  // FlashAttention's count: 2.5 times the forward's 4 b h Sq Skv D, half
  // causal (for the whole backward; the D kernel alone is its bytes).
  c.flops = 2.5 * 4.0 * p.b * p.h * p.sq * p.skv * d * (v.causal ? 0.5 : 1.0);
  return c;
}

/// Copies `part` (one sequence's [rows, heads, D] values) into `packed`
/// at row `start`.
void PlaceRows(const std::vector<double>& part, int64_t start, int64_t rowElements,
               std::vector<double>& packed) {
  std::copy(part.begin(), part.end(), packed.begin() + start * rowElements);
}

/// Copies one sequence's row values [1, H, lq] into packed [H, Tq] at
/// column `start`.
void PlaceRowValues(const std::vector<double>& part, int64_t start, int64_t h, int64_t lq,
                    int64_t tq, std::vector<double>& packed) {
  for (int64_t head = 0; head < h; ++head)
    std::copy_n(part.begin() + head * lq, lq, packed.begin() + head * tq + start);
}

/// The varlen problem p: Q, K, V and dO random, packed ([T, heads, D]),
/// each sequence's reference computed alone and placed at its rows.
absl::StatusOr<BackwardCase> VarlenCase(const AttentionVariant& v, const VarlenProblem& p,
                                        bool time, Random& random) {
  BackwardCase c;
  const int64_t d = v.d;
  const std::vector<int32_t> cuq = VarlenProblem::Cumulative(p.lq),
                             cuk = VarlenProblem::Cumulative(p.lk);
  const int64_t tq = cuq.back(), tk = cuk.back(), batch1 = int64_t(cuq.size());
  Bits16 q(v.dtype, tq * p.h * d, random), k(v.dtype, tk * p.hkv * d, random),
      val(v.dtype, tk * p.hkv * d, random), dout(v.dtype, tq * p.h * d, random);
  const double scale = double(float(1.25 / std::sqrt(double(d))));
  c.checkedKvHeads = time ? 1 : p.hkv;
  c.qElements = tq * p.h * d, c.kElements = tk * p.hkv * d, c.h = p.h, c.hkv = p.hkv;
  Reference& r = c.ref;
  for (auto* x : {&r.o, &r.dq, &r.dqMag}) x->assign(c.qElements, 0);
  for (auto* x : {&r.dk, &r.dv, &r.dkMag, &r.dvMag}) x->assign(c.kElements, 0);
  r.lse.assign(p.h * tq, 0), r.rowD.assign(p.h * tq, 0), r.rowDMag.assign(p.h * tq, 0);
  for (size_t b = 0; b < p.lq.size(); ++b) {
    AttentionProblem one{1, p.lq[b], p.lk[b], p.h, p.hkv};
    Reference part =
        ReferenceGradients(v, one, scale, SequenceRows(q, cuq, b, p.h * d),
                           SequenceRows(k, cuk, b, p.hkv * d), SequenceRows(val, cuk, b, p.hkv * d),
                           SequenceRows(dout, cuq, b, p.h * d), c.checkedKvHeads);
    for (auto [from, to] : {std::pair{&part.o, &r.o}, {&part.dq, &r.dq}, {&part.dqMag, &r.dqMag}})
      PlaceRows(*from, cuq[b], p.h * d, *to);
    for (auto [from, to] : {std::pair{&part.dk, &r.dk},
                            {&part.dv, &r.dv},
                            {&part.dkMag, &r.dkMag},
                            {&part.dvMag, &r.dvMag}})
      PlaceRows(*from, cuk[b], p.hkv * d, *to);
    for (auto [from, to] :
         {std::pair{&part.lse, &r.lse}, {&part.rowD, &r.rowD}, {&part.rowDMag, &r.rowDMag}})
      PlaceRowValues(*from, cuq[b], p.h, p.lq[b], tq, *to);
  }
  RoundForward(v, c);
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dq, Keep(c, q.bits));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dk, Keep(c, k.bits));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dv, Keep(c, val.bits));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dO, Keep(c, dout.bits));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr o, Keep(c, c.o16));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr lse, Keep(c, c.lse32));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dcuq, Keep(c, cuq));
  TESSERA_ASSIGN_OR_RETURN(CUdeviceptr dcuk, Keep(c, cuk));
  TESSERA_RETURN_IF_ERROR(AllocateOutputs(c));
  const std::vector<int64_t> qShape{tq, p.h, d}, kShape{tk, p.hkv, d}, rows{p.h, tq};
  std::vector<KernelArg> inputs{TensorArg{dq, v.dtype, qShape},
                                TensorArg{dk, v.dtype, kShape},
                                TensorArg{dv, v.dtype, kShape},
                                TensorArg{dO, v.dtype, qShape},
                                TensorArg{lse, runtime::DTYPE_F32, rows},
                                TensorArg{c.rowD.ptr(), runtime::DTYPE_F32, rows},
                                TensorArg{dcuq, runtime::DTYPE_I32, {batch1}},
                                TensorArg{dcuk, runtime::DTYPE_I32, {batch1}}};
  c.preArgs = {TensorArg{o, v.dtype, qShape}, TensorArg{dO, v.dtype, qShape},
               TensorArg{c.rowD.ptr(), runtime::DTYPE_F32, rows}};
  c.dqArgs = c.dkdvArgs = inputs;
  c.dqArgs.insert(c.dqArgs.end(), {TensorArg{c.dq.ptr(), v.dtype, qShape},
                                   ScalarArg::I32(int32_t(VarlenProblem::Longest(p.lq))),
                                   ScalarArg::F32(float(scale))});
  c.dkdvArgs.insert(
      c.dkdvArgs.end(),
      {TensorArg{c.dk.ptr(), v.dtype, kShape}, TensorArg{c.dv.ptr(), v.dtype, kShape},
       ScalarArg::I32(int32_t(VarlenProblem::Longest(p.lk))), ScalarArg::F32(float(scale))});
  c.flops = 2.5 * p.Flops(d, v.causal);
  return c;
}

absl::StatusOr<Report> RunBackward(const LoadedKernel& kernel, const AttentionVariant& v, Part part,
                                   const RunOptions& options, BackwardCase& c) {
  Report report;
  report.target = kernel.spec().target();
  const int64_t d = v.d;
  const Reference& ref = c.ref;
  // The family's base entry: a tuning variant "<entry>__..." or a
  // companion "<base>_pre" / "<base>_dq" names it.
  std::string base = kernel.spec().entry().substr(0, kernel.spec().entry().find("__"));
  if (part != Part::kAll) base = base.substr(0, base.rfind('_'));
  const LoadedKernel *pre = &kernel, *dqKernel = &kernel;
  if (part == Part::kAll) {
    TESSERA_ASSIGN_OR_RETURN(pre, CompanionKernel(base, base + "_pre", options));
    TESSERA_ASSIGN_OR_RETURN(dqKernel, CompanionKernel(base, base + "_dq", options));
  }
  // The part's kernels in order, each launch checked and packed once: the
  // runs and the timed loop launch the packed forms (as TimeIfAsked does).
  std::vector<std::pair<const LoadedKernel*, runtime::PackedLaunch>> launches;
  launches.reserve(3);
  auto pack = [&](const LoadedKernel& k, const std::vector<KernelArg>& args) -> absl::Status {
    TESSERA_ASSIGN_OR_RETURN(runtime::PackedLaunch packed, runtime::PrepareLaunch(k.spec(), args));
    launches.emplace_back(&k, std::move(packed));
    return absl::OkStatus();
  };
  if (part != Part::kDq) TESSERA_RETURN_IF_ERROR(pack(*pre, c.preArgs));
  if (part != Part::kPre) TESSERA_RETURN_IF_ERROR(pack(*dqKernel, c.dqArgs));
  if (part == Part::kAll) TESSERA_RETURN_IF_ERROR(pack(kernel, c.dkdvArgs));
  auto launch = [&]() -> absl::Status {
    for (auto& [k, packed] : launches) TESSERA_RETURN_IF_ERROR(runtime::Launch(*k, packed));
    return absl::OkStatus();
  };
  std::vector<uint16_t> first[3];
  std::vector<float> firstD;
  for (int run = 0; run < 2; ++run) {
    for (DeviceBuffer* out : {&c.dq, &c.dk, &c.dv}) TESSERA_RETURN_IF_ERROR(out->Fill(kPoisonByte));
    if (part != Part::kDq) TESSERA_RETURN_IF_ERROR(c.rowD.Fill(kPoisonByte));
    TESSERA_RETURN_IF_ERROR(launch());
    TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
    std::vector<float> gotD(c.rowD32.size());
    TESSERA_RETURN_IF_ERROR(c.rowD.CopyToHost(gotD.data(), gotD.size() * 4));
    std::vector<uint16_t> got[3] = {std::vector<uint16_t>(c.qElements),
                                    std::vector<uint16_t>(c.kElements),
                                    std::vector<uint16_t>(c.kElements)};
    TESSERA_RETURN_IF_ERROR(c.dq.CopyToHost(got[0].data(), got[0].size() * 2));
    TESSERA_RETURN_IF_ERROR(c.dk.CopyToHost(got[1].data(), got[1].size() * 2));
    TESSERA_RETURN_IF_ERROR(c.dv.CopyToHost(got[2].data(), got[2].size() * 2));
    if (run == 0) {
      if (part == Part::kPre) CheckRowSums(gotD, ref, report);
      const int64_t checkedHeads = c.checkedKvHeads * (c.h / c.hkv);
      if (part != Part::kPre)
        CheckGradient("dQ", v.dtype, got[0], ref.dq, ref.dqMag, d, c.h, checkedHeads, report);
      if (part == Part::kAll) {
        CheckGradient("dK", v.dtype, got[1], ref.dk, ref.dkMag, d, c.hkv, c.checkedKvHeads, report);
        CheckGradient("dV", v.dtype, got[2], ref.dv, ref.dvMag, d, c.hkv, c.checkedKvHeads, report);
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
  report.bytes = 2.0 * (4 * c.qElements + 4 * c.kElements) + 8.0 * c.lse32.size();
  report.flops = part == Part::kPre ? 0.0 : c.flops;
  if (options.time && (report.correct || options.time_wrong)) {
    TESSERA_ASSIGN_OR_RETURN(report.timing, runtime::TimeIt(launch, options.timing));
  }
  return report;
}

/// A workload of `part` whose problem `setup` lays out (given whether the
/// run is timed, and the workload's random numbers).
Workload MakeBackward(
    std::string name, const AttentionVariant& v, Part part, bool benchmark,
    std::function<absl::StatusOr<BackwardCase>(bool time, Random& random)> setup) {
  return MakeWorkload(std::move(name), v.kernel, /*conformance=*/!benchmark, benchmark,
                      [v, part, setup](const LoadedKernel& kernel,
                                       const RunOptions& options) -> absl::StatusOr<Report> {
                        Random random(options.seed);
                        TESSERA_ASSIGN_OR_RETURN(BackwardCase c, setup(options.time, random));
                        return RunBackward(kernel, v, part, options, c);
                      });
}

Workload Make(const AttentionVariant& v, const AttentionProblem& p, Part part, bool benchmark) {
  return MakeBackward(
      absl::StrFormat("%s/b%d_sq%d_skv%d_h%d_hkv%d", v.kernel, p.b, p.sq, p.skv, p.h, p.hkv), v,
      part, benchmark,
      [v, p](bool time, Random& random) { return FixedLengthCase(v, p, time, random); });
}

Workload MakeVarlen(const AttentionVariant& v, const VarlenProblem& p, Part part,
                    bool benchmark = false) {
  return MakeBackward(absl::StrCat(v.kernel, "/", p.Name()), v, part, benchmark,
                      [v, p](bool time, Random& random) { return VarlenCase(v, p, time, random); });
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
  // The packed batch's three kernels (the dK/dV one names the family).
  for (auto [dtype, name] :
       {std::pair{runtime::DTYPE_F16, "f16"}, std::pair{runtime::DTYPE_BF16, "bf16"}}) {
    for (int64_t d : {64, 128}) {
      for (bool causal : {false, true}) {
        for (auto [suffix, part] : kParts) {
          AttentionVariant v{absl::StrCat("flash_attention_bwd_varlen_", name, "_d", d,
                                          causal ? "_causal" : "", suffix),
                             dtype, d, causal};
          for (const VarlenProblem& p : VarlenConformanceProblems())
            list.push_back(MakeVarlen(v, p, part));
          // The whole backward's benchmark: 8k tokens in 7 sequences of
          // 128 to 2048, 8 heads (the reference, every head's forward and
          // one head's gradients, costs seconds on the host).
          if (part == Part::kAll && d == 128)
            list.push_back(MakeVarlen(v,
                                      {{2048, 512, 1024, 1536, 896, 128, 2048},
                                       {2048, 512, 1024, 1536, 896, 128, 2048},
                                       8,
                                       8},
                                      part, /*benchmark=*/true));
        }
      }
    }
  }
  return list;
}

}  // namespace tessera::workloads
