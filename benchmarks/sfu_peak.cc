//===- sfu_peak.cc - Throughput of the special-function unit's forms ------===//
//
// Measures how many results of tanh and ex2 the GPU at hand delivers per
// nanosecond and SM, for each PTX form: tanh.approx.f32, .f16, .f16x2,
// .bf16x2, ex2.approx.f32, .f16x2. A fused GEMM epilogue with a GELU is bound
// by these units (one MUFU per element, RESULTS.md run 28), so whether a
// packed 16-bit form delivers two results for the price of one decides what
// such an epilogue can gain from computing its tanh in f16. Every thread runs
// kChains independent chains x = f(x) from registers, no memory traffic (tanh
// chains shrink towards 0, ex2 chains reach +inf within a few steps: the
// unit's throughput does not depend on the values, run 105). The
// PTX is written here by hand (runtime only, for the GPU machine):
//
//   sfu_peak [--blocks-per-sm=4] [--threads=256] [--iters=4096]
//   sfu_peak --ptx     # print the kernels' PTX (no GPU needed)
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmarks/peak_kernel.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/timer.h"

namespace {

using namespace tessera::runtime;

constexpr int kChains = 8;  // independent chains per thread

/// One instruction form: its PTX (which names it), the register type it
/// works on, and how many results one instruction delivers.
struct Form {
  const char* instruction;  // e.g. "tanh.approx.f16x2"
  enum Reg { kF32, kF16, kPacked } reg;
  bool bf16;                // packed bf16x2 rather than f16x2
  int results;
};

constexpr Form kForms[] = {
    {"tanh.approx.f32", Form::kF32, false, 1},
    {"tanh.approx.f16", Form::kF16, false, 1},
    {"tanh.approx.f16x2", Form::kPacked, false, 2},
    {"tanh.approx.bf16x2", Form::kPacked, true, 2},
    {"ex2.approx.ftz.f32", Form::kF32, false, 1},
    {"ex2.approx.f16x2", Form::kPacked, false, 2},
};

/// The kernel of one form: chains seeded from the thread index (values in
/// [0.25, 0.75)), kChains instructions per iteration, each on its own chain;
/// the chains' values summed in f32 and stored so that nothing is dead.
std::string SfuPtx(const Form& f) {
  std::string ptx = absl::StrCat(
      ".version 7.8\n.target sm_90\n.address_size 64\n\n"
      ".visible .entry sfu_peak(.param .u64 out, .param .u32 iters)\n{\n"
      "  .reg .pred %p;\n  .reg .b32 %i, %n, %t, %c, %g;\n"
      "  .reg .f32 %s, %v, %lo, %hi;\n  .reg .b16 %hl, %hh;\n  .reg .u64 %o, %off;\n",
      f.reg == Form::kF32 ? "  .reg .f32 %x<" : f.reg == Form::kF16 ? "  .reg .b16 %x<"
                                                                    : "  .reg .b32 %x<",
      kChains, ">;\n"
      "  mov.u32 %t, %tid.x;\n  mov.u32 %c, %ctaid.x;\n  mov.u32 %g, %ntid.x;\n"
      "  and.b32 %i, %t, 255;\n  cvt.rn.f32.u32 %s, %i;\n"
      "  fma.rn.f32 %s, %s, 0f3B000000, 0f3E800000;\n");  // s = t / 512 + 0.25
  const char* pack = f.bf16 ? "cvt.rn.bf16x2.f32" : "cvt.rn.f16x2.f32";
  for (int k = 0; k < kChains; ++k) {
    // + a small offset per chain (0x3C000000 is 1/128, each step a little more)
    absl::StrAppend(&ptx, "  add.f32 %v, %s, 0f",
                    absl::StrFormat("%08X", 0x3C000000 + k * 0x100000), ";\n");
    if (f.reg == Form::kF32)
      absl::StrAppend(&ptx, "  mov.f32 %x", k, ", %v;\n");
    else if (f.reg == Form::kF16)
      absl::StrAppend(&ptx, "  cvt.rn.f16.f32 %x", k, ", %v;\n");
    else
      absl::StrAppend(&ptx, "  add.f32 %lo, %v, 0f3C800000;\n  ", pack, " %x", k,
                      ", %lo, %v;\n");  // halves differ by 1/64
  }
  absl::StrAppend(&ptx, "  ld.param.u32 %n, [iters];\n  mov.u32 %i, 0;\nLOOP:\n");
  for (int k = 0; k < kChains; ++k)
    absl::StrAppend(&ptx, "  ", f.instruction, " %x", k, ", %x", k, ";\n");
  absl::StrAppend(&ptx,
                  "  add.u32 %i, %i, 1;\n  setp.lt.u32 %p, %i, %n;\n  @%p bra LOOP;\n"
                  "  mov.f32 %s, 0f00000000;\n");
  const char* widen = f.bf16 ? "cvt.f32.bf16" : "cvt.f32.f16";
  for (int k = 0; k < kChains; ++k) {
    if (f.reg == Form::kF32) {
      absl::StrAppend(&ptx, "  add.f32 %s, %s, %x", k, ";\n");
    } else if (f.reg == Form::kF16) {
      absl::StrAppend(&ptx, "  cvt.f32.f16 %v, %x", k, ";\n  add.f32 %s, %s, %v;\n");
    } else {
      absl::StrAppend(&ptx, "  mov.b32 {%hl, %hh}, %x", k, ";\n  ", widen, " %lo, %hl;\n  ",
                      widen, " %hi, %hh;\n  add.f32 %s, %s, %lo;\n  add.f32 %s, %s, %hi;\n");
    }
  }
  absl::StrAppend(&ptx, tessera::benchmarks::StoreSumPtx());
  return ptx;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::benchmarks::PeakFlags flags;
  std::optional<tessera::benchmarks::PeakRun> run;
  auto printPtx = [] {
    for (const Form& f : kForms) std::printf("// %s\n%s\n", f.instruction, SfuPtx(f).c_str());
  };
  if (std::optional<int> done =
          tessera::benchmarks::StartPeak(argc, argv, "sfu_peak", printPtx, flags, run))
    return *done;
  int threads = flags.threads, iters = flags.iters;
  int sms = run->sms;
  int64_t blocks = run->blocks;
  std::printf("sfu_peak: %lld blocks x %d threads, %d iterations x %d chains, %d SMs\n",
              static_cast<long long>(blocks), threads, iters, kChains, sms);
  double base = 0;
  for (const Form& f : kForms) {
    absl::StatusOr<TimingResult> result =
        tessera::benchmarks::TimePeakKernel(SfuPtx(f), "sfu_peak", "sm_90", *run, threads);
    if (!result.ok()) return tessera::benchmarks::PeakFailure("sfu_peak", result.status());
    double instructions = double(blocks) * threads * iters * kChains;
    double perNs = instructions * f.results / (result->median_ms * 1e6) / sms;
    if (base == 0) base = perNs;
    std::printf("%-20s %.4f ms median  %7.2f results/ns/SM  %.2fx tanh.approx.f32\n",
                f.instruction, result->median_ms, perNs, perNs / base);
  }
  return 0;
}
