//===- driver.cc - Compile examples, print tables, run workloads ----------===//
//
// This file implements compiling an example for a target with the figures
// the tables print (PTX size, registers, spills, compile time) and running a
// compiled kernel's workloads.
//
//===----------------------------------------------------------------------===//

#include "examples/common/driver.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "driver/Compiler.h"
#include "examples/workloads/workloads.h"
#include "runtime/kernel.h"

namespace tessera::examples {

absl::StatusOr<CompileSummary> CompileExample(const Example& example, const Kernel& kernel,
                                              const std::string& target) {
  CompileSummary summary;
  summary.example = example.name;
  summary.target = target;
  CompileOptions options;
  options.target = target;
  options.assemble = !compiler::findPtxas(target).empty();
  summary.assembled = options.assemble ? "yes" : "no ptxas for " + target;
  absl::StatusOr<runtime::CompiledKernel> compiled = kernel.Compile(options);
  if (!compiled.ok()) return compiled.status();
  // A configured example (knobs) may be another kernel of its family.
  summary.example = compiled->entry();
  summary.kernel = std::move(*compiled);
  return summary;
}

std::string FormatSummaryHeader() {
  return absl::StrFormat("%-20s %-8s %10s %6s %8s %12s", "kernel", "target", "PTX bytes", "regs",
                         "spills", "compile ms");
}

std::string FormatSummary(const CompileSummary& s) {
  std::string regs = s.kernel.cubin().empty() ? "-" : absl::StrCat(s.kernel.registers());
  std::string spills = s.kernel.cubin().empty() ? "-" : absl::StrCat(s.kernel.spill_bytes());
  return absl::StrFormat("%-20s %-8s %10d %6s %8s %12.1f", s.example, s.target,
                         s.kernel.ptx().size(), regs, spills,
                         s.kernel.compile_micros() / 1000.0);
}

std::string TargetForDevice(const runtime::Device& device) {
  int major = device.compute_capability_major(), minor = device.compute_capability_minor();
  return absl::StrCat("sm_", major, minor, major == 9 && minor == 0 ? "a" : "");
}

bool RunWorkloads(const runtime::CompiledKernel& kernel, const std::string& which, bool time,
                  const std::vector<const runtime::CompiledKernel*>& others) {
  absl::StatusOr<runtime::LoadedKernel> loaded = runtime::LoadedKernel::Load(kernel);
  if (!loaded.ok()) {
    std::printf("%-8s %-34s FAIL load: %s\n", kernel.target().c_str(), kernel.entry().c_str(),
                std::string(loaded.status().message()).c_str());
    return false;
  }
  workloads::CompanionKernels companions(others);
  bool ok = true;
  for (const workloads::Workload* w : workloads::WorkloadsForKernel(kernel.entry())) {
    if ((which == "conformance" && !w->conformance) || (which == "benchmark" && !w->benchmark))
      continue;
    workloads::RunOptions options;
    options.time = time && w->benchmark;
    options.companion = companions.For(kernel.target());
    absl::StatusOr<workloads::Report> report = w->run(*loaded, options);
    if (!report.ok()) {
      std::printf("%-8s %-34s FAIL %s\n", kernel.target().c_str(), w->name.c_str(),
                  std::string(report.status().message()).c_str());
      ok = false;
      continue;
    }
    std::printf("%s\n", workloads::FormatReport(*report).c_str());
    ok &= report->correct;
  }
  return ok;
}

}  // namespace tessera::examples
