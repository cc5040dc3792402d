//===- workloads.cc - Run, check and time compiled kernels ----------------===//
//
// This file implements what the workloads share (their checks, tuning and
// timing, host conversions of f16 and bf16) and the list of every workload
// (AllWorkloads); each family's workloads are in a file of their own
// (workloads_elementwise.cc, workloads_gemm.cc, workloads_rows.cc,
// workloads_dtypes.cc, attention.cc). Inputs are random (never zeros),
// outputs are poisoned with NaN bytes before each run, and results are
// compared with a CPU reference computed in higher precision where rounding
// differs, or exactly where it cannot.
//
//===----------------------------------------------------------------------===//

#include "examples/workloads/workloads.h"

#include "examples/workloads/attention.h"
#include "examples/workloads/flash_attention.h"
#include "examples/workloads/internal.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/autotune.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/status_macros.h"

namespace tessera::workloads {

using runtime::DeviceBuffer;
using runtime::KernelArg;
using runtime::LoadedKernel;
using runtime::TensorArg;

namespace internal {

/// A workload whose `run` fills a Report; the workload's name is recorded on
/// the report.
Workload MakeWorkload(std::string name, std::string kernel, bool conformance, bool benchmark,
                      std::function<absl::StatusOr<Report>(const LoadedKernel&,
                                                           const RunOptions&)> run) {
  Workload w;
  w.name = std::move(name);
  w.kernel = std::move(kernel);
  w.conformance = conformance;
  w.benchmark = benchmark;
  w.run = [run = std::move(run), name = w.name](const LoadedKernel& loaded,
                                                const RunOptions& options)
      -> absl::StatusOr<Report> {
    TESSERA_ASSIGN_OR_RETURN(Report report, run(loaded, options));
    report.workload = name;
    return report;
  };
  return w;
}

/// Records one checked element of a 2-D result: a mismatch when the error
/// exceeds `bound` (NaN, e.g. an unwritten poisoned element, never passes).
/// Returns the absolute error.
double CheckElement(Report& report, int64_t i, int64_t j, double got, double ref, double bound) {
  double err = std::isnan(got) ? std::numeric_limits<double>::infinity() : std::fabs(got - ref);
  ++report.checked;
  if (!(err <= bound)) {
    if (report.mismatches == 0)
      report.detail =
          absl::StrFormat("first mismatch at (%d, %d): got %g, expected %g", i, j, got, ref);
    ++report.mismatches;
  }
  return err;
}

/// Tunes over options.tune_candidates when there are any (on these
/// arguments, before the check, unless options.tune_cache already holds a
/// choice: report.chosen and report.tuning say what won and what each
/// took), then poisons `output` and launches the chosen
/// kernel (or `kernel`) once for the check. Returns the kernel it launched.
absl::StatusOr<const LoadedKernel*> TuneAndLaunch(const LoadedKernel& kernel,
                                                  const std::vector<KernelArg>& args,
                                                  const RunOptions& options, DeviceBuffer& output,
                                                  Report& report) {
  const LoadedKernel* chosen = &kernel;
  if (!options.tune_candidates.empty()) {
    runtime::TuneResult tuned;
    runtime::TuneCache scratch;
    runtime::TimingOptions timing = runtime::DefaultTuneTiming();
    timing.stream = options.timing.stream;
    timing.flush_l2 = options.timing.flush_l2;
    timing.sync_each_run = options.timing.sync_each_run;
    TESSERA_ASSIGN_OR_RETURN(
        chosen, runtime::SelectTuned(options.tune_candidates, args, options.device_name,
                                     options.tune_cache ? *options.tune_cache : scratch, timing,
                                     &tuned));
    report.chosen = chosen->entry();
    report.tuning = tuned.trials.empty() ? "(the tuning cache's choice)" : tuned.Summary();
  }
  TESSERA_RETURN_IF_ERROR(output.Fill(kPoisonByte));
  TESSERA_RETURN_IF_ERROR(runtime::Launch(*chosen, args));
  return chosen;
}

/// Times the launch (warm-up, median, L2 flushed) when asked and correct
/// (or asked to time wrong results too).
absl::Status TimeIfAsked(const LoadedKernel& kernel, const std::vector<KernelArg>& args,
                         const RunOptions& options, Report& report) {
  if (!options.time || (!report.correct && !options.time_wrong)) return absl::OkStatus();
  TESSERA_ASSIGN_OR_RETURN(runtime::PackedLaunch packed,
                           runtime::PrepareLaunch(kernel.spec(), args));
  TESSERA_ASSIGN_OR_RETURN(
      report.timing,
      runtime::TimeIt([&] { return runtime::Launch(kernel, packed); }, options.timing));
  return absl::OkStatus();
}

absl::StatusOr<const LoadedKernel*> CompanionKernel(const std::string& kernel,
                                                    const std::string& entry,
                                                    const RunOptions& options) {
  if (!options.companion)
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: this runner gives no companion kernel (%s)", kernel, entry));
  return options.companion(entry);
}

/// Rounds to the nearest f16 and back (round-to-nearest-even), exactly as
/// the GPU's cvt.f32.f16 of a cvt.rn.f16.f32 does.
float RoundToHalf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  uint32_t sign = bits & 0x80000000u;
  float ax = std::fabs(x);
  if (ax < 6.103515625e-05f) {  // subnormal half: quantum 2^-24
    float q = std::nearbyint(ax * 16777216.0f) / 16777216.0f;
    uint32_t qb;
    std::memcpy(&qb, &q, 4);
    qb |= sign;
    std::memcpy(&q, &qb, 4);
    return q;
  }
  // Keep 10 mantissa bits with round-to-nearest-even.
  uint32_t lsb = (bits >> 13) & 1u;
  bits += 0x0FFFu + lsb;
  bits &= ~0x1FFFu;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

}  // namespace internal

uint16_t FloatToHalfBits(float x) {
  float r = internal::RoundToHalf(x);
  uint32_t bits;
  std::memcpy(&bits, &r, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = int32_t((bits >> 23) & 0xFF) - 127 + 15;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (r == 0) return uint16_t(sign);
  if (exponent <= 0) {  // subnormal
    uint32_t m = (mantissa | 0x800000u) >> (1 - exponent);
    return uint16_t(sign | (m >> 13));
  }
  return uint16_t(sign | (uint32_t(exponent) << 10) | (mantissa >> 13));
}

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  float result;
  if (exponent == 0) {
    result = std::ldexp(float(mantissa), -24);
  } else if (exponent == 31) {
    result = mantissa ? std::numeric_limits<float>::quiet_NaN()
                      : std::numeric_limits<float>::infinity();
  } else {
    result = std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &result, 4);
  bits |= sign;
  std::memcpy(&result, &bits, 4);
  return result;
}

namespace internal {

uint16_t FloatToBf16Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even
  return uint16_t(bits >> 16);
}

float Bf16BitsToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double DecodeElement(runtime::DType dtype, const uint8_t* p) {
  if (dtype == runtime::DTYPE_F64) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (dtype == runtime::DTYPE_F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == runtime::DTYPE_F16 ? HalfBitsToFloat(h) : Bf16BitsToFloat(h);
}

}  // namespace internal

using namespace internal;

double Report::TerabytesPerSecond() const {
  if (!timing || timing->median_ms <= 0) return 0;
  return bytes / (timing->median_ms * 1e-3) / 1e12;
}

const std::vector<Workload>& AllWorkloads() {
  static const auto* workloads = [] {
  auto* list = new std::vector<Workload>{
      // Conformance: a block-multiple length, an odd length (tail inside the
      // last block), a length shorter than one block, and one element.
      VectorAdd(1 << 20, true, false),
      VectorAdd((1 << 20) + 3, true, false),
      VectorAdd(1000, true, false),
      VectorAdd(1, true, false),
      // Benchmarks of the issue: 2^28 and 2^28 - 3 elements.
      VectorAdd(int64_t{1} << 28, false, true),
      VectorAdd((int64_t{1} << 28) - 3, false, true),
      // Conformance-only kernels (tests/conformance/cases.cc).
      VectorAdd(1000003, true, false, "vector_add_static"),
      ScaleShared2D(1000),
      ScaleShared2D(7),
      RowReduce(runtime::DTYPE_F32, "f32", 37),
      RowReduce(runtime::DTYPE_F16, "f16", 37),
      RowReduce(runtime::DTYPE_BF16, "bf16", 37),
      RowReduce(runtime::DTYPE_F64, "f64", 37),
      // GEMM: the example (f16, N and K multiples of 8) and the conformance
      // kernels (bf16, f32, transposed B, and any shape).
      Gemm("gemm_f16", 256, 256, 128, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16", 2048, 2048, 2048, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 4096, 4096, 4096, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 8192, 8192, 8192, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 3000, 5000, 4000, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_f16", 8192, 8192, 1000, runtime::DTYPE_F16, false, false, true),
      Gemm("gemm_bf16", 257, 392, 136, runtime::DTYPE_BF16, false, true, false),
      Gemm("gemm_bf16", 2048, 2048, 2048, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 4096, 4096, 4096, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 8192, 8192, 8192, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 3000, 5000, 4000, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_bf16", 8192, 8192, 1000, runtime::DTYPE_BF16, false, false, true),
      Gemm("gemm_f32", 129, 200, 72, runtime::DTYPE_F32, false, true, false),
      Gemm("gemm_f16_tn", 257, 392, 136, runtime::DTYPE_F16, true, true, false),
      Gemm("gemm_f16_k16", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_k16", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_overhang", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_overhang", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_pairs", 512, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_pairs", 768, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_any", 257, 383, 129, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_any", 1, 1, 1, runtime::DTYPE_F16, false, true, false),
      // A and B in fragments; chained gemms with the intermediate in
      // registers (tails: M, N not multiples of 64).
      // Ping-pong: 3 and 5 tile rows leave the last block one tile.
      Gemm("gemm_f16_pingpong", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_pingpong", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      // Grid launch (sm_90a: the producer leaves before the kernel's code).
      Gemm("gemm_f16_grid", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      // Clusters of two along x: 392 wide is two tiles of 256 (pairs share
      // B), 264 is two with the second at the edge; 3 and 5 tile rows put
      // pairs of other tiles (each loads alone) and padded blocks in.
      Gemm("gemm_f16_grid_mc", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      // Persistent in clusters of two, tiles t and t ^ 1 paired: 6 tiles
      // (fewer than the blocks); 153 (blocks loop, the last tile alone, the
      // last tile row's pairs on two columns); 72.
      Gemm("gemm_f16_persistent_mc", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc", 2100, 2104, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      // Clusters of four: 257 x 392 is 3 tile rows of 2 (no group of four
      // complete on sm_90a: every tile loads alone), 2100 x 2104 153 tiles
      // (blocks loop, the last group short), 1031 x 1800 and 600 x 1000 (B's
      // row pitch of 2000 bytes 16 off a 32-byte sector) mixed groups.
      Gemm("gemm_f16_persistent_mc4", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc4", 2100, 2104, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc4", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc4", 600, 1000, 264, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc_n192", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent_mc_n192", 2100, 2104, 1032, runtime::DTYPE_F16, false, true,
           false),
      Gemm("gemm_f16_persistent_mc_n192", 600, 1000, 264, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_grid_mc4", 600, 1000, 264, runtime::DTYPE_F16, false, true, false),
      // Persistent: 2100 x 2104 has more tiles than the device holds blocks
      // (17 x 9 of 128 x 256, 17 x 17 of 128 x 128), so blocks loop.
      Gemm("gemm_f16_persistent", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_persistent", 2100, 2104, 136, runtime::DTYPE_F16, false, true, false),
      // Stream-K: 2100 x 2104 leaves a partial wave whose tiles are split
      // over every block (up to seven pieces a tile; with K = 1416 a block's
      // split on sm_90a, 21 of 153 tiles of 128 x 256 over 132 blocks, runs
      // 4 iterations instead of a whole tile's 23, which saves more than its
      // cost model's 14, so it splits there too); 257 x 392 has less than a
      // wave (every tile whole).
      Gemm("gemm_f16_streamk", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk", 2100, 2104, 8, runtime::DTYPE_F16, false, true, false),
      // Stream-K in clusters of two: 2100 x 2104 x 1416 splits (see above)
      // after one whole round that multicasts, 1031 x 1800 x 520 runs 64
      // whole tiles of 128 x 256 (fewer than a wave: none split), pairs and
      // a tile alone.
      Gemm("gemm_f16_streamk_mc", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_mc", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_mc", 1031, 1800, 520, runtime::DTYPE_F16, false, true, false),
      // Clusters of four: on 120 blocks 2100 x 2104 x 1416 runs one whole
      // round (30 groups of four multicast) and splits the other 33 tiles.
      Gemm("gemm_f16_streamk_mc4", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_mc4", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      // The edge loop: M, N and K tails (K = 136 and 1416: 4 and 44 k-tiles
      // of 32 and a tail of 8), N a multiple of 8 only; split tiles.
      Gemm("gemm_f16_edge", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_edge", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_edge", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_streamk_edge", 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_fragments", 257, 383, 129, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_staged_b", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      // The accumulator through a shared tile (stmatrix on sm_90).
      Gemm("gemm_f16_via_shared", 257, 392, 136, runtime::DTYPE_F16, false, true, false),
      Gemm("gemm_f16_via_shared", 520, 264, 1032, runtime::DTYPE_F16, false, true, false),
      GemmChain(200, 300),
      GemmChain(64, 64),
      GemmChain(1, 1),
      // Softmax: the example (f16 rows of 8192) and row lengths that are not
      // multiples of the tile, several rows per block with a row tail.
      Softmax("softmax_f16", 64, 8192, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f16", 16384, 8192, runtime::DTYPE_F16, false, true),
      Softmax("softmax_f32", 16384, 8192, runtime::DTYPE_F32, false, true),
      Softmax("softmax_f16_32000", 4096, 32000, runtime::DTYPE_F16, false, true),
      Softmax("softmax_f16_32000", 37, 32000, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f16_1000", 65536, 1000, runtime::DTYPE_F16, false, true),
      Softmax("softmax_f16_1000", 37, 1000, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f32_rows4", 37, 1000, runtime::DTYPE_F32, true, false),
      Softmax("softmax_f16_online", 37, 3000, runtime::DTYPE_F16, true, false),
      Softmax("softmax_f16_online_prime", 37, 3001, runtime::DTYPE_F16, true, false),
      // Normalizations.
      Norm("rmsnorm_f16", 37, 8192, runtime::DTYPE_F16, false, true, false),
      Norm("rmsnorm_f16", 16384, 8192, runtime::DTYPE_F16, false, false, true),
      Norm("layernorm_f16", 37, 8192, runtime::DTYPE_F16, true, true, false),
      Norm("layernorm_f16", 16384, 8192, runtime::DTYPE_F16, true, false, true),
      Norm("rmsnorm_f32_1000", 37, 1000, runtime::DTYPE_F32, false, true, false),
  };
  // GEMM with fused epilogues: C = act(A B + bias) (+ R).
  for (auto [kernel, act, residual, benchmark] :
       {std::tuple<const char*, Act, bool, bool>{"gemm_bias_gelu_f16", Act::kGeluTanh, false, true},
        {"gemm_bias_gelu_erf_f16", Act::kGeluErf, false, true},
        {"gemm_bias_relu_f16", Act::kRelu, false, false},
        {"gemm_bias_silu_f16", Act::kSilu, false, true},
        {"gemm_bias_residual_f16", Act::kNone, true, true},
        {"gemm_bias_gelu_f16_pingpong", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_grid", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_grid_mc", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_persistent_mc", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_persistent_mc4", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_grid_mc4", Act::kGeluTanh, false, false},
        {"gemm_bias_gelu_f16_persistent_mc_n192", Act::kGeluTanh, false, false}})
    for (Workload& w : GemmEpilogueWorkloads(kernel, act, residual, benchmark))
      list->push_back(std::move(w));
  // Ping-pong with a long K: slot 0's epilogue (its bias tile in shared
  // memory) runs while slot 1's main loop still fills the stages.
  list->push_back(Gemm("gemm_bias_gelu_f16_pingpong", 520, 264, 1032, runtime::DTYPE_F16, false,
                       true, false, GemmEpilogue{true, Act::kGeluTanh, false}));
  // Grid launch, fused: the consumers load the bias row before the main
  // loop while the producer already fills its stages (the bias moved off
  // the stages' bytes).
  list->push_back(Gemm("gemm_bias_gelu_f16_grid", 520, 264, 1032, runtime::DTYPE_F16, false,
                       true, false, GemmEpilogue{true, Act::kGeluTanh, false}));
  // Stream-K, fused: the accumulator starts at the bias row, which the
  // tile's first piece keeps and its later pieces (starting at zero) do not
  // add again; split tiles on every target (see gemm_f16_streamk).
  list->push_back(Gemm("gemm_bias_gelu_f16_streamk", 2100, 2104, 1416, runtime::DTYPE_F16,
                       false, true, false, GemmEpilogue{true, Act::kGeluTanh, false}));
  for (const char* kernel : {"gemm_bias_gelu_f16_edge", "gemm_bias_gelu_f16_streamk_edge",
                             "gemm_bias_gelu_f16_streamk_mc", "gemm_bias_gelu_f16_streamk_mc4"})
    list->push_back(Gemm(kernel, 2100, 2104, 1416, runtime::DTYPE_F16, false, true, false,
                         GemmEpilogue{true, Act::kGeluTanh, false}));
  // Persistent, fused: the next tile's stages fill while the bias tile of
  // this one is read.
  for (const char* kernel : {"gemm_bias_gelu_f16_persistent", "gemm_bias_gelu_f16_persistent_mc",
                             "gemm_bias_gelu_f16_persistent_mc4"})
    list->push_back(Gemm(kernel, 2100, 2104, 264, runtime::DTYPE_F16, false, true, false,
                         GemmEpilogue{true, Act::kGeluTanh, false}));
  for (Workload& w : DtypeWorkloads()) list->push_back(std::move(w));
  for (Workload& w : QuantWorkloads()) list->push_back(std::move(w));
  for (Workload& w : SplitKWorkloads()) list->push_back(std::move(w));
  for (Workload& w : PagedGatherWorkloads()) list->push_back(std::move(w));
  for (Workload& w : SoftmaxVarlenWorkloads()) list->push_back(std::move(w));
  for (Workload& w : GroupedGemmWorkloads()) list->push_back(std::move(w));
  for (Workload& w : MoeWorkloads()) list->push_back(std::move(w));
  for (Workload& w : AttentionWorkloads()) list->push_back(std::move(w));
  for (Workload& w : FlashAttentionWorkloads()) list->push_back(std::move(w));
  for (Workload& w : FlashAttentionBwdWorkloads()) list->push_back(std::move(w));
  for (Workload& w : FlashAttentionVarlenWorkloads()) list->push_back(std::move(w));
  for (Workload& w : FlashDecodingWorkloads()) list->push_back(std::move(w));
  return list;
  }();
  return *workloads;
}

std::function<absl::StatusOr<const runtime::LoadedKernel*>(const std::string&)>
CompanionKernels::For(const std::string& target) {
  return [this, target](const std::string& entry) -> absl::StatusOr<const runtime::LoadedKernel*> {
    auto key = std::make_pair(target, entry);
    if (auto it = loaded_.find(key); it != loaded_.end()) return &it->second;
    for (const runtime::CompiledKernel* spec : specs_) {
      if (spec->entry() != entry || spec->target() != target) continue;
      absl::StatusOr<runtime::LoadedKernel> kernel = runtime::LoadedKernel::Load(*spec);
      if (!kernel.ok()) return kernel.status();
      return &loaded_.emplace(key, *std::move(kernel)).first->second;
    }
    return absl::NotFoundError(
        absl::StrFormat("no companion kernel %s for %s among the kernels given", entry, target));
  };
}

std::vector<const Workload*> WorkloadsForKernel(const std::string& kernel) {
  // A tuning variant "vector_add__b4096_t256" runs vector_add's workloads.
  std::string base = kernel.substr(0, kernel.find("__"));
  std::vector<const Workload*> result;
  for (const Workload& w : AllWorkloads())
    if (w.kernel == base) result.push_back(&w);
  return result;
}

std::optional<Workload> GemmBenchmarkAt(const std::string& kernel, int64_t m, int64_t n,
                                        int64_t k) {
  std::string base = kernel.substr(0, kernel.find("__"));
  if (m < 1 || n < 1 || k < 1) return std::nullopt;
  if (base == "gemm_f16") return Gemm(base, m, n, k, runtime::DTYPE_F16, false, false, true);
  if (base == "gemm_bf16") return Gemm(base, m, n, k, runtime::DTYPE_BF16, false, false, true);
  return DtypeGemmBenchmarkAt(base, m, n, k);
}

std::string FormatReport(const Report& r) {
  std::string timing = "-";
  if (r.timing && r.flops > 2 * r.bytes)  // compute-bound: report TFLOP/s
    timing = absl::StrFormat("%.4f ms  %.1f TFLOP/s", r.timing->median_ms,
                             r.flops / (r.timing->median_ms * 1e-3) / 1e12);
  else if (r.timing)
    timing = absl::StrFormat("%.4f ms  %.3f TB/s", r.timing->median_ms, r.TerabytesPerSecond());
  return absl::StrFormat("%-8s %-42s %-4s err %-10.3g (tol %.1g, %d wrong of %d)  %s%s%s%s%s",
                         r.target, r.workload, r.correct ? "ok" : "FAIL", r.max_error,
                         r.tolerance, r.mismatches, r.checked, timing,
                         r.chosen.empty() ? "" : "  tuned: ", r.chosen,
                         r.detail.empty() ? "" : "  ", r.detail);
}

}  // namespace tessera::workloads
