//===- timer.h - Timing launches with CUDA events ---------------*- C++ -*-===//
//
// This file declares TimeIt, which times a launch function with CUDA events:
// warm-up runs, then timed runs each preceded (outside the timed region) by a
// write of twice the L2 size so that every run starts with a cold L2, and
// reports the median, minimum and maximum.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_TIMER_H_
#define TESSERA_RUNTIME_TIMER_H_

#include <cuda.h>

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::runtime {

/// How TimeIt runs the launch function.
struct TimingOptions {
  /// Untimed runs before the timed ones.
  int warmup = 5;
  /// Timed runs; at least 1.
  int iterations = 50;
  /// Write 2x the L2 size before each run so no run finds its data in L2.
  bool flush_l2 = true;
  /// The stream the launch function enqueues on; events and the flush use it.
  CUstream stream = nullptr;
  /// Wait for each timed run before enqueuing the next one, so the GPU idles
  /// between runs (as timing loops that synchronize every run do, e.g.
  /// benchmarks/peers.py --sync-each-run). By default the runs, each behind
  /// its flush, are enqueued back to back, as triton.testing.do_bench does;
  /// short kernels time 2-3% faster with the idle gaps on an H200, so
  /// compare figures taken the same way.
  bool sync_each_run = false;
};

/// Times of the timed runs, in milliseconds.
struct TimingResult {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  /// Every timed run, in run order.
  std::vector<double> samples_ms;
};

/// Runs `launch` options.warmup times, then options.iterations times between
/// two events each, in the current context. `launch` must enqueue its work on
/// options.stream and return without synchronizing.
absl::StatusOr<TimingResult> TimeIt(std::function<absl::Status()> launch,
                                    const TimingOptions& options = {});

/// Median, minimum and maximum of `samples_ms` (kept in run order); all zero
/// when there are none.
TimingResult SummarizeTimes(std::vector<double> samples_ms);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_TIMER_H_
