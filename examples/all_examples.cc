//===- all_examples.cc - Every example on every backend -------------------===//
//
// The main job: compiles every example for every target and prints a table
// of kernels x targets with PTX size, registers, spills and compile time.
// With --bundle-dir it writes one kernel bundle per target (what the GPU-side
// runner loads); where a GPU is present it also runs, checks and times every
// example built by every backend (sm_60/70/80 PTX through the driver's JIT).
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "examples/common/driver.h"
#include "examples/common/example.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.pb.h"

int main(int argc, char** argv) {
  using namespace tessera::examples;
  std::string bundleDir, workloads = "all";
  bool run = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--bundle-dir=", 13) == 0) {
      bundleDir = argv[i] + 13;
    } else if (std::strncmp(argv[i], "--workloads=", 12) == 0) {
      workloads = argv[i] + 12;
    } else if (std::strcmp(argv[i], "--no-run") == 0) {
      run = false;
    } else {
      std::fprintf(stderr,
                   "all_examples: unknown argument '%s' (flags: --bundle-dir=DIR "
                   "--workloads=all|conformance|benchmark --no-run)\n",
                   argv[i]);
      return 1;
    }
  }
  bool ok = true;
  std::vector<CompileSummary> compiled;
  std::printf("%s\n", FormatSummaryHeader().c_str());
  for (const std::string& target : AllTargets()) {
    tessera::runtime::KernelBundle bundle;
    for (const Example& example : AllExamples()) {
      tessera::Kernel kernel = example.build(target);
      absl::StatusOr<CompileSummary> summary = CompileExample(example, kernel, target);
      if (!summary.ok()) {
        std::printf("%-20s %-8s FAIL %s\n", example.name.c_str(), target.c_str(),
                    std::string(summary.status().message()).c_str());
        ok = false;
        continue;
      }
      std::printf("%s\n", FormatSummary(*summary).c_str());
      *bundle.add_kernels() = summary->kernel;
      compiled.push_back(std::move(*summary));
    }
    if (!bundleDir.empty()) {
      std::string path = absl::StrCat(bundleDir, "/", target, ".pb");
      if (absl::Status s = tessera::runtime::WriteBundle(bundle, path); !s.ok()) {
        std::fprintf(stderr, "all_examples: %s\n", std::string(s.message()).c_str());
        return 1;
      }
    }
  }
  if (!run) return ok ? 0 : 1;
  absl::StatusOr<tessera::runtime::Device> device = tessera::runtime::Device::Open(0);
  if (!device.ok()) {
    std::printf("\nno GPU here (%s): compiled only; running, checking and timing skipped.\n",
                std::string(device.status().message()).c_str());
    return ok ? 0 : 1;
  }
  std::printf("\nrunning on %s\n", device->Describe().c_str());
  std::vector<const tessera::runtime::CompiledKernel*> kernels;
  for (const CompileSummary& summary : compiled) kernels.push_back(&summary.kernel);
  for (const CompileSummary& summary : compiled)
    ok &= RunWorkloads(summary.kernel, workloads, /*time=*/true, kernels);
  return ok ? 0 : 1;
}
