//===- driver.h - Compile examples, print tables, run workloads -*- C++ -*-===//
//
// This file declares the pieces the example binaries and the all-examples
// table share: compiling one example for one target with the figures the
// table prints, and running a compiled kernel's workloads on the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_COMMON_DRIVER_H_
#define TESSERA_EXAMPLES_COMMON_DRIVER_H_

#include <string>

#include "absl/status/statusor.h"
#include "examples/common/example.h"
#include "runtime/device.h"
#include "runtime/kernel.pb.h"

namespace tessera::examples {

/// One example compiled for one target.
struct CompileSummary {
  std::string example;
  std::string target;
  runtime::CompiledKernel kernel;
  /// "yes", or why no cubin was assembled (no ptxas for the target).
  std::string assembled;
};

/// Compiles `kernel` for `target`: PTX in process, plus a cubin with
/// registers and spills where a ptxas for the target is installed.
absl::StatusOr<CompileSummary> CompileExample(const Example& example, const Kernel& kernel,
                                              const std::string& target);

std::string FormatSummaryHeader();
std::string FormatSummary(const CompileSummary& summary);

/// The target to build for a device: sm_90a on 9.0, else sm_XY.
std::string TargetForDevice(const runtime::Device& device);

/// Loads `kernel` on the current device and runs its workloads ("all",
/// "conformance" or "benchmark"), timing benchmarks when `time`; the
/// kernels of `others` of the same target are the workloads' companions
/// (RunOptions::companion), loaded when asked for. Prints one row per
/// workload; returns false if any failed.
bool RunWorkloads(const runtime::CompiledKernel& kernel, const std::string& which, bool time,
                  const std::vector<const runtime::CompiledKernel*>& others = {});

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_COMMON_DRIVER_H_
