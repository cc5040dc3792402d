//===- autotune.h - Picking the fastest of like kernels ------*- C++ -*-===//
//
// This file declares the autotuner's runtime half: Autotune times kernels
// that take the same arguments (one kernel written with different tiles,
// stages or schedules, compiled ahead into a bundle) on the caller's own
// arguments and picks the fastest; TuneCache remembers the choice per
// problem size and device in a text file; SelectTuned asks the cache first
// and tunes on a miss. The compiler side is any set of entries named
// "<family>__<knobs>" (benchmarks/variants.cc compiles the GEMM's).
//
// Tuning launches every candidate several times on the given arguments, so
// the kernels must write their outputs without reading them (a GEMM that
// accumulates into C in place would accumulate the trials too).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_AUTOTUNE_H_
#define TESSERA_RUNTIME_AUTOTUNE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/timer.h"

namespace tessera::runtime {

/// One candidate's outcome: its time, or why it did not run (it takes other
/// arguments, needs more shared memory than this device has...).
struct TuneTrial {
  std::string entry;
  absl::Status status;
  std::optional<TimingResult> timing;
  /// Timed again in Autotune's final among the closest candidates: `timing`
  /// holds the final's runs alone.
  bool final_round = false;
};

/// Every trial in candidate order, and which one was fastest.
struct TuneResult {
  std::vector<TuneTrial> trials;
  /// Index into `trials` of the smallest median time.
  int best = -1;

  /// One line, fastest first: the final's candidates, then after " | " the
  /// others by their first-pass times, then the ones that did not run:
  /// "gemm_f16__grid 0.512 ms, gemm_f16 0.530 ms (+3.5%) | gemm_f16__mc
  /// 0.561 ms (+9.6%), gemm_f16__x: INVALID_ARGUMENT: ...".
  std::string Summary() const;
};

/// The timing of one round of a tuning trial by default: fewer runs than a
/// benchmark (the winner is timed again by whoever reports it).
TimingOptions DefaultTuneTiming();

/// Times each candidate on `args` with TimeIt, in `rounds` rounds that each
/// time every candidate in turn, round r starting r/rounds of the way into
/// the list (so a drift of the clocks while tuning moves all of them alike),
/// and ranks them by the median over each candidate's runs of all rounds.
/// Then a final: the fastest, the others within 3% of it (four at most)
/// and the first candidate (the family's own kernel) are timed again in
/// `rounds` rounds among themselves, and the smallest median of those runs
/// wins. A candidate that cannot be prepared or launched is recorded with
/// its status and passed over. Errors:
/// InvalidArgument without candidates or with rounds < 1;
/// FailedPrecondition when none of them runs, with the status of each; and
/// the driver's error, naming the candidate, when one faults (the context is
/// unusable after that).
absl::StatusOr<TuneResult> Autotune(absl::Span<const LoadedKernel* const> candidates,
                                    absl::Span<const KernelArg> args,
                                    const TimingOptions& options = DefaultTuneTiming(),
                                    int rounds = 3);

/// The problem's sizes in a tuning key for a launch of `spec` checked and
/// packed as `packed` from `args`: one per dynamic dimension (a group's
/// first), then the size arguments the grid reads.
std::vector<int64_t> TuneSizes(const CompiledKernel& spec, const PackedLaunch& packed,
                               absl::Span<const KernelArg> args);

/// The key of a tuning choice: the family, the kernels' target, the device's
/// name and the problem's sizes, e.g.
/// "gemm_f16|sm_90a|NVIDIA H200|2048,2048,2048".
std::string TuneKey(absl::string_view family, absl::string_view target,
                    absl::string_view device, absl::Span<const int64_t> sizes);

/// The family of an entry: the name before "__" ("gemm_f16__grid" ->
/// "gemm_f16").
std::string TuneFamily(absl::string_view entry);

/// 16 hex digits that change with the candidates' entries and code (PTX and
/// cubin): part of SelectTuned's key, so a choice made among other or older
/// kernels is not reused.
std::string CodeFingerprint(absl::Span<const LoadedKernel* const> candidates);

/// Remembered choices, key -> entry. On disk: one "key<TAB>entry" line per
/// choice, sorted; lines starting with '#' are comments.
class TuneCache {
 public:
  /// Reads `path`; a missing file is an empty cache. A malformed line is
  /// InvalidArgument naming the file and the line number.
  static absl::StatusOr<TuneCache> Load(absl::string_view path);
  /// Writes every choice to `path`, replacing the file.
  absl::Status Save(absl::string_view path) const;

  std::optional<std::string> Lookup(absl::string_view key) const;
  /// InvalidArgument for an empty key or entry, or one with a tab or a line
  /// break (the file could not be read back).
  absl::Status Insert(absl::string_view key, absl::string_view entry);
  size_t size() const { return choices_.size(); }

 private:
  std::map<std::string, std::string, std::less<>> choices_;
};

/// The candidate to launch for `args`: the one the cache names for this key
/// (family and target of the first candidate that takes `args`, `device`,
/// the dynamic dimensions of `args`, one per dimension group, and the
/// candidates' CodeFingerprint) when it is among the candidates, else
/// Autotune's fastest, which is then recorded in `cache`. `result`, when
/// given, receives the trials (empty on a cache hit).
absl::StatusOr<const LoadedKernel*> SelectTuned(
    absl::Span<const LoadedKernel* const> candidates, absl::Span<const KernelArg> args,
    absl::string_view device, TuneCache& cache,
    const TimingOptions& options = DefaultTuneTiming(), TuneResult* result = nullptr);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_AUTOTUNE_H_
