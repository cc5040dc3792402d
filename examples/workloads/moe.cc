//===- moe.cc - The MoE layer's workloads ---------------------------------===//
//
// The workloads of examples/moe.cc: the whole layer (moe_align, moe_plan,
// moe_gather, moe, grouped_gemm, moe_combine) on routings with an empty
// expert, one expert taking every token, and dropped entries (ids outside
// [0, E)), hidden and ffn sizes off the tiles. Every kernel of the layer has
// the same workloads under its name, with the kernel under test in its place
// and the others from the runner's companions. Every buffer a kernel writes
// is poisoned first (the unwritten padding rows of the permuted X stay NaN
// and must not reach Y). Checked: Start and Group exactly, each expert's
// ranks a permutation, the counts zero again, and Y against a float64
// reference (every token at conformance sizes, a sample at benchmark
// sizes); the layer runs twice and must give the same bits (the atomics
// place rows in any order; each row's values do not depend on it). The
// benchmark times the layer (for `moe`) or the kernel alone (for the
// others, on the layer's data).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/workloads/internal.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/timer.h"

namespace tessera::workloads::internal {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::TensorArg;

namespace {

/// A permuted row block (examples/moe.h, kMoeBlockRows).
constexpr int64_t kBlockRows = 128;

/// The layer's kernels in launch order (the down projection is the grouped
/// GEMM).
const char* const kLayer[] = {"moe_align", "moe_plan",     "moe_gather",
                              "moe",       "grouped_gemm", "moe_combine"};

enum class Routing {
  kRandom,     // TOPK distinct experts per token
  kSkipLast,   // the same, never the last expert (an empty group)
  kOneExpert,  // TOPK = 1, every token to expert 1
  kDropSome,   // random, every fifth entry's id -1 and every seventh's E
};

struct MoeProblem {
  int64_t tokens, experts, topk, hidden, ffn;
  Routing routing;
  /// Every expert's weights are expert 0's (benchmark sizes: the host
  /// holds one expert's; the GPU reads every expert's copy).
  bool sharedWeights = false;

  std::string Name() const {
    static const char* const kRouting[] = {"random", "skiplast", "oneexpert", "dropsome"};
    return absl::StrFormat("t%d_e%d_k%d_h%d_f%d_%s", tokens, experts, topk, hidden, ffn,
                           kRouting[int(routing)]);
  }
};

/// 2^-round(log2(sqrt(n))): keeps a sum of n products of order 1.
float FanInScale(int64_t n) { return std::ldexp(1.0f, -int(std::lround(0.5 * std::log2(n)))); }

std::vector<int32_t> RouteTokens(const MoeProblem& p, Random& random) {
  std::vector<int32_t> ids(p.tokens * p.topk);
  const int64_t pool = p.routing == Routing::kSkipLast ? p.experts - 1 : p.experts;
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t s = 0; s < p.topk; ++s) {
      int32_t e = 1;
      if (p.routing != Routing::kOneExpert) {
        bool fresh = false;
        while (!fresh) {  // distinct experts per token, as a router's top-k
          e = int32_t(random.Index(pool));
          fresh = std::find(&ids[t * p.topk], &ids[t * p.topk + s], e) == &ids[t * p.topk + s];
        }
      }
      ids[t * p.topk + s] = e;
    }
  }
  if (p.routing == Routing::kDropSome)
    for (int64_t i = 0; i < int64_t(ids.size()); ++i) {
      if (i % 5 == 2) ids[i] = -1;
      if (i % 7 == 3) ids[i] = int32_t(p.experts);
    }
  return ids;
}

/// The layer's buffers on the device and each kernel's arguments.
struct MoeCase {
  MoeProblem p;
  std::vector<int32_t> ids;
  std::vector<float> weights;
  HostMatrix x, w13, w2;  // w13 and w2: one expert's when shared
  int64_t rows = 0;       // permuted-row capacity (MP), whole blocks
  DeviceBuffer dx, dids, dweights, dw13, dw2, drank, dcounts, dstart, dgroup, dxp, dact, dd, dy;
  std::vector<KernelArg> args[6];
};

absl::StatusOr<DeviceBuffer> UploadExperts(const HostMatrix& m, int64_t experts, bool shared) {
  if (!shared) return Upload(m.bytes);
  const int64_t bytes = m.bytes.size();
  TESSERA_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(experts * bytes));
  for (int64_t e = 0; e < experts; ++e)
    TESSERA_RETURN_IF_ERROR(buffer.CopyFromHost(m.bytes.data(), bytes, e * bytes));
  return buffer;
}

absl::StatusOr<std::unique_ptr<MoeCase>> MakeCase(const MoeProblem& p, uint64_t seed) {
  Random random(seed);
  const int64_t n = p.tokens * p.topk, weightExperts = p.sharedWeights ? 1 : p.experts;
  auto c = std::unique_ptr<MoeCase>(
      new MoeCase{p,
                  RouteTokens(p, random),
                  {},
                  HostMatrix(runtime::DTYPE_BF16, p.tokens * p.hidden, random),
                  HostMatrix(runtime::DTYPE_BF16, weightExperts * 2 * p.ffn * p.hidden, random,
                             /*torchStyle=*/false, FanInScale(p.hidden)),
                  HostMatrix(runtime::DTYPE_BF16, weightExperts * p.hidden * p.ffn, random,
                             /*torchStyle=*/false, FanInScale(p.ffn))});
  c->weights.resize(n);
  for (float& w : c->weights) w = 0.55f + 0.45f * random.Uniform();  // (0.1, 1)
  // Every expert padded to whole blocks, at most: the layer's capacity.
  c->rows = (n + p.experts * (kBlockRows - 1) + kBlockRows - 1) / kBlockRows * kBlockRows;
  const int64_t blocks = c->rows / kBlockRows, e = p.experts, t = p.tokens, k = p.topk;
  const int64_t h = p.hidden, f = p.ffn, mp = c->rows;
  TESSERA_ASSIGN_OR_RETURN(c->dx, Upload(c->x.bytes));
  TESSERA_ASSIGN_OR_RETURN(c->dids, Upload(c->ids));
  TESSERA_ASSIGN_OR_RETURN(c->dweights, Upload(c->weights));
  TESSERA_ASSIGN_OR_RETURN(c->dw13, UploadExperts(c->w13, e, p.sharedWeights));
  TESSERA_ASSIGN_OR_RETURN(c->dw2, UploadExperts(c->w2, e, p.sharedWeights));
  TESSERA_ASSIGN_OR_RETURN(c->drank, DeviceBuffer::Allocate(n * 4));
  TESSERA_ASSIGN_OR_RETURN(c->dcounts, DeviceBuffer::Allocate(e * 4));
  TESSERA_RETURN_IF_ERROR(c->dcounts.Fill(0));
  TESSERA_ASSIGN_OR_RETURN(c->dstart, DeviceBuffer::Allocate((e + 1) * 4));
  TESSERA_ASSIGN_OR_RETURN(c->dgroup, DeviceBuffer::Allocate(blocks * 4));
  TESSERA_ASSIGN_OR_RETURN(c->dxp, DeviceBuffer::Allocate(mp * h * 2));
  TESSERA_ASSIGN_OR_RETURN(c->dact, DeviceBuffer::Allocate(mp * f * 2));
  TESSERA_ASSIGN_OR_RETURN(c->dd, DeviceBuffer::Allocate(mp * h * 2));
  TESSERA_ASSIGN_OR_RETURN(c->dy, DeviceBuffer::Allocate(t * h * 2));
  using runtime::DTYPE_BF16;
  using runtime::DTYPE_F32;
  using runtime::DTYPE_I32;
  TensorArg ids2{c->dids.ptr(), DTYPE_I32, {t, k}}, rank2{c->drank.ptr(), DTYPE_I32, {t, k}};
  TensorArg counts{c->dcounts.ptr(), DTYPE_I32, {e}}, start{c->dstart.ptr(), DTYPE_I32, {e + 1}};
  TensorArg group{c->dgroup.ptr(), DTYPE_I32, {blocks}};
  c->args[0] = {TensorArg{c->dids.ptr(), DTYPE_I32, {n}}, TensorArg{c->drank.ptr(), DTYPE_I32, {n}},
                counts};
  c->args[1] = {counts, start, group};
  c->args[2] = {TensorArg{c->dx.ptr(), DTYPE_BF16, {t, h}},  ids2, rank2, start, counts,
                TensorArg{c->dxp.ptr(), DTYPE_BF16, {mp, h}}};
  c->args[3] = {TensorArg{c->dxp.ptr(), DTYPE_BF16, {mp, h}},
                TensorArg{c->dw13.ptr(), DTYPE_BF16, {e, 2 * f, h}}, group,
                TensorArg{c->dact.ptr(), DTYPE_BF16, {mp, f}}};
  c->args[4] = {TensorArg{c->dact.ptr(), DTYPE_BF16, {mp, f}},
                TensorArg{c->dw2.ptr(), DTYPE_BF16, {e, h, f}}, group,
                TensorArg{c->dd.ptr(), DTYPE_BF16, {mp, h}}};
  c->args[5] = {TensorArg{c->dd.ptr(), DTYPE_BF16, {mp, h}},
                ids2,
                rank2,
                TensorArg{c->dweights.ptr(), DTYPE_F32, {t, k}},
                start,
                TensorArg{c->dy.ptr(), DTYPE_BF16, {t, h}}};
  return c;
}

/// Start (E + 1 entries) and Group as the plan must give them.
void ExpectedPlan(const MoeCase& c, std::vector<int32_t>& start, std::vector<int32_t>& group) {
  const MoeProblem& p = c.p;
  std::vector<int64_t> counts(p.experts, 0);
  for (int32_t id : c.ids)
    if (id >= 0 && id < p.experts) ++counts[id];
  start.assign(p.experts + 1, 0);
  group.assign(c.rows / kBlockRows, -1);
  for (int64_t e = 0; e < p.experts; ++e) {
    int64_t padded = (counts[e] + kBlockRows - 1) / kBlockRows * kBlockRows;
    for (int64_t b = start[e] / kBlockRows; b < (start[e] + padded) / kBlockRows; ++b)
      group[b] = int32_t(e);
    start[e + 1] = int32_t(start[e] + padded);
  }
}

/// Start, Group, the ranks (a permutation of 0..count-1 per expert) and
/// the counts (zero again).
void CheckRouting(const MoeCase& c, const std::vector<int32_t>& start,
                  const std::vector<int32_t>& group, const std::vector<int32_t>& rank,
                  const std::vector<int32_t>& counts, Report& report) {
  std::vector<int32_t> wantStart, wantGroup;
  ExpectedPlan(c, wantStart, wantGroup);
  auto mismatch = [&](const std::string& what) {
    if (report.mismatches == 0) report.detail = what;
    ++report.mismatches;
  };
  if (start != wantStart) mismatch("Start differs from the padded prefix sums of the counts");
  if (group != wantGroup) mismatch("Group differs from the experts' row blocks");
  if (std::any_of(counts.begin(), counts.end(), [](int32_t x) { return x != 0; }))
    mismatch("Counts is not zero after the layer");
  std::vector<std::vector<bool>> seen(c.p.experts);
  for (int64_t e = 0; e < c.p.experts; ++e) seen[e].assign(wantStart[e + 1] - wantStart[e], false);
  for (int64_t i = 0; i < int64_t(c.ids.size()); ++i) {
    int32_t e = c.ids[i];
    if (e < 0 || e >= c.p.experts) continue;
    if (rank[i] < 0 || rank[i] >= int64_t(seen[e].size()) || seen[e][rank[i]])
      return mismatch(absl::StrFormat("entry %d: rank %d repeats or is out of range", i, rank[i]));
    seen[e][rank[i]] = true;
  }
}

/// Y's rows of `tokens` against the float64 layer, every column.
void CheckOutput(const MoeCase& c, const std::vector<uint16_t>& y,
                 const std::vector<int64_t>& tokens, Report& report) {
  const MoeProblem& p = c.p;
  const int64_t h = p.hidden, f = p.ffn;
  double errSq = 0, refSq = 0;
  std::vector<double> act(f), ref(h), bound(h);
  for (int64_t t : tokens) {
    std::fill(ref.begin(), ref.end(), 0.0);
    std::fill(bound.begin(), bound.end(), 1e-6);
    const float* x = &c.x.values[t * h];
    for (int64_t s = 0; s < p.topk; ++s) {
      int64_t e = c.ids[t * p.topk + s];
      if (e < 0 || e >= p.experts) continue;
      const int64_t we = p.sharedWeights ? 0 : e;
      const float* w13 = &c.w13.values[we * 2 * f * h];
      for (int64_t j = 0; j < f; ++j) {
        double gate = 0, up = 0;
        for (int64_t q = 0; q < h; ++q) {
          gate += double(x[q]) * w13[j * h + q];
          up += double(x[q]) * w13[(f + j) * h + q];
        }
        act[j] = gate / (1.0 + std::exp(-gate)) * up;
      }
      const float* w2 = &c.w2.values[we * h * f];
      const double w = c.weights[t * p.topk + s];
      for (int64_t q = 0; q < h; ++q) {
        double d = 0, magSq = 0;
        for (int64_t j = 0; j < f; ++j) {
          double term = act[j] * w2[q * f + j];
          d += term;
          magSq += term * term;
        }
        ref[q] += w * d;
        // Act and D are rounded to bf16 (2^-9 relative) on the way: the
        // first adds a random walk of such errors over f, the second one.
        bound[q] += w * (std::ldexp(std::sqrt(magSq), -6) + 1e-2 * std::fabs(d));
      }
    }
    for (int64_t q = 0; q < h; ++q) {
      double got = Bf16BitsToFloat(y[t * h + q]);
      double err = CheckElement(report, t, q, got, ref[q], bound[q] + 1e-2 * std::fabs(ref[q]));
      errSq += err * err;
      refSq += ref[q] * ref[q];
    }
  }
  report.max_error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
}

template <typename T>
absl::StatusOr<std::vector<T>> Download(const DeviceBuffer& buffer, int64_t n) {
  std::vector<T> host(n);
  TESSERA_RETURN_IF_ERROR(buffer.CopyToHost(host.data(), n * sizeof(T)));
  return host;
}

absl::StatusOr<Report> RunMoe(const LoadedKernel& kernel, const std::string& part,
                              const MoeProblem& p, bool full, const RunOptions& options) {
  Report report;
  report.target = kernel.spec().target();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<MoeCase> c, MakeCase(p, options.seed));
  // The layer's kernels: the one under test in its place.
  std::vector<runtime::PackedLaunch> packed;
  std::vector<const LoadedKernel*> kernels;
  int self = 0;
  for (int i = 0; i < 6; ++i) {
    const LoadedKernel* k = &kernel;
    if (kLayer[i] != part) {
      TESSERA_ASSIGN_OR_RETURN(k, CompanionKernel(part, kLayer[i], options));
    } else {
      self = i;
    }
    TESSERA_ASSIGN_OR_RETURN(runtime::PackedLaunch launch,
                             runtime::PrepareLaunch(k->spec(), c->args[i]));
    packed.push_back(std::move(launch));
    kernels.push_back(k);
  }
  auto layer = [&]() -> absl::Status {
    for (int i = 0; i < 6; ++i) TESSERA_RETURN_IF_ERROR(runtime::Launch(*kernels[i], packed[i]));
    return absl::OkStatus();
  };
  const int64_t n = p.tokens * p.topk;
  std::vector<uint16_t> first;
  for (int run = 0; run < 2; ++run) {
    for (DeviceBuffer* out : {&c->drank, &c->dstart, &c->dgroup, &c->dxp, &c->dact, &c->dd, &c->dy})
      TESSERA_RETURN_IF_ERROR(out->Fill(kPoisonByte));
    TESSERA_RETURN_IF_ERROR(layer());
    TESSERA_RETURN_IF_ERROR(runtime::Synchronize());
    TESSERA_ASSIGN_OR_RETURN(std::vector<uint16_t> y,
                             Download<uint16_t>(c->dy, p.tokens * p.hidden));
    if (run == 1) {
      if (y != first && report.mismatches == 0) {
        report.detail = "a second run gave other bits (not deterministic)";
        ++report.mismatches;
      }
      break;
    }
    TESSERA_ASSIGN_OR_RETURN(auto start, Download<int32_t>(c->dstart, p.experts + 1));
    TESSERA_ASSIGN_OR_RETURN(auto group, Download<int32_t>(c->dgroup, c->rows / kBlockRows));
    TESSERA_ASSIGN_OR_RETURN(auto rank, Download<int32_t>(c->drank, n));
    TESSERA_ASSIGN_OR_RETURN(auto counts, Download<int32_t>(c->dcounts, p.experts));
    CheckRouting(*c, start, group, rank, counts, report);
    std::vector<int64_t> tokens;
    Random pick(options.seed + 17);
    for (int64_t t = 0; t < p.tokens; ++t)
      if (full || t == 0 || t == p.tokens - 1) tokens.push_back(t);
    if (!full) tokens.push_back(pick.Index(p.tokens));
    CheckOutput(*c, y, tokens, report);
    first = std::move(y);
  }
  report.tolerance = 1e-2;
  report.correct = report.mismatches == 0;
  int64_t routed = std::count_if(c->ids.begin(), c->ids.end(),
                                 [&](int32_t e) { return e >= 0 && e < p.experts; });
  report.flops = 6.0 * routed * p.ffn * p.hidden;
  report.bytes = 2.0 * (3.0 * p.experts * p.ffn * p.hidden + 2.0 * p.tokens * p.hidden);
  if (options.time && (report.correct || options.time_wrong)) {
    if (part == "moe") {
      TESSERA_ASSIGN_OR_RETURN(report.timing, runtime::TimeIt(layer, options.timing));
    } else {
      // The kernel alone on the layer's data (moe_align's counts then
      // grow past the layer's; nothing checks them after this).
      auto alone = [&]() { return runtime::Launch(*kernels[self], packed[self]); };
      TESSERA_ASSIGN_OR_RETURN(report.timing, runtime::TimeIt(alone, options.timing));
      report.flops = 0;
    }
  }
  return report;
}

}  // namespace

std::vector<Workload> MoeWorkloads() {
  const MoeProblem conformance[] = {
      // Off the tiles, one expert never chosen.
      {77, 5, 2, 200, 136, Routing::kSkipLast},
      // Every token to one expert: two row blocks of one group.
      {130, 4, 1, 136, 72, Routing::kOneExpert},
      // Dropped entries (ids -1 and E), top 3.
      {50, 6, 3, 264, 96, Routing::kDropSome},
  };
  // Mixtral 8x7B and DeepSeek-V3 (routed experts) at 4096 tokens.
  const MoeProblem benchmarks[] = {
      {4096, 8, 2, 4096, 14336, Routing::kRandom, /*sharedWeights=*/true},
      {4096, 256, 8, 7168, 2048, Routing::kRandom, /*sharedWeights=*/true},
  };
  std::vector<Workload> list;
  for (std::string part : {"moe", "moe_align", "moe_plan", "moe_gather", "moe_combine"}) {
    for (const MoeProblem& p : conformance)
      list.push_back(MakeWorkload(absl::StrCat(part, "/", p.Name()), part, true, false,
                                  [part, p](const LoadedKernel& loaded, const RunOptions& options) {
                                    return RunMoe(loaded, part, p, true, options);
                                  }));
    for (const MoeProblem& p : benchmarks) {
      if (part != "moe" && p.experts > 8) continue;
      list.push_back(MakeWorkload(absl::StrCat(part, "/", p.Name()), part, false, true,
                                  [part, p](const LoadedKernel& loaded, const RunOptions& options) {
                                    return RunMoe(loaded, part, p, false, options);
                                  }));
    }
  }
  return list;
}

}  // namespace tessera::workloads::internal
