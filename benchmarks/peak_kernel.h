//===- peak_kernel.h - What the register-only microbenchmarks share ------===//
//
// mma_peak and sfu_peak time hand-written PTX kernels that work from
// registers only: `entry(.param .u64 out, .param .u32 iters)`, one f32 per
// thread stored at the end so that nothing is dead, launched on a constant
// grid of blocks-per-SM x SMs blocks. This header holds their flags, the
// PTX of that final store, the kernel's launch description, the start of
// their main and the timing of one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHMARKS_PEAK_KERNEL_H
#define TESSERA_BENCHMARKS_PEAK_KERNEL_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/timer.h"

namespace tessera::benchmarks {

/// The flags both tools take: --blocks-per-sm=N --threads=N --iters=N --ptx.
struct PeakFlags {
  int blocksPerSm = 4, threads = 256, iters = 4096;
  bool printPtx = false;
};

/// Parses the flags; false (after one line on stderr naming `tool`) on an
/// unknown one.
inline bool ParsePeakFlags(int argc, char** argv, const char* tool, PeakFlags& flags) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ptx") == 0) {
      flags.printPtx = true;
      continue;
    }
    if (std::sscanf(argv[i], "--blocks-per-sm=%d", &flags.blocksPerSm) == 1) continue;
    if (std::sscanf(argv[i], "--threads=%d", &flags.threads) == 1) continue;
    if (std::sscanf(argv[i], "--iters=%d", &flags.iters) == 1) continue;
    std::fprintf(stderr, "%s: unknown argument '%s' (flags: --blocks-per-sm=N --threads=N "
                         "--iters=N --ptx)\n", tool, argv[i]);
    return false;
  }
  return true;
}

/// One line on stderr naming `tool` and the failing call (a JIT log's line
/// breaks become " | "); the exit status 1.
inline int PeakFailure(const char* tool, const absl::Status& status) {
  std::string message(status.message());
  for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at))
    message.replace(at, 1, " | ");
  std::fprintf(stderr, "%s: %s\n", tool, message.c_str());
  return 1;
}

/// The kernel's end: the f32 sum in %s stored at out[block * ntid + tid]
/// (registers %c, %g, %t hold ctaid.x, ntid.x, tid.x; %o, %off are u64).
inline const char* StoreSumPtx() {
  return "  mad.lo.u32 %c, %c, %g, %t;\n  mul.wide.u32 %off, %c, 4;\n"
         "  ld.param.u64 %o, [out];\n  add.u64 %o, %o, %off;\n"
         "  st.global.f32 [%o], %s;\n  ret;\n}\n";
}

/// Loads `ptx` (entry `entry`, compiled for `target`) as a kernel of
/// `threads` threads on `blocks` blocks taking (out: f32[blocks * threads],
/// iters: i32).
inline absl::StatusOr<runtime::LoadedKernel> LoadPeakKernel(const std::string& ptx,
                                                           const std::string& entry,
                                                           const std::string& target,
                                                           int64_t blocks, int threads) {
  runtime::CompiledKernel spec;
  spec.set_target(target);
  spec.set_entry(entry);
  spec.set_ptx(ptx);
  spec.set_block_threads(threads);
  runtime::Param* out = spec.add_params();
  out->set_name("out");
  out->set_kind(runtime::Param::KIND_TENSOR);
  out->set_dtype(runtime::DTYPE_F32);
  out->add_shape(blocks * threads);
  runtime::Param* count = spec.add_params();
  count->set_name("iters");
  count->set_kind(runtime::Param::KIND_SCALAR);
  count->set_dtype(runtime::DTYPE_I32);
  runtime::Expr* grid = spec.add_grid();
  grid->set_op(runtime::Expr::OP_CONSTANT);
  grid->set_value(blocks);
  return runtime::LoadedKernel::Load(spec);
}

/// Device 0, the grid for `flags` on it, and the kernel's arguments (the
/// output buffer and the iteration count).
struct PeakRun {
  runtime::Device device;
  int sms = 0;
  int64_t blocks = 0;
  runtime::DeviceBuffer out;
  std::vector<runtime::KernelArg> args;
};

inline absl::StatusOr<PeakRun> PreparePeakRun(const PeakFlags& flags) {
  absl::StatusOr<runtime::Device> device = runtime::Device::Open(0);
  if (!device.ok()) return device.status();
  int sms = device->sm_count();
  int64_t blocks = int64_t(sms) * flags.blocksPerSm;
  absl::StatusOr<runtime::DeviceBuffer> out =
      runtime::DeviceBuffer::Allocate(blocks * flags.threads * 4);
  if (!out.ok()) return out.status();
  std::vector<runtime::KernelArg> args = {
      runtime::TensorArg{out->ptr(), runtime::DTYPE_F32, {blocks * flags.threads}},
      runtime::ScalarArg::I32(flags.iters)};
  return PeakRun{*std::move(device), sms, blocks, *std::move(out), std::move(args)};
}

/// The start of both tools' main: parses the flags (an unknown one: exit
/// status 2), prints the PTX with `printPtx` under --ptx (0), else prepares
/// the run on device 0 (a failure: one line naming `tool`, 1). Returns the
/// exit status when main should return it now; otherwise `run` holds the run.
inline std::optional<int> StartPeak(int argc, char** argv, const char* tool,
                                    const std::function<void()>& printPtx, PeakFlags& flags,
                                    std::optional<PeakRun>& run) {
  if (!ParsePeakFlags(argc, argv, tool, flags)) return 2;
  if (flags.printPtx) {
    printPtx();
    return 0;
  }
  absl::StatusOr<PeakRun> prepared = PreparePeakRun(flags);
  if (!prepared.ok()) return PeakFailure(tool, prepared.status());
  run.emplace(*std::move(prepared));
  return std::nullopt;
}

/// Loads `ptx` (entry `tool`, for `target`) on the run's grid and times it
/// (the median of TimeIt; no L2 flush, the kernel reads no memory).
inline absl::StatusOr<runtime::TimingResult> TimePeakKernel(const std::string& ptx,
                                                           const char* tool,
                                                           const std::string& target,
                                                           const PeakRun& run, int threads) {
  absl::StatusOr<runtime::LoadedKernel> kernel =
      LoadPeakKernel(ptx, tool, target, run.blocks, threads);
  if (!kernel.ok()) return kernel.status();
  runtime::TimingOptions timing;
  timing.flush_l2 = false;
  return runtime::TimeIt([&] { return runtime::Launch(*kernel, run.args); }, timing);
}

}  // namespace tessera::benchmarks

#endif  // TESSERA_BENCHMARKS_PEAK_KERNEL_H
