//===- workloads.h - Run, check and time compiled kernels -------*- C++ -*-===//
//
// This file declares the workloads: for each example kernel, problem sizes
// with random inputs, a float64 (or exact) CPU reference, poisoned outputs,
// a correctness check and optional timing. Runtime only (no LLVM or MLIR),
// so the same checks run from an example binary, the conformance suite and
// the GPU-side runner that ships without the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_WORKLOADS_WORKLOADS_H_
#define TESSERA_EXAMPLES_WORKLOADS_WORKLOADS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/autotune.h"
#include "runtime/kernel.h"
#include "runtime/timer.h"

namespace tessera::workloads {

/// f32 -> f16 bits with round-to-nearest-even (subnormals kept), and back.
uint16_t FloatToHalfBits(float x);
float HalfBitsToFloat(uint16_t h);

/// What one run of a workload found.
struct Report {
  std::string workload;
  std::string target;
  bool correct = false;
  /// Largest error against the reference (absolute or relative, see detail).
  double max_error = 0;
  /// The bound the error was checked against.
  double tolerance = 0;
  /// Elements checked, and how many were wrong.
  int64_t checked = 0;
  int64_t mismatches = 0;
  /// Bytes the kernel must move and FLOPs it must do (for rates).
  double bytes = 0;
  double flops = 0;
  std::optional<runtime::TimingResult> timing;
  std::string detail;
  /// With RunOptions::tune_candidates: the entry that won the tuning (the
  /// one checked and timed above) and every candidate's time.
  std::string chosen;
  std::string tuning;

  /// Effective bandwidth in TB/s over the median time (0 if untimed).
  double TerabytesPerSecond() const;
};

/// How to run a workload.
struct RunOptions {
  bool time = false;
  /// Time a launch whose result is wrong too (the report still fails):
  /// ceiling experiments on hand-edited PTX that skips part of the work.
  bool time_wrong = false;
  runtime::TimingOptions timing;
  /// Seed of the random inputs (fresh inputs per seed).
  uint64_t seed = 1;
  /// GEMM inputs drawn as torch.rand in the 16-bit type draws them (see
  /// HostMatrix) instead of rounded from float32.
  bool torch_inputs = false;
  /// Interchangeable kernels (the run's own among them) to tune over on the
  /// workload's arguments first (runtime::Autotune); the fastest is then
  /// checked and timed. Empty: the run's kernel alone.
  std::vector<const runtime::LoadedKernel*> tune_candidates;
  /// Where tuning choices are looked up first and recorded (keyed by the
  /// first candidate's family, `device_name` and the problem's sizes).
  runtime::TuneCache* tune_cache = nullptr;
  std::string device_name;
  /// The other kernels a workload launches besides its own, by entry name,
  /// of the same target (flash_decoding's combine); runners look them up in
  /// the same bundle or build. Unset: a workload that needs one fails,
  /// naming it.
  std::function<absl::StatusOr<const runtime::LoadedKernel*>(const std::string& entry)> companion;
};

/// A kernel entry and a problem size with its check.
struct Workload {
  /// e.g. "vector_add/n=268435453".
  std::string name;
  /// The kernel entry it runs, e.g. "vector_add".
  std::string kernel;
  /// Part of the conformance suite (small sizes, odd tails).
  bool conformance = false;
  /// Part of the benchmarks (large sizes).
  bool benchmark = false;
  std::function<absl::StatusOr<Report>(const runtime::LoadedKernel&, const RunOptions&)> run;
};

/// The companions a runner gives its workloads (RunOptions::companion):
/// among `specs`, the kernel of an entry and target, loaded on first use
/// and kept (the specs outlive this object).
class CompanionKernels {
 public:
  explicit CompanionKernels(std::vector<const runtime::CompiledKernel*> specs)
      : specs_(std::move(specs)) {}
  /// The lookup for the workloads of a kernel of `target`.
  std::function<absl::StatusOr<const runtime::LoadedKernel*>(const std::string& entry)> For(
      const std::string& target);

 private:
  std::vector<const runtime::CompiledKernel*> specs_;
  // std::map: a loaded kernel's address stays valid as others are added.
  std::map<std::pair<std::string, std::string>, runtime::LoadedKernel> loaded_;
};

/// Every workload of every example kernel.
const std::vector<Workload>& AllWorkloads();

/// The workloads that run `kernel` (an entry name; a tuning variant named
/// "<kernel>__<knobs>" runs the workloads of <kernel>).
std::vector<const Workload*> WorkloadsForKernel(const std::string& kernel);

/// A benchmark of a plain GEMM entry (gemm_f16, gemm_bf16, fp8_gemm,
/// gemm_i8, gemm_tf32, or a tuning variant of one) at m x n x k, as the
/// built-in shapes run; nullopt for other kernels or a size below 1.
std::optional<Workload> GemmBenchmarkAt(const std::string& kernel, int64_t m, int64_t n,
                                        int64_t k);

/// A Report as one table row.
std::string FormatReport(const Report& report);

}  // namespace tessera::workloads

#endif  // TESSERA_EXAMPLES_WORKLOADS_WORKLOADS_H_
