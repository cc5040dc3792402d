//===- mma_peak.cc - The tensor-core ceiling of mma.sync on this GPU ------===//
//
// Measures what mma.sync.aligned.m16n8k16 (f16 inputs, f32 accumulators, the
// instruction of the sm80 build) can do on the GPU at hand with no memory
// traffic at all: every warp issues 16 independent MMAs per loop iteration
// from registers. On Hopper this is the ceiling of any mma.sync GEMM (the
// sm80 build's kernels run through the driver's JIT there), to set beside
// cuBLAS's wgmma figure. The PTX is written here by hand (runtime only: it
// runs on the GPU machine, which has no compiler):
//
//   mma_peak [--blocks-per-sm=4] [--threads=256] [--iters=4096]
//   mma_peak --ptx     # print the kernel's PTX (no GPU needed)
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <string>

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

constexpr int kChains = 16;  // independent accumulator sets per warp

/// The kernel: operands from the thread index (f16 values in [1, 1.25)),
/// kChains independent m16n8k16 MMAs per iteration, the accumulators summed
/// and stored so that nothing is dead.
std::string MmaPeakPtx() {
  std::string ptx = absl::StrCat(
      ".version 7.0\n.target sm_80\n.address_size 64\n\n"
      ".visible .entry mma_peak(.param .u64 out, .param .u32 iters)\n{\n"
      "  .reg .pred %p;\n  .reg .b32 %a<4>, %b<2>, %i, %n, %t, %c, %g;\n"
      "  .reg .f32 %d<",
      4 * kChains,
      ">, %s;\n  .reg .u64 %o, %off;\n"
      "  mov.u32 %t, %tid.x;\n  mov.u32 %c, %ctaid.x;\n  mov.u32 %g, %ntid.x;\n"
      "  and.b32 %a0, %t, 255;\n  mad.lo.u32 %a0, %a0, 65537, 1006648320;\n"  // 0x3c003c00
      "  xor.b32 %a1, %a0, 5;\n  xor.b32 %a2, %a0, 10;\n  xor.b32 %a3, %a0, 15;\n"
      "  xor.b32 %b0, %a0, 3;\n  xor.b32 %b1, %a0, 12;\n");
  for (int r = 0; r < 4 * kChains; ++r) absl::StrAppend(&ptx, "  mov.f32 %d", r, ", 0f00000000;\n");
  absl::StrAppend(&ptx, "  ld.param.u32 %n, [iters];\n  mov.u32 %i, 0;\nLOOP:\n");
  for (int c = 0; c < kChains; ++c) {
    std::string d = absl::StrFormat("%%d%d, %%d%d, %%d%d, %%d%d", 4 * c, 4 * c + 1, 4 * c + 2,
                                    4 * c + 3);
    absl::StrAppend(&ptx,
                    "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {", d,
                    "}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {", d, "};\n");
  }
  absl::StrAppend(&ptx,
                  "  add.u32 %i, %i, 1;\n  setp.lt.u32 %p, %i, %n;\n  @%p bra LOOP;\n"
                  "  mov.f32 %s, 0f00000000;\n");
  for (int r = 0; r < 4 * kChains; ++r) absl::StrAppend(&ptx, "  add.f32 %s, %s, %d", r, ";\n");
  absl::StrAppend(&ptx, tessera::benchmarks::StoreSumPtx());
  return ptx;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::benchmarks::PeakFlags flags;
  std::optional<tessera::benchmarks::PeakRun> run;
  if (std::optional<int> done = tessera::benchmarks::StartPeak(
          argc, argv, "mma_peak", [] { std::fputs(MmaPeakPtx().c_str(), stdout); }, flags, run))
    return *done;
  int threads = flags.threads, iters = flags.iters;
  int64_t blocks = run->blocks;
  absl::StatusOr<TimingResult> result =
      tessera::benchmarks::TimePeakKernel(MmaPeakPtx(), "mma_peak", "sm_80", *run, threads);
  if (!result.ok()) return tessera::benchmarks::PeakFailure("mma_peak", result.status());
  double flops = double(blocks) * (threads / 32) * iters * kChains * (2.0 * 16 * 8 * 16);
  std::printf("mma_peak: mma.sync.m16n8k16 f16->f32 from registers, %lld blocks x %d threads, "
              "%d iterations x %d MMAs per warp: %.4f ms median, %.1f TFLOP/s\n",
              static_cast<long long>(blocks), threads, iters, kChains, result->median_ms,
              flops / (result->median_ms * 1e-3) / 1e12);
  return 0;
}
