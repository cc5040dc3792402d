//===- device_runner.cc - Run kernel bundles on a GPU, no compiler --------===//
//
// The GPU-side half of the benchmark and conformance runs: it loads kernel
// bundles written by //examples:all_examples (one per target), runs every
// workload of every kernel, checks it against the CPU reference and times
// the benchmarks. It links only the runtime (no LLVM, no MLIR), so a
// statically linked build travels to a GPU machine that has no compiler.
//
//   device_runner [--workloads=all|conformance|benchmark] [--kernels=A,B] [--csv=FILE]
//                 [--gemm-shapes=MxNxK,...] [--autotune [--tune-cache=FILE]] B.pb...
//
// --gemm-shapes benchmarks the plain GEMM kernels at the given shapes instead
// of the (other kernels keep their workloads).
// --autotune runs each kernel family once instead of each entry: a kernel
// "<k>" with variants "<k>__<knobs>" of the same target in any given bundle
// is tuned over all of them on every workload (runtime::Autotune), and the
// fastest is checked and timed; the row names the winner and the trials
// follow it. --tune-cache reads earlier choices from FILE (a choice found
// there is not tuned again) and writes every choice back.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "examples/workloads/workloads.h"
#include "runtime/autotune.h"
#include "runtime/bundle.h"
#include "runtime/device.h"
#include "runtime/kernel.h"

int main(int argc, char** argv) {
  using namespace tessera;
  std::string which = "all", csvPath, cachePath;
  bool autotune = false;
  // --time-wrong: time benchmark runs whose result is wrong too (they still
  // report FAIL), for ceiling experiments on hand-edited PTX.
  bool timeWrong = false;
  // --sync-each-run: wait for each timed run before the next (TimingOptions::
  // sync_each_run), to compare with peers timed that way.
  bool syncEachRun = false;
  // --inputs=torch: GEMM inputs drawn as torch.rand in the 16-bit type
  // (RunOptions::torch_inputs), as peers.py --inputs=torch draws cuBLAS's.
  bool torchInputs = false;
  // --kernels=a,b: only these kernel entries (default: every kernel).
  // --workload-filter=a,b: only workloads whose name contains a or b.
  std::vector<std::string> only;
  std::vector<std::string> workloadFilter;
  // --gemm-shapes=MxNxK,...: the plain GEMM kernels (gemm_f16, gemm_bf16 and
  // their variants) benchmarked at these shapes instead of the built-in ones.
  std::vector<std::array<int64_t, 3>> gemmShapes;
  std::vector<std::string> bundles;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--workloads=", 12) == 0)
      which = argv[i] + 12;
    else if (std::strncmp(argv[i], "--csv=", 6) == 0)
      csvPath = argv[i] + 6;
    else if (std::strcmp(argv[i], "--autotune") == 0)
      autotune = true;
    else if (std::strcmp(argv[i], "--time-wrong") == 0)
      timeWrong = true;
    else if (std::strcmp(argv[i], "--sync-each-run") == 0)
      syncEachRun = true;
    else if (std::strcmp(argv[i], "--inputs=torch") == 0)
      torchInputs = true;
    else if (std::strncmp(argv[i], "--tune-cache=", 13) == 0)
      cachePath = argv[i] + 13;
    else if (std::strncmp(argv[i], "--kernels=", 10) == 0)
      only = absl::StrSplit(argv[i] + 10, ',', absl::SkipEmpty());
    else if (std::strncmp(argv[i], "--workload-filter=", 18) == 0)
      workloadFilter = absl::StrSplit(argv[i] + 18, ',', absl::SkipEmpty());
    else if (std::strncmp(argv[i], "--gemm-shapes=", 14) == 0) {
      for (absl::string_view shape : absl::StrSplit(argv[i] + 14, ',', absl::SkipEmpty())) {
        std::vector<absl::string_view> dims = absl::StrSplit(shape, 'x');
        std::array<int64_t, 3> mnk{};
        bool ok = dims.size() == 3;
        for (size_t d = 0; ok && d < 3; ++d)
          ok = absl::SimpleAtoi(dims[d], &mnk[d]) && mnk[d] >= 1 && mnk[d] <= (1 << 20);
        if (!ok) {
          std::fprintf(stderr, "device_runner: --gemm-shapes: '%s' is not MxNxK (each 1 to 2^20)\n",
                       std::string(shape).c_str());
          return 2;
        }
        gemmShapes.push_back(mnk);
      }
    }
    else if (argv[i][0] == '-') {
      std::fprintf(stderr, "device_runner: unknown flag '%s'\n", argv[i]);
      return 2;
    } else
      bundles.push_back(argv[i]);
  }
  if (!cachePath.empty() && !autotune) {
    std::fprintf(stderr, "device_runner: --tune-cache goes with --autotune\n");
    return 2;
  }
  if (bundles.empty()) {
    std::fprintf(stderr, "device_runner: no bundle given (usage: device_runner [--workloads=all|"
                         "conformance|benchmark] [--kernels=A,B] [--csv=FILE] [--time-wrong] "
                         "[--sync-each-run] [--inputs=torch] [--gemm-shapes=MxNxK,...] "
                         "[--autotune [--tune-cache=FILE]] "
                         "BUNDLE.pb...)\n");
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
    csv << "target,workload,correct,max_error,median_ms,min_ms,tb_per_s,registers,chosen\n";
  }
  std::vector<runtime::KernelBundle> read;
  for (const std::string& path : bundles) {
    absl::StatusOr<runtime::KernelBundle> bundle = runtime::ReadBundle(path);
    if (!bundle.ok()) {
      std::fprintf(stderr, "device_runner: %s\n", std::string(bundle.status().message()).c_str());
      return 1;
    }
    read.push_back(*std::move(bundle));
  }
  runtime::TuneCache cache;
  if (!cachePath.empty()) {
    absl::StatusOr<runtime::TuneCache> loaded = runtime::TuneCache::Load(cachePath);
    if (!loaded.ok()) {
      std::fprintf(stderr, "device_runner: %s\n", std::string(loaded.status().message()).c_str());
      return 1;
    }
    cache = *std::move(loaded);
  }
  // Kernels that workloads launch besides their own (flash_decoding's
  // combine), found by entry and target in the bundles.
  std::vector<const runtime::CompiledKernel*> specs;
  for (const runtime::KernelBundle& bundle : read)
    for (const runtime::CompiledKernel& spec : bundle.kernels()) specs.push_back(&spec);
  workloads::CompanionKernels companions(std::move(specs));
  int failures = 0, passes = 0;
  for (const runtime::KernelBundle& bundle : read) {
    for (const runtime::CompiledKernel& spec : bundle.kernels()) {
      if (!only.empty() && std::find(only.begin(), only.end(), spec.entry()) == only.end())
        continue;
      // Tuning: variants run as candidates of their family's kernel.
      if (autotune && runtime::TuneFamily(spec.entry()) != spec.entry()) continue;
      absl::StatusOr<runtime::LoadedKernel> kernel = runtime::LoadedKernel::Load(spec);
      if (!kernel.ok()) {
        std::printf("%-8s %-34s FAIL load: %s\n", spec.target().c_str(), spec.entry().c_str(),
                    std::string(kernel.status().message()).c_str());
        ++failures;
        continue;
      }
      // The family's variants of the same target, from every bundle; one
      // that does not load on this device is left out, and says so.
      std::vector<runtime::LoadedKernel> variants;
      std::vector<const runtime::LoadedKernel*> candidates;
      if (autotune) {
        candidates.push_back(&*kernel);
        std::vector<std::string> seen;  // a variant in two bundles runs once
        for (const runtime::KernelBundle& other : read)
          for (const runtime::CompiledKernel& v : other.kernels()) {
            if (v.target() != spec.target() || v.entry() == spec.entry() ||
                runtime::TuneFamily(v.entry()) != spec.entry() ||
                std::find(seen.begin(), seen.end(), v.entry()) != seen.end())
              continue;
            seen.push_back(v.entry());
            absl::StatusOr<runtime::LoadedKernel> loaded = runtime::LoadedKernel::Load(v);
            if (loaded.ok())
              variants.push_back(*std::move(loaded));
            else
              std::printf("%-8s %-34s not a candidate: %s\n", v.target().c_str(),
                          v.entry().c_str(), std::string(loaded.status().message()).c_str());
          }
        for (const runtime::LoadedKernel& v : variants) candidates.push_back(&v);
        if (candidates.size() == 1) candidates.clear();
      }
      int ran = 0;
      std::vector<const workloads::Workload*> planned = workloads::WorkloadsForKernel(spec.entry());
      std::vector<workloads::Workload> atShapes;
      for (const auto& [m, n, k] : gemmShapes)
        if (std::optional<workloads::Workload> w = workloads::GemmBenchmarkAt(spec.entry(), m, n, k))
          atShapes.push_back(*std::move(w));
      if (!atShapes.empty()) {
        planned.clear();
        for (const workloads::Workload& w : atShapes) planned.push_back(&w);
      }
      for (const workloads::Workload* w : planned) {
        if ((which == "conformance" && !w->conformance) ||
            (which == "benchmark" && !w->benchmark))
          continue;
        if (!workloadFilter.empty() &&
            std::none_of(workloadFilter.begin(), workloadFilter.end(),
                         [&](const std::string& part) {
                           return w->name.find(part) != std::string::npos;
                         }))
          continue;
        ++ran;
        workloads::RunOptions options;
        options.time = w->benchmark;
        options.time_wrong = timeWrong;
        options.timing.sync_each_run = syncEachRun;
        options.torch_inputs = torchInputs;
        options.tune_candidates = candidates;
        options.tune_cache = &cache;
        options.device_name = device->name();
        options.companion = companions.For(spec.target());
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
        const runtime::LoadedKernel* ran_kernel = &*kernel;
        for (const runtime::LoadedKernel* c : candidates)
          if (c->entry() == report->chosen) ran_kernel = c;
        std::printf("%s  regs %d", workloads::FormatReport(*report).c_str(),
                    ran_kernel->registers());
        // A persistent kernel's launched blocks (in clusters: the clusters
        // the device holds at once times their size).
        if (ran_kernel->persistent_blocks() > 0)
          std::printf("  blocks %lld", static_cast<long long>(ran_kernel->persistent_blocks()));
        std::printf("\n");
        if (!report->tuning.empty()) std::printf("    trials: %s\n", report->tuning.c_str());
        std::fflush(stdout);
        (report->correct ? passes : failures)++;
        if (csv.is_open())
          csv << absl::StrFormat("%s,%s,%d,%g,%g,%g,%g,%d,%s\n", report->target, report->workload,
                                 report->correct, report->max_error,
                                 report->timing ? report->timing->median_ms : 0,
                                 report->timing ? report->timing->min_ms : 0,
                                 report->TerabytesPerSecond(), ran_kernel->registers(),
                                 report->chosen.empty() ? spec.entry() : report->chosen);
      }
      // A kernel this runner has no workload for (a runner older than the
      // bundle) says so rather than passing silently.
      if (ran == 0)
        std::printf("%-8s %-34s no workload (--workloads=%s) in this runner\n",
                    spec.target().c_str(), spec.entry().c_str(), which.c_str());
    }
  }
  if (!cachePath.empty()) {
    if (absl::Status saved = cache.Save(cachePath); !saved.ok()) {
      std::fprintf(stderr, "device_runner: %s\n", std::string(saved.message()).c_str());
      return 1;
    }
    std::printf("tuning cache: %zu choices -> %s\n", cache.size(), cachePath.c_str());
  }
  // Nothing run is not a pass (with --autotune a variant runs only as a
  // candidate of its family's kernel, which must be among the bundles).
  if (passes + failures == 0) {
    std::fprintf(stderr, "device_runner: no workload ran%s\n",
                 autotune ? " (--autotune runs families: name their default kernels)" : "");
    return 1;
  }
  std::printf("%d passed, %d failed\n", passes, failures);
  return failures == 0 ? 0 : 1;
}
