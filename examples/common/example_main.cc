//===- example_main.cc - The main function of every example ---------------===//
//
// This file implements ExampleMain and the kernels x targets table: compile
// (PTX in process, a cubin through ptxas where one is installed, for
// registers), print a stage, write a bundle, and where a GPU is present run,
// check and time the kernel's workloads.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "driver/Compiler.h"
#include "examples/common/driver.h"
#include "examples/common/example.h"
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

/// Parses `--name=value` or a bare `--name` for one of `example`'s knobs.
bool ParseKnob(const char* arg, const Example& example, KnobValues& knobs) {
  if (std::strncmp(arg, "--", 2) != 0) return false;
  std::string text = arg + 2;
  size_t equals = text.find('=');
  std::string name = text.substr(0, equals);
  for (const Knob& knob : example.knobs) {
    if (knob.name != name) continue;
    knobs.Set(name, equals == std::string::npos ? "true" : text.substr(equals + 1));
    return true;
  }
  return false;
}

std::string KnobHelp(const Example& example) {
  std::string help;
  for (const Knob& knob : example.knobs)
    help += absl::StrFormat("  --%-10s %s\n", knob.name + "=", knob.help);
  return help.empty()
             ? ""
             : "Knobs of this example (default: the target's tuned configuration):\n" + help;
}

}  // namespace

int64_t KnobValues::Int(const std::string& name, int64_t fallback) {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(it->second, &value) || value <= 0) {
    if (error_.empty())
      error_ = absl::StrFormat("--%s=%s: expects a positive integer", name, it->second);
    return fallback;
  }
  return value;
}

bool KnobValues::Bool(const std::string& name, bool fallback) {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  if (error_.empty()) error_ = absl::StrFormat("--%s=%s: expects true or false", name, it->second);
  return fallback;
}

DType KnobValues::Float16(const std::string& name, DType fallback) {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (it->second == "f16") return f16;
  if (it->second == "bf16") return bf16;
  if (error_.empty()) error_ = absl::StrFormat("--%s=%s: expects f16 or bf16", name, it->second);
  return fallback;
}

int ExampleMain(int argc, char** argv, const Example& example) {
  std::string target, emit, bundle, workloadFilter = "all";
  bool remarks = false;
  KnobValues knobs;
  for (int i = 1; i < argc; ++i) {
    if (ParseFlag(argv[i], "--target", &target) || ParseFlag(argv[i], "--emit", &emit) ||
        ParseFlag(argv[i], "--bundle", &bundle) ||
        ParseFlag(argv[i], "--workloads", &workloadFilter) || ParseKnob(argv[i], example, knobs))
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
          "stderr why an atom, strategy or schedule was not used.\n%s",
          argv[0], KnobHelp(example).c_str());
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

  Kernel kernel = knobs.empty() ? example.build(target) : example.configure(target, knobs);
  if (!knobs.error().empty()) return Fail(absl::StrFormat("%s: %s", example.name, knobs.error()));
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
    // The knobs configure the companions too (the backward's D and dQ
    // kernels follow its dtype and head dimension).
    Kernel built = knobs.empty() || !companion.configure ? companion.build(target)
                                                         : companion.configure(target, knobs);
    absl::StatusOr<CompileSummary> other = CompileExample(companion, built, target);
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
