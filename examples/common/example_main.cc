//===- example_main.cc - The main function of every example ---------------===//
//
// This file implements ExampleMain and the kernels x targets table: compile
// (PTX in process, a cubin through ptxas where one is installed, for
// registers), print a stage, write a bundle, and where a GPU is present run,
// check and time the kernel's workloads.
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/str_format.h"
#include "driver/Compiler.h"
#include "examples/common/driver.h"
#include "examples/workloads/workloads.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/kernel.pb.h"

namespace tessera::examples {
namespace {

std::map<std::string, Stage> StageNames() {
  return {{"tile", Stage::kTile},   {"gpu", Stage::kGpu}, {"lowered", Stage::kLowered},
          {"llvm", Stage::kLLVM},   {"ptx", Stage::kPTX}, {"cubin", Stage::kCubin}};
}

bool ParseFlag(const char* arg, const char* name, std::string* value) {
  size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0 || arg[len] != '=') return false;
  *value = arg + len + 1;
  return true;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

}  // namespace

int ExampleMain(int argc, char** argv, const Example& example) {
  std::string target, emit, bundle, workloadFilter = "all";
  bool remarks = false;
  for (int i = 1; i < argc; ++i) {
    if (ParseFlag(argv[i], "--target", &target) || ParseFlag(argv[i], "--emit", &emit) ||
        ParseFlag(argv[i], "--bundle", &bundle) ||
        ParseFlag(argv[i], "--workloads", &workloadFilter))
      continue;
    if (std::strcmp(argv[i], "--remarks") == 0) {
      remarks = true;
      continue;
    }
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf(
          "usage: %s [--target=sm_60|sm_70|sm_80|sm_90a] "
          "[--emit=tile|gpu|lowered|llvm|ptx|cubin] [--bundle=FILE] "
          "[--workloads=all|conformance|benchmark] [--remarks]\n"
          "Without --emit: compiles the kernel and, where a GPU is present, runs, checks\n"
          "and times it (target defaults to the GPU's, else sm_90a). --remarks prints to\n"
          "stderr why an atom, strategy or schedule was not used.\n",
          argv[0]);
      return 0;
    }
    return Fail(absl::StrFormat("%s: unknown argument '%s' (see --help)", example.name, argv[i]));
  }
  if (workloadFilter != "all" && workloadFilter != "conformance" && workloadFilter != "benchmark")
    return Fail(absl::StrFormat("%s: unknown --workloads=%s (expected all|conformance|benchmark)",
                                example.name, workloadFilter));
  if (!emit.empty() && !bundle.empty())
    return Fail(absl::StrFormat("%s: --bundle writes the compiled kernel of a run without --emit; "
                                "use one or the other",
                                example.name));
  // Pick the target: the flag, else the GPU's, else sm_90a.
  absl::StatusOr<runtime::Device> device = runtime::Device::Open(0);
  if (target.empty()) target = device.ok() ? TargetForDevice(*device) : "sm_90a";

  Kernel kernel = example.build(target);
  if (!kernel.status().ok())
    return Fail(absl::StrFormat("%s: %s", example.name, kernel.status().message()));
  if (remarks) {
    CompileOptions options;
    options.target = target;
    absl::StatusOr<std::vector<std::string>> lines = kernel.GetRemarks(options);
    if (!lines.ok()) return Fail(absl::StrFormat("%s: %s", example.name, lines.status().message()));
    for (const std::string& line : *lines) std::fprintf(stderr, "%s\n", line.c_str());
  }

  if (!emit.empty()) {
    auto stages = StageNames();
    auto it = stages.find(emit);
    if (it == stages.end())
      return Fail(absl::StrFormat("%s: unknown --emit=%s (expected tile|gpu|lowered|llvm|ptx|cubin)",
                                  example.name, emit));
    if (it->second == Stage::kTile && target.empty()) {
      std::fputs(kernel.ToString().c_str(), stdout);
      return 0;
    }
    CompileOptions options;
    options.target = target;
    absl::StatusOr<std::string> text = kernel.GetKernelSource(it->second, options);
    if (!text.ok()) return Fail(absl::StrFormat("%s: %s", example.name, text.status().message()));
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }

  absl::StatusOr<CompileSummary> compiled = CompileExample(example, kernel, target);
  if (!compiled.ok())
    return Fail(absl::StrFormat("%s: %s", example.name, compiled.status().message()));
  std::printf("%s\n", FormatSummaryHeader().c_str());
  std::printf("%s\n", FormatSummary(*compiled).c_str());
  std::vector<CompileSummary> companions;
  for (const Example& companion : example.companions) {
    absl::StatusOr<CompileSummary> other =
        CompileExample(companion, companion.build(target), target);
    if (!other.ok())
      return Fail(absl::StrFormat("%s: %s", companion.name, other.status().message()));
    std::printf("%s\n", FormatSummary(*other).c_str());
    companions.push_back(*std::move(other));
  }
  std::vector<const runtime::CompiledKernel*> others;
  for (const CompileSummary& other : companions) others.push_back(&other.kernel);
  if (!bundle.empty()) {
    runtime::KernelBundle out;
    *out.add_kernels() = compiled->kernel;
    for (const CompileSummary& other : companions) *out.add_kernels() = other.kernel;
    if (absl::Status s = runtime::WriteBundle(out, bundle); !s.ok())
      return Fail(std::string(s.message()));
  }
  if (!device.ok()) {
    std::printf("no GPU here (%s): compiled only, nothing run.\n",
                std::string(device.status().message()).c_str());
    return 0;
  }
  std::printf("running on %s\n", device->Describe().c_str());
  bool ok = RunWorkloads(compiled->kernel, workloadFilter, /*time=*/true, others);
  return ok ? 0 : 1;
}

}  // namespace tessera::examples
