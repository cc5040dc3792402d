//===- flash_decoding.cc - The flash-decoding workloads -------------------===//
//
// This file implements the workloads of examples/flash_decoding.cc and
// examples/mla_decode.cc: a split pass and its combine launched in turn
// (the combine is the runner's companion kernel), O and LSE checked against
// float64 attention with the new tokens causal among themselves; and the
// combine alone on random partial results, some parts empty.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "examples/decode_parts.h"
#include "examples/workloads/attention_check.h"
#include "examples/workloads/internal.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace tessera::workloads::internal {
namespace {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::ScalarArg;
using runtime::TensorArg;

constexpr int64_t kHeadDim = 128, kMaxSplits = 64;
constexpr char kCombine[] = "flash_decoding_combine";

/// The launcher's split count for `blocks` blocks a part over `keys` keys:
/// DecodeParts (examples/decode_parts.h) with the split kernel's resident blocks (the SM count
/// where the driver gives none), at most `maxParts`. TESSERA_DECODE_PARTS=N
/// overrides it (a tuning experiment).
int64_t SplitsFor(const LoadedKernel& split, const runtime::Device& device, int64_t blocks,
                  int64_t keys, int64_t maxParts = kMaxSplits) {
  int64_t forced = 0;
  if (const char* parts = std::getenv("TESSERA_DECODE_PARTS"))
    if (std::sscanf(parts, "%" SCNd64, &forced) == 1 && forced > 0)
      return std::min(forced, maxParts);
  const int64_t resident = split.resident_blocks() > 0 ? split.resident_blocks()
                                                       : int64_t(device.sm_count());
  return examples::DecodeParts(blocks, keys, resident, maxParts);
}

/// Sequences of lengths `lens` in pages of `pageSize` rows, each sequence's
/// pages in a shuffled order through a pool with one spare page; table
/// entries past a sequence's pages are -1 (never read).
struct PagedCache {
  int64_t pages = 1, maxPages = 0, pageSize;
  std::vector<int32_t> table;
  /// The pool row holding key j of sequence s.
  int64_t Row(int64_t s, int64_t j) const {
    return table[s * maxPages + j / pageSize] * pageSize + j % pageSize;
  }
  /// Sequence s's first `len` rows of `pool` (`rowElements` values each),
  /// gathered in order from its pages.
  Bits16 Gather(const Bits16& pool, int64_t s, int64_t len, int64_t rowElements) const {
    std::vector<uint16_t> rows(len * rowElements);
    for (int64_t j = 0; j < len; ++j)
      std::copy_n(pool.bits.begin() + Row(s, j) * rowElements, rowElements,
                  rows.begin() + j * rowElements);
    return Bits16(pool.dtype, std::move(rows));
  }
  /// Sets the rows of each sequence's last page past its length (of
  /// `rowElements` 16-bit values each in `pool`) to NaN: a kernel must not
  /// let them into its sums (P's zeros times NaN are NaN).
  void PoisonTails(const std::vector<int64_t>& lens, int64_t rowElements, Bits16& pool) const {
    const uint16_t nan = pool.dtype == runtime::DTYPE_F16 ? 0x7E00 : 0x7FC0;
    for (int64_t s = 0; s < int64_t(lens.size()); ++s)
      for (int64_t j = lens[s]; j % pageSize != 0; ++j)
        std::fill_n(pool.bits.begin() + Row(s, j) * rowElements, rowElements, nan);
  }
};
PagedCache ShufflePages(const std::vector<int64_t>& lens, int64_t pageSize, Random& random) {
  PagedCache cache;
  cache.pageSize = pageSize;
  auto pagesOf = [&](int64_t len) { return (len + pageSize - 1) / pageSize; };
  for (int64_t len : lens) {
    cache.maxPages = std::max(cache.maxPages, pagesOf(len) + 1);
    cache.pages += pagesOf(len);
  }
  std::vector<int32_t> order(cache.pages);
  for (int64_t i = 0; i < cache.pages; ++i) order[i] = int32_t(i);
  for (int64_t i = cache.pages - 1; i > 0; --i) std::swap(order[i], order[random.Index(i + 1)]);
  cache.table.assign(lens.size() * cache.maxPages, -1);
  for (int64_t s = 0, next = 0; s < int64_t(lens.size()); ++s)
    for (int64_t k = 0; k < pagesOf(lens[s]); ++k)
      cache.table[s * cache.maxPages + k] = order[next++];
  return cache;
}

/// One decode step: the split pass over `inputs` (Q, K, V and, paged, the
/// table and lengths) into partial results of `parts` parts, then the
/// combine into O [B, Sq, H, d] (`dtype`) and LSE [B, Sq, H] (read back as
/// [B, H, Sq]), poisoned before. A split pass that `splitWritesFinal`
/// (flash-decoding's) takes O and LSE too and, with one part and one new
/// token, writes them itself: no combine. The split pass is tuned first
/// when the options name candidates (ranked alone: the combine is the same
/// after each).
struct DecodeStep {
  std::vector<DeviceBuffer> buffers;  // OP, LSEP, O, LSE
  runtime::PackedLaunch split, combine;
  const LoadedKernel* splitKernel = nullptr;
  const LoadedKernel* combineKernel = nullptr;
  std::vector<uint16_t> out;
  std::vector<float> lse;

  bool combines = true;  // False with one part: the split pass writes O and LSE.

  absl::Status Launch() {
    TESSERA_RETURN_IF_ERROR(runtime::Launch(*splitKernel, split));
    return combines ? runtime::Launch(*combineKernel, combine) : absl::OkStatus();
  }
};

absl::StatusOr<DecodeStep> RunDecodeStep(const LoadedKernel& split, const LoadedKernel& combine,
                                         std::vector<KernelArg> inputs, float scale, int64_t b,
                                         int64_t sq, int64_t h, int64_t d, runtime::DType dtype,
                                         int64_t parts, bool splitWritesFinal,
                                         const RunOptions& options, Report& report) {
  const int64_t rows = b * sq * h;
  DecodeStep step;
  step.combineKernel = &combine;
  for (int64_t bytes : {rows * parts * d * 4, rows * parts * 4, rows * d * 2, rows * 4}) {
    TESSERA_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(bytes));
    TESSERA_RETURN_IF_ERROR(buffer.Fill(kPoisonByte));
    step.buffers.push_back(std::move(buffer));
  }
  TensorArg op{step.buffers[0].ptr(), runtime::DTYPE_F32, {b, sq, h, parts, d}};
  TensorArg lsep{step.buffers[1].ptr(), runtime::DTYPE_F32, {b, sq, parts, h}};
  TensorArg o{step.buffers[2].ptr(), dtype, {b, sq, h, d}};
  TensorArg lse{step.buffers[3].ptr(), runtime::DTYPE_F32, {b, sq, h}};
  std::vector<KernelArg> splitArgs = std::move(inputs);
  splitArgs.insert(splitArgs.end(), {op, lsep});
  if (splitWritesFinal) splitArgs.insert(splitArgs.end(), {o, lse});
  splitArgs.push_back(ScalarArg::F32(scale));
  std::vector<KernelArg> combineArgs = {op, lsep, o, lse};
  step.combines = !(splitWritesFinal && parts == 1 && sq == 1);
  TESSERA_ASSIGN_OR_RETURN(step.splitKernel,
                           TuneAndLaunch(split, splitArgs, options, step.buffers[0], report));
  TESSERA_ASSIGN_OR_RETURN(step.split, runtime::PrepareLaunch(step.splitKernel->spec(), splitArgs));
  TESSERA_ASSIGN_OR_RETURN(step.combine, runtime::PrepareLaunch(combine.spec(), combineArgs));
  if (step.combines) TESSERA_RETURN_IF_ERROR(runtime::Launch(combine, step.combine));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  step.out.resize(rows * d);
  step.lse.resize(rows);
  TESSERA_RETURN_IF_ERROR(step.buffers[2].CopyToHost(step.out.data(), step.out.size() * 2));
  std::vector<float> lseByToken(rows);
  TESSERA_RETURN_IF_ERROR(step.buffers[3].CopyToHost(lseByToken.data(), lseByToken.size() * 4));
  // LSE [B, Sq, H] as the checks read attention's, [B, H, Sq].
  for (int64_t s = 0; s < b; ++s)
    for (int64_t t = 0; t < sq; ++t)
      for (int64_t hh = 0; hh < h; ++hh)
        step.lse[(s * h + hh) * sq + t] = lseByToken[(s * sq + t) * h + hh];
  return step;
}

/// Times both kernels together when asked and correct.
absl::Status TimeDecodeStep(DecodeStep& step, const RunOptions& options, Report& report) {
  if (!options.time || !report.correct) return absl::OkStatus();
  TESSERA_ASSIGN_OR_RETURN(report.timing,
                           runtime::TimeIt([&] { return step.Launch(); }, options.timing));
  return absl::OkStatus();
}

/// Checks sequence `s` of a paged decode step as a batch of one: its Q
/// rows, its keys and values gathered (`keys`, `values`), its O and LSE
/// rows; every (head, token) row, or about two of the sequence's rows when
/// `sampled`.
void CheckPagedSequence(const AttentionVariant& v, const AttentionProblem& one, int64_t s,
                        double scale, const Bits16& q, const Bits16& keys, const Bits16& values,
                        const DecodeStep& step, bool sampled, Random& pick, Report& report) {
  const int64_t rows = one.sq * one.h, dv = v.dv ? v.dv : v.d;
  Bits16 qs(q.dtype, std::vector<uint16_t>(q.bits.begin() + s * rows * v.d,
                                           q.bits.begin() + (s + 1) * rows * v.d));
  std::vector<uint16_t> os(step.out.begin() + s * rows * dv,
                           step.out.begin() + (s + 1) * rows * dv);
  std::vector<float> ls(step.lse.begin() + s * rows, step.lse.begin() + (s + 1) * rows);
  for (int64_t hh = 0; hh < one.h; ++hh)
    for (int64_t t = 0; t < one.sq; ++t)
      if (!sampled || pick.Index(rows) < 2)
        CheckAttentionRow(v, one, scale, qs, keys, values, os, ls, 0, hh, t, report);
}

absl::StatusOr<Report> RunFlashDecoding(const LoadedKernel& split, const std::string& kernel,
                                        const AttentionProblem& p, bool sampled,
                                        const RunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* combine, CompanionKernel(kernel, kCombine, options));
  TESSERA_ASSIGN_OR_RETURN(runtime::Device device, runtime::Device::Open(0));
  const int64_t parts = SplitsFor(split, device, p.b * p.hkv, p.skv), d = kHeadDim;
  const AttentionVariant v{kernel, runtime::DTYPE_F16, d, /*causal=*/true};
  Report report;
  report.target = split.spec().target();
  report.detail = absl::StrFormat("%d parts", parts);
  Random random(options.seed);
  TESSERA_ASSIGN_OR_RETURN(AttentionInputs in, MakeAttentionInputs(v, p, random));
  const Bits16 &q = in.q, &k = in.k, &val = in.val;
  const double scale = in.scale;
  TESSERA_ASSIGN_OR_RETURN(
      DecodeStep step,
      RunDecodeStep(split, *combine, in.Args(v, p), float(scale), p.b, p.sq, p.h, d,
                    runtime::DTYPE_F16, parts, /*splitWritesFinal=*/true, options, report));
  const std::vector<uint16_t>& out = step.out;
  const std::vector<float>& lse = step.lse;
  const double used = double(float(scale));
  CheckAttentionRows(v, p, used, q, k, val, out, lse, sampled ? 32 : 0, random, report);
  report.correct = report.mismatches == 0;
  // The bytes a decode step must touch: K and V once, Q, O and LSE.
  report.bytes = 2.0 * (2 * q.bits.size() + 2 * k.bits.size()) + 4.0 * lse.size();
  report.flops = 4.0 * p.b * p.h * p.sq * p.skv * d;
  TESSERA_RETURN_IF_ERROR(TimeDecodeStep(step, options, report));
  return report;
}

/// A paged cache: sequences of lengths `lens` (B of them), pages of
/// `pageSize` rows shuffled through a pool with spare pages, table entries
/// past a sequence's pages -1 (never read). Each sequence is checked
/// against float64 attention over its own keys, gathered.
absl::StatusOr<Report> RunPagedDecoding(const LoadedKernel& split, const std::string& kernel,
                                        int64_t pageSize, const std::vector<int64_t>& lens,
                                        int64_t sq, int64_t h, int64_t hkv, bool sampled,
                                        const RunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* combine, CompanionKernel(kernel, kCombine, options));
  TESSERA_ASSIGN_OR_RETURN(runtime::Device device, runtime::Device::Open(0));
  const int64_t b = int64_t(lens.size()), d = kHeadDim;
  const int64_t longest = *std::max_element(lens.begin(), lens.end());
  const int64_t parts = SplitsFor(split, device, b * hkv, longest);
  const runtime::DType f16 = runtime::DTYPE_F16;
  Report report;
  report.target = split.spec().target();
  report.detail = absl::StrFormat("%d parts", parts);
  Random random(options.seed);
  const PagedCache cache = ShufflePages(lens, pageSize, random);
  const int64_t pages = cache.pages, maxPages = cache.maxPages;
  const std::vector<int32_t>& table = cache.table;
  const int64_t pageElems = pageSize * hkv * d;
  Bits16 q(f16, b * sq * h * d, random), kp(f16, pages * pageElems, random),
      vp(f16, pages * pageElems, random);
  cache.PoisonTails(lens, hkv * d, kp);
  cache.PoisonTails(lens, hkv * d, vp);
  const double scale = 1.25 / std::sqrt(double(d));
  std::vector<int32_t> lens32(lens.begin(), lens.end());
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, Upload(q.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dk, Upload(kp.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dv, Upload(vp.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dtable, Upload(table));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlens, Upload(lens32));
  TESSERA_ASSIGN_OR_RETURN(
      DecodeStep step, RunDecodeStep(split, *combine,
                                     {TensorArg{dq.ptr(), f16, {b, sq, h, d}},
                                      TensorArg{dk.ptr(), f16, {pages, pageSize, hkv, d}},
                                      TensorArg{dv.ptr(), f16, {pages, pageSize, hkv, d}},
                                      TensorArg{dtable.ptr(), runtime::DTYPE_I32, {b, maxPages}},
                                      TensorArg{dlens.ptr(), runtime::DTYPE_I32, {b}}},
                                     float(scale), b, sq, h, d, f16, parts,
                                     /*splitWritesFinal=*/true, options, report));
  // Each sequence as a batch of one: its Q rows, its keys gathered from the
  // pages, its O and LSE rows.
  const AttentionVariant v{kernel, f16, d, /*causal=*/true};
  Random pick(options.seed + 5);
  for (int64_t s = 0; s < b; ++s)
    CheckPagedSequence(v, {1, sq, lens[s], h, hkv}, s, double(float(scale)), q,
                       cache.Gather(kp, s, lens[s], hkv * d), cache.Gather(vp, s, lens[s], hkv * d),
                       step, sampled, pick, report);
  report.correct = report.mismatches == 0;
  int64_t keys = 0;
  for (int64_t len : lens) keys += len;
  report.bytes = 2.0 * (2 * q.bits.size() + 2 * keys * hkv * d) + 4.0 * step.lse.size();
  report.flops = 4.0 * h * sq * keys * d;
  TESSERA_RETURN_IF_ERROR(TimeDecodeStep(step, options, report));
  return report;
}

/// MLA decode (examples/mla_decode.cc) over a paged latent cache of 512 +
/// 64 columns a row (bf16, 64 rows a page) for sequences of lengths `lens`
/// and `h` query heads: the split pass and its combine, each sequence
/// checked against float64 attention whose keys are the gathered latent
/// rows and whose values are their first 512 columns.
absl::StatusOr<Report> RunMlaDecoding(const LoadedKernel& split, const std::vector<int64_t>& lens,
                                      int64_t sq, int64_t h, bool sampled,
                                      const RunOptions& options) {
  constexpr int64_t kLatent = 512, kRope = 64, kPage = 64;
  const int64_t d = kLatent + kRope, b = int64_t(lens.size());
  // Heads a block: the example's 16, or a variant's (mla_decode__h64_...).
  int64_t headsPerBlock = 16;
  if (size_t at = split.spec().entry().find("__h"); at != std::string::npos)
    headsPerBlock = std::max<int64_t>(1, std::atoll(split.spec().entry().c_str() + at + 3));
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* combine,
                           CompanionKernel("mla_decode", "mla_decode_combine", options));
  TESSERA_ASSIGN_OR_RETURN(runtime::Device device, runtime::Device::Open(0));
  const int64_t longest = *std::max_element(lens.begin(), lens.end());
  const int64_t groups = (h + headsPerBlock - 1) / headsPerBlock;
  // The combine keeps a head's parts in shared memory: 32 where a block
  // has 96 KiB or more, else 16 (MlaDecodeMaxParts in examples/mla_decode.cc;
  // more would fail its precondition).
  const std::string& target = split.spec().target();
  const int64_t maxParts = target == "sm_70" || target == "sm_80" || target == "sm_90a" ? 32 : 16;
  const int64_t parts = SplitsFor(split, device, b * groups, longest, maxParts);
  const runtime::DType bf16 = runtime::DTYPE_BF16;
  Report report;
  report.target = split.spec().target();
  report.detail = absl::StrFormat("%d parts", parts);
  Random random(options.seed);
  const PagedCache cache = ShufflePages(lens, kPage, random);
  Bits16 q(bf16, b * sq * h * d, random), kv(bf16, cache.pages * kPage * d, random);
  cache.PoisonTails(lens, d, kv);
  const double scale = 1.25 / std::sqrt(double(d));
  std::vector<int32_t> lens32(lens.begin(), lens.end());
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dq, Upload(q.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dkv, Upload(kv.bits));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dtable, Upload(cache.table));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlens, Upload(lens32));
  TESSERA_ASSIGN_OR_RETURN(
      DecodeStep step,
      RunDecodeStep(split, *combine,
                    {TensorArg{dq.ptr(), bf16, {b, sq, h, d}},
                     TensorArg{dkv.ptr(), bf16, {cache.pages, kPage, d}},
                     TensorArg{dtable.ptr(), runtime::DTYPE_I32, {b, cache.maxPages}},
                     TensorArg{dlens.ptr(), runtime::DTYPE_I32, {b}}},
                    float(scale), b, sq, h, kLatent, bf16, parts, /*splitWritesFinal=*/false,
                    options, report));
  const AttentionVariant v{"mla_decode", bf16, d, /*causal=*/true, /*dv=*/kLatent};
  Random pick(options.seed + 5);
  for (int64_t s = 0; s < b; ++s) {
    const Bits16 latent = cache.Gather(kv, s, lens[s], d);
    CheckPagedSequence(v, {1, sq, lens[s], h, 1}, s, double(float(scale)), q, latent, latent, step,
                       sampled, pick, report);
  }
  report.correct = report.mismatches == 0;
  int64_t keys = 0;
  for (int64_t len : lens) keys += len;
  // The latent cache once, Q, O and LSE.
  report.bytes = 2.0 * (q.bits.size() + keys * d + step.out.size()) + 4.0 * step.lse.size();
  report.flops = 2.0 * h * sq * keys * (d + kLatent);
  TESSERA_RETURN_IF_ERROR(TimeDecodeStep(step, options, report));
  return report;
}

/// The combine alone: random partial outputs and LSEs in [-4, 4), a fifth
/// of the parts empty (LSE -infinity: weight 0 whatever their output); O
/// and LSE of every row against float64. O [B, Sq, H, d] of `dtype`.
absl::StatusOr<Report> RunCombine(const LoadedKernel& kernel, int64_t b, int64_t sq, int64_t h,
                                  int64_t parts, int64_t d, runtime::DType dtype,
                                  const RunOptions& options) {
  const int64_t rows = b * sq * h;
  const bool f16 = dtype == runtime::DTYPE_F16;
  // Outputs in [-1, 1): the type's rounding (half an ulp at 1) and the f32
  // sums, twice over.
  const double bound = f16 ? 0x1p-10 : 0x1p-7;
  Report report;
  report.target = kernel.spec().target();
  Random random(options.seed);
  std::vector<float> op(rows * parts * d), lsep(rows * parts);
  for (float& x : op) x = random.Uniform();
  for (float& x : lsep)
    x = random.Uniform() < -0.6f ? -std::numeric_limits<float>::infinity() : 4 * random.Uniform();
  // Every row keeps a part with keys (part 0 of row r: lsep[(r * parts) * h + hh]).
  for (int64_t r = 0; r < b * sq; ++r)
    for (int64_t hh = 0; hh < h; ++hh) lsep[(r * parts) * h + hh] = random.Uniform();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dop, Upload(op));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlsep, Upload(lsep));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dout, DeviceBuffer::Allocate(rows * d * 2));
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer dlse, DeviceBuffer::Allocate(rows * 4));
  TESSERA_RETURN_IF_ERROR(dlse.Fill(kPoisonByte));
  std::vector<KernelArg> args = {TensorArg{dop.ptr(), runtime::DTYPE_F32, {b, sq, h, parts, d}},
                                 TensorArg{dlsep.ptr(), runtime::DTYPE_F32, {b, sq, parts, h}},
                                 TensorArg{dout.ptr(), dtype, {b, sq, h, d}},
                                 TensorArg{dlse.ptr(), runtime::DTYPE_F32, {b, sq, h}}};
  TESSERA_ASSIGN_OR_RETURN(const LoadedKernel* chosen,
                           TuneAndLaunch(kernel, args, options, dout, report));
  TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
  std::vector<uint16_t> out(rows * d);
  std::vector<float> lse(rows);
  TESSERA_RETURN_IF_ERROR(dout.CopyToHost(out.data(), out.size() * 2));
  TESSERA_RETURN_IF_ERROR(dlse.CopyToHost(lse.data(), lse.size() * 4));
  for (int64_t bt = 0; bt < b * sq; ++bt)
    for (int64_t hh = 0; hh < h; ++hh) {
      auto lseOf = [&](int64_t part) { return double(lsep[(bt * parts + part) * h + hh]); };
      double top = -std::numeric_limits<double>::infinity(), total = 0;
      for (int64_t part = 0; part < parts; ++part) top = std::max(top, lseOf(part));
      for (int64_t part = 0; part < parts; ++part) total += std::exp(lseOf(part) - top);
      const int64_t row = bt * h + hh;
      for (int64_t c = 0; c < d; ++c) {
        double ref = 0;
        for (int64_t part = 0; part < parts; ++part)
          ref += std::exp(lseOf(part) - top) * op[(row * parts + part) * d + c];
        ref /= total;
        double got = f16 ? HalfBitsToFloat(out[row * d + c]) : Bf16BitsToFloat(out[row * d + c]);
        report.max_error =
            std::max(report.max_error, CheckElement(report, row, c, got, ref, bound));
      }
      double got = lse[row], ref = top + std::log(total);  // LSE [B, Sq, H]
      report.max_error =
          std::max(report.max_error,
                   CheckElement(report, row, -1, got, ref, std::ldexp(1 + std::fabs(ref), -12)));
    }
  report.tolerance = bound;
  report.correct = report.mismatches == 0;
  report.bytes = 4.0 * (op.size() + lsep.size() + lse.size()) + 2.0 * out.size();
  TESSERA_RETURN_IF_ERROR(TimeIfAsked(*chosen, args, options, report));
  return report;
}

Workload Decode(const std::string& kernel, const AttentionProblem& p, bool benchmark) {
  return MakeWorkload(
      absl::StrFormat("%s/b%d_sq%d_skv%d_h%d_hkv%d", kernel, p.b, p.sq, p.skv, p.h, p.hkv), kernel,
      !benchmark, benchmark,
      [kernel, p, benchmark](const LoadedKernel& split, const RunOptions& options) {
        return RunFlashDecoding(split, kernel, p, /*sampled=*/benchmark, options);
      });
}

}  // namespace

std::vector<Workload> FlashDecodingWorkloads() {
  std::vector<Workload> list;
  // Conformance: one key; lengths not multiples of a step; GQA ratios 1, 4
  // and 8; one, two, four, five and eight new tokens (Skv = Sq: the first
  // token sees one key; five and eight: a pass of tokens and the part of
  // another); many parts (long keys, batch 1). flash_decoding_one (one token)
  // takes those of one token.
  // Benchmarks: batch 1 to 64, keys 1k to 32k, 32 query heads over 8 key
  // heads (Llama-3 8B), d128.
  const AttentionProblem conformance[] = {
      {1, 1, 1, 4, 4},     {2, 1, 777, 8, 2},  {3, 4, 300, 8, 1},
      {1, 2, 5000, 16, 2}, {2, 1, 1031, 8, 8}, {1, 4, 4, 8, 2},
      {1, 1, 20000, 8, 2}, {2, 5, 700, 8, 2},  {1, 8, 3000, 32, 8}};
  const AttentionProblem benchmarks[] = {{1, 1, 8192, 32, 8},  {4, 1, 8192, 32, 8},
                                         {16, 1, 4096, 32, 8}, {64, 1, 1024, 32, 8},
                                         {4, 1, 32768, 32, 8}, {16, 4, 8192, 32, 8}};
  for (const char* kernel : {"flash_decoding", "flash_decoding_one"}) {
    bool oneToken = std::string(kernel) == "flash_decoding_one";
    for (const AttentionProblem& p : conformance)
      if (!oneToken || p.sq == 1) list.push_back(Decode(kernel, p, /*benchmark=*/false));
    for (const AttentionProblem& p : benchmarks)
      if (!oneToken || p.sq == 1) list.push_back(Decode(kernel, p, /*benchmark=*/true));
  }
  // Paged (64 rows a page): lengths 1, odd, not multiples of a page, one
  // sequence much longer than the others; GQA 1 and 4; one and three new
  // tokens (a sequence shorter than three leaves its first tokens no key).
  // Pages of 16 and 256 rows (flash_decoding_paged16, _paged256): the
  // first two. Benchmarks: batch 4 and 16, 8k keys each; batch 4 for the
  // other page sizes.
  struct Paged {
    const char* kernel;
    int64_t pageSize;
    std::vector<int64_t> lens;
    int64_t sq, h, hkv;
    bool benchmark;
  };
  std::vector<Paged> paged;
  for (auto [kernel, pageSize] : {std::pair<const char*, int64_t>{"flash_decoding_paged", 64},
                                  {"flash_decoding_paged16", 16},
                                  {"flash_decoding_paged256", 256}}) {
    paged.push_back({kernel, pageSize, {1, 70, 4000, 129}, 1, 8, 2, false});
    paged.push_back({kernel, pageSize, {300, 2, 64, 1000}, 3, 4, 4, false});
    paged.push_back({kernel, pageSize, std::vector<int64_t>(4, 8192), 1, 32, 8, true});
  }
  paged.push_back({"flash_decoding_paged", 64, std::vector<int64_t>(16, 8192), 1, 32, 8, true});
  for (const Paged& p : paged) {
    std::string lens;
    for (int64_t len : p.lens) lens += absl::StrFormat("%s%d", lens.empty() ? "" : "_", len);
    if (p.benchmark) lens = absl::StrFormat("%dx%d", p.lens.size(), p.lens[0]);
    list.push_back(MakeWorkload(
        absl::StrFormat("%s/lens%s_sq%d_h%d_hkv%d", p.kernel, lens, p.sq, p.h, p.hkv), p.kernel,
        !p.benchmark, p.benchmark, [p](const LoadedKernel& split, const RunOptions& options) {
          return RunPagedDecoding(split, p.kernel, p.pageSize, p.lens, p.sq, p.h, p.hkv,
                                  p.benchmark, options);
        }));
  }
  // MLA decode: lengths 1, odd, not multiples of a page, one much longer;
  // 16 heads (DeepSeek-V3 under 8-way tensor parallelism), 20 (a group cut
  // short) and 128 (all of them); one and two new tokens. Benchmarks: the
  // 16 and 128 heads at batch 4 to 128, and the compute-bound 128 heads of
  // two new tokens at batch 64.
  struct Mla {
    std::vector<int64_t> lens;
    int64_t sq, h;
    bool benchmark;
  };
  for (const Mla& m : {Mla{{1, 70, 4000, 129}, 1, 16, false}, Mla{{300, 2, 64, 1000}, 2, 20, false},
                       Mla{{3000}, 1, 128, false}, Mla{std::vector<int64_t>(4, 8192), 1, 16, true},
                       Mla{std::vector<int64_t>(64, 4096), 1, 16, true},
                       Mla{std::vector<int64_t>(64, 4096), 2, 16, true},
                       Mla{std::vector<int64_t>(128, 1024), 1, 128, true},
                       Mla{std::vector<int64_t>(64, 4096), 2, 128, true}}) {
    std::string lens;
    for (int64_t len : m.lens) lens += absl::StrFormat("%s%d", lens.empty() ? "" : "_", len);
    if (m.benchmark) lens = absl::StrFormat("%dx%d", m.lens.size(), m.lens[0]);
    list.push_back(MakeWorkload(
        absl::StrFormat("mla_decode/lens%s_sq%d_h%d", lens, m.sq, m.h), "mla_decode", !m.benchmark,
        m.benchmark, [m](const LoadedKernel& split, const RunOptions& options) {
          return RunMlaDecoding(split, m.lens, m.sq, m.h, m.benchmark, options);
        }));
  }
  // The combines: odd sizes and all parts (64; MLA's 16, the most every
  // target takes); one benchmark each.
  struct Combine {
    const char* kernel;
    int64_t b, sq, h, parts, d;
    runtime::DType dtype;
    bool conformance;
  };
  const runtime::DType f16 = runtime::DTYPE_F16, bf16 = runtime::DTYPE_BF16;
  for (Combine c : {Combine{kCombine, 2, 3, 5, 7, kHeadDim, f16, true},
                    Combine{kCombine, 1, 1, 3, 64, kHeadDim, f16, true},
                    Combine{kCombine, 64, 1, 32, 16, kHeadDim, f16, false},
                    Combine{"mla_decode_combine", 2, 2, 5, 7, 512, bf16, true},
                    Combine{"mla_decode_combine", 1, 1, 3, 16, 512, bf16, true},
                    Combine{"mla_decode_combine", 64, 1, 16, 8, 512, bf16, false}})
    list.push_back(MakeWorkload(
        absl::StrFormat("%s/b%d_sq%d_h%d_p%d", c.kernel, c.b, c.sq, c.h, c.parts), c.kernel,
        c.conformance, !c.conformance, [c](const LoadedKernel& kernel, const RunOptions& options) {
          return RunCombine(kernel, c.b, c.sq, c.h, c.parts, c.d, c.dtype, options);
        }));
  return list;
}

}  // namespace tessera::workloads::internal
