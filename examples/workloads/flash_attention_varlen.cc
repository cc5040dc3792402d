//===- flash_attention_varlen.cc - Packed-batch FlashAttention workloads --===//
//
// This file implements the workloads of FlashAttention's varlen form
// (flash_attention_varlen_*): sequences of different lengths packed end to
// end, Q [Tq, H, D], K and V [Tk, Hkv, D] random in [-1, 1), CuQ and CuK
// their cumulative lengths, O and LSE [H, Tq] poisoned. Every row belongs
// to a sequence, so every row of O and LSE is checked (against float64
// attention of its own sequence, as the fixed-length workloads check one
// sequence): a row written by another sequence's block, or not at all,
// fails. Lengths of 0, 1, odd and longer than a block; Sq < Skv and Sq >
// Skv within one batch; grouped heads.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "examples/workloads/attention_check.h"
#include "examples/workloads/flash_attention.h"
#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"

namespace tessera::workloads {

using namespace internal;

std::vector<int32_t> VarlenProblem::Cumulative(const std::vector<int64_t>& lengths) {
  std::vector<int32_t> cu(1, 0);
  for (int64_t n : lengths) cu.push_back(cu.back() + int32_t(n));
  return cu;
}

int64_t VarlenProblem::Longest(const std::vector<int64_t>& lengths) {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

double VarlenProblem::Flops(int64_t d, bool causal) const {
  double flops = 0;
  for (size_t b = 0; b < lq.size(); ++b) {
    // Causal: the pairs (i, j) with j <= i + Skv - Sq.
    double pairs = double(lq[b]) * double(lk[b]);
    if (causal) {
      pairs = 0;
      for (int64_t i = 0; i < lq[b]; ++i)
        pairs += double(std::clamp<int64_t>(i + lk[b] - lq[b] + 1, 0, lk[b]));
    }
    flops += 4.0 * double(h) * pairs * double(d);
  }
  return flops;
}

std::string VarlenProblem::Name() const {
  if (lq == lk && lq.size() > 6)
    return absl::StrFormat("n%d_t%d_h%d_hkv%d", lq.size(), Cumulative(lq).back(), h, hkv);
  return absl::StrFormat("q%s_k%s_h%d_hkv%d", absl::StrJoin(lq, "-"), absl::StrJoin(lk, "-"), h,
                         hkv);
}

Bits16 internal::SequenceRows(const Bits16& packed, const std::vector<int32_t>& cu, size_t b,
                              int64_t rowElements) {
  auto first = packed.bits.begin() + cu[b] * rowElements;
  return Bits16(packed.dtype,
                std::vector<uint16_t>(first, first + (cu[b + 1] - cu[b]) * rowElements));
}

namespace {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

/// Checks every row of sequence b (or `sampled` rows drawn from `random`):
/// its slices of Q, K, V, O and LSE as a one-sequence problem of the
/// fixed-length check.
void CheckSequence(const AttentionVariant& v, const VarlenProblem& p, size_t b, double scale,
                   const Bits16& q, const Bits16& k, const Bits16& val,
                   const std::vector<uint16_t>& out, const std::vector<float>& lse, int64_t sampled,
                   Random& random, Report& report) {
  const std::vector<int32_t> cuq = VarlenProblem::Cumulative(p.lq),
                             cuk = VarlenProblem::Cumulative(p.lk);
  const int64_t tq = cuq.back(), sq = p.lq[b], d = v.d;
  AttentionProblem one{1, sq, p.lk[b], p.h, p.hkv};
  Bits16 qb = SequenceRows(q, cuq, b, p.h * d), kb = SequenceRows(k, cuk, b, p.hkv * d),
         vb = SequenceRows(val, cuk, b, p.hkv * d);
  std::vector<uint16_t> ob(out.begin() + cuq[b] * p.h * d, out.begin() + cuq[b + 1] * p.h * d);
  std::vector<float> lseb(p.h * sq);
  for (int64_t h = 0; h < p.h; ++h)
    std::copy_n(lse.begin() + h * tq + cuq[b], sq, lseb.begin() + h * sq);
  Report part;
  if (sq > 0) CheckAttentionRows(v, one, scale, qb, kb, vb, ob, lseb, sampled, random, part);
  report.checked += part.checked;
  report.max_error = std::max(report.max_error, part.max_error);
  if (part.mismatches && !report.mismatches)
    report.detail =
        absl::StrCat("sequence ", b, " (", sq, " queries, ", p.lk[b], " keys): ", part.detail);
  report.mismatches += part.mismatches;
}

absl::StatusOr<Report> RunVarlenForward(const LoadedKernel& kernel, const AttentionVariant& v,
                                        const VarlenProblem& p, bool sampled,
                                        const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  const int64_t d = v.d;
  const std::vector<int32_t> cuq = VarlenProblem::Cumulative(p.lq),
                             cuk = VarlenProblem::Cumulative(p.lk);
  const int64_t tq = cuq.back(), tk = cuk.back(), batch1 = int64_t(cuq.size());
  Bits16 q(v.dtype, tq * p.h * d, random), k(v.dtype, tk * p.hkv * d, random),
      val(v.dtype, tk * p.hkv * d, random);
  const double scale = double(float(1.25 / std::sqrt(double(d))));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, Upload(q.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dk, Upload(k.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dv, Upload(val.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dcuq, Upload(cuq));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dcuk, Upload(cuk));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(q.bits.size() * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlse, DeviceBuffer::Allocate(p.h * tq * 4));
  TESSERA_RETURN_IF_ERROR(dlse.Fill(kPoisonByte));
  std::vector<KernelArg> args{TensorArg{dq.ptr(), v.dtype, {tq, p.h, d}},
                              TensorArg{dk.ptr(), v.dtype, {tk, p.hkv, d}},
                              TensorArg{dv.ptr(), v.dtype, {tk, p.hkv, d}},
                              TensorArg{dout.ptr(), v.dtype, {tq, p.h, d}},
                              TensorArg{dlse.ptr(), runtime::DTYPE_F32, {p.h, tq}},
                              TensorArg{dcuq.ptr(), runtime::DTYPE_I32, {batch1}},
                              TensorArg{dcuk.ptr(), runtime::DTYPE_I32, {batch1}},
                              ScalarArg::I32(int32_t(VarlenProblem::Longest(p.lq))),
                              ScalarArg::F32(float(scale))};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dout, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> out(q.bits.size());
  std::vector<float> lse(p.h * tq);
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(out.data(), out.size() * 2));
  TESSERA_RETURN_IF_ERROR(dlse.CopyToHost(lse.data(), lse.size() * 4));
  // At benchmark sizes 8 rows a sequence (a float64 row costs Skv D).
  for (size_t b = 0; b < p.lq.size(); ++b)
    CheckSequence(v, p, b, scale, q, k, val, out, lse, sampled ? 8 : 0, random, report);
  report.correct = report.mismatches == 0;
  report.bytes = 2.0 * (2 * q.bits.size() + 2 * k.bits.size()) + 4.0 * lse.size();
  report.flops = p.Flops(d, v.causal);
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

}  // namespace

std::vector<VarlenProblem> VarlenConformanceProblems() {
  // Sq < Skv and Sq > Skv in one batch, one row against one key, lengths
  // past a block (and exactly one), grouped heads 2:1 and 3:1; an empty
  // query sequence and an empty key sequence (its rows see no key).
  return {{{77, 1, 200, 130}, {131, 1, 150, 130}, 4, 2},
          {{0, 257, 3, 64}, {64, 255, 0, 64}, 3, 1},
          {{300, 17, 128}, {300, 17, 128}, 2, 2}};
}

std::vector<VarlenProblem> VarlenBenchmarkProblems() {
  // 16k tokens of mixed lengths (FlashAttention's varlen benchmarks pack
  // sequences of 512 to 4k tokens), 16 heads.
  // benchmarks/peers.py --varlen times torch's on the same lengths.
  const std::vector<int64_t> lengths = {4096, 512, 2048, 1024, 3072, 768, 1536, 2560, 640, 128};
  return {{lengths, lengths, 16, 16}};
}

std::vector<Workload> FlashAttentionVarlenWorkloads() {
  std::vector<Workload> list;
  for (runtime::DType dtype : {runtime::DTYPE_F16, runtime::DTYPE_BF16}) {
    for (int64_t d : {64, 128}) {
      for (bool causal : {false, true}) {
        AttentionVariant v{
            absl::StrCat("flash_attention_varlen_", dtype == runtime::DTYPE_F16 ? "f16" : "bf16",
                         "_d", d, causal ? "_causal" : ""),
            dtype, d, causal};
        auto make = [&](const VarlenProblem& p, bool benchmark) {
          return MakeWorkload(
              absl::StrCat(v.kernel, "/", p.Name()), v.kernel,
              /*conformance=*/!benchmark, benchmark,
              [v, p, benchmark](const LoadedKernel& kernel, const RunOptions& options) {
                return RunVarlenForward(kernel, v, p, benchmark, options);
              });
        };
        for (const VarlenProblem& p : VarlenConformanceProblems()) list.push_back(make(p, false));
        for (const VarlenProblem& p : VarlenBenchmarkProblems()) list.push_back(make(p, true));
      }
    }
  }
  return list;
}

}  // namespace tessera::workloads
