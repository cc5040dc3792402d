//===- device_runner.cc - Run kernel bundles on a GPU, no compiler --------===//
//
// The GPU-side half of the benchmark and conformance runs: it loads kernel
// bundles written by //examples:all_examples (one per target), runs every
// workload of every kernel, checks it against the CPU reference and times
// the benchmarks. It links only the runtime (no LLVM, no MLIR), so a
// statically linked build travels to a GPU machine that has no compiler.
//
//   device_runner [--workloads=all|conformance|benchmark] [--kernels=A,B] [--csv=FILE] B.pb...
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "examples/workloads/workloads.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

int main(int argc, char** argv) {
  using namespace tessera;
  std::string which = "all", csvPath;
  // --kernels=a,b: only these kernel entries (default: every kernel).
  std::vector<std::string> only;
  std::vector<std::string> bundles;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--workloads=", 12) == 0)
      which = argv[i] + 12;
    else if (std::strncmp(argv[i], "--csv=", 6) == 0)
      csvPath = argv[i] + 6;
    else if (std::strncmp(argv[i], "--kernels=", 10) == 0)
      only = absl::StrSplit(argv[i] + 10, ',', absl::SkipEmpty());
    else if (argv[i][0] == '-') {
      std::fprintf(stderr, "device_runner: unknown flag '%s'\n", argv[i]);
      return 2;
    } else
      bundles.push_back(argv[i]);
  }
  if (bundles.empty()) {
    std::fprintf(stderr, "device_runner: no bundle given (usage: device_runner [--workloads=all|"
                         "conformance|benchmark] [--kernels=A,B] [--csv=FILE] BUNDLE.pb...)\n");
    return 2;
  }
  absl::StatusOr<runtime::Device> device = runtime::Device::Open(0);
  if (!device.ok()) {
    std::fprintf(stderr, "device_runner: %s\n", std::string(device.status().message()).c_str());
    return 1;
  }
  std::printf("device: %s\n", device->Describe().c_str());
  std::ofstream csv;
  if (!csvPath.empty()) {
    csv.open(csvPath);
    csv << "target,workload,correct,max_error,median_ms,min_ms,tb_per_s,registers\n";
  }
  int failures = 0, passes = 0;
  for (const std::string& path : bundles) {
    absl::StatusOr<runtime::KernelBundle> bundle = runtime::ReadBundle(path);
    if (!bundle.ok()) {
      std::fprintf(stderr, "device_runner: %s\n", std::string(bundle.status().message()).c_str());
      return 1;
    }
    for (const runtime::CompiledKernel& spec : bundle->kernels()) {
      if (!only.empty() && std::find(only.begin(), only.end(), spec.entry()) == only.end())
        continue;
      absl::StatusOr<runtime::LoadedKernel> kernel = runtime::LoadedKernel::Load(spec);
      if (!kernel.ok()) {
        std::printf("%-8s %-34s FAIL load: %s\n", spec.target().c_str(), spec.entry().c_str(),
                    std::string(kernel.status().message()).c_str());
        ++failures;
        continue;
      }
      int ran = 0;
      for (const workloads::Workload* w : workloads::WorkloadsForKernel(spec.entry())) {
        if ((which == "conformance" && !w->conformance) ||
            (which == "benchmark" && !w->benchmark))
          continue;
        ++ran;
        workloads::RunOptions options;
        options.time = w->benchmark;
        absl::StatusOr<workloads::Report> report = w->run(*kernel, options);
        if (!report.ok()) {
          std::printf("%-8s %-34s FAIL %s\n", spec.target().c_str(), w->name.c_str(),
                      std::string(report.status().message()).c_str());
          ++failures;
          continue;
        }
        // Name tuning variants ("vector_add__b1024_t128/n=...") in the row.
        if (spec.entry() != w->kernel)
          report->workload = spec.entry() + w->name.substr(w->kernel.size());
        std::printf("%s  regs %d\n", workloads::FormatReport(*report).c_str(),
                    kernel->registers());
        std::fflush(stdout);
        (report->correct ? passes : failures)++;
        if (csv.is_open())
          csv << absl::StrFormat("%s,%s,%d,%g,%g,%g,%g,%d\n", report->target, report->workload,
                                 report->correct, report->max_error,
                                 report->timing ? report->timing->median_ms : 0,
                                 report->timing ? report->timing->min_ms : 0,
                                 report->TerabytesPerSecond(), kernel->registers());
      }
      // A kernel this runner has no workload for (a runner older than the
      // bundle) says so rather than passing silently.
      if (ran == 0)
        std::printf("%-8s %-34s no workload (--workloads=%s) in this runner\n",
                    spec.target().c_str(), spec.entry().c_str(), which.c_str());
    }
  }
  std::printf("%d passed, %d failed\n", passes, failures);
  return failures == 0 ? 0 : 1;
}
