//===- write_bundles.cc - Conformance cases as kernel bundles -------------===//
//
// Compiles every shared case for every target named (default: every built-in
// one) not skipped by its backend
// and writes DIR/<target>.conformance.pb, so that the runtime-only
// device_runner can run the conformance suite on a GPU machine that has no
// compiler (benchmarks/device/prepare.sh).
//
//   write_bundles DIR
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/Backend.h"
#include "examples/common/example.h"
#include "runtime/bundle.h"
#include "runtime/kernel.pb.h"
#include "tests/conformance/cases.h"

int main(int argc, char** argv) {
  using namespace tessera;
  if (argc < 2) {
    std::fprintf(stderr, "usage: write_bundles DIR [TARGET...]\n");
    return 2;
  }
  // The targets named, or every built-in one.
  std::vector<std::string> targets(argv + 2, argv + argc);
  if (targets.empty())
    targets = examples::AllTargets();
  for (const std::string& target : targets) {
    std::string error;
    const Backend* backend = BackendRegistry::global().lookup(target, error);
    if (!backend) {
      std::fprintf(stderr, "write_bundles: %s\n", error.c_str());
      return 1;
    }
    std::set<std::string> skipped;
    for (const ConformanceSkip& skip : backend->getConformanceSkips()) {
      std::printf("%s skips %s: %s\n", target.c_str(), skip.caseName.c_str(),
                  skip.reason.c_str());
      skipped.insert(skip.caseName);
    }
    runtime::KernelBundle bundle;
    for (const conformance::Case& c : conformance::AllCases()) {
      if (skipped.count(c.name)) continue;
      CompileOptions options;
      options.target = target;
      absl::StatusOr<runtime::CompiledKernel> compiled = c.build(target).Compile(options);
      if (!compiled.ok()) {
        std::fprintf(stderr, "write_bundles: %s for %s: %s\n", c.name.c_str(), target.c_str(),
                     std::string(compiled.status().message()).c_str());
        return 1;
      }
      *bundle.add_kernels() = std::move(*compiled);
    }
    std::string path = absl::StrCat(argv[1], "/", target, ".conformance.pb");
    if (absl::Status s = runtime::WriteBundle(bundle, path); !s.ok()) {
      std::fprintf(stderr, "write_bundles: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s: %d cases -> %s\n", target.c_str(), bundle.kernels_size(), path.c_str());
  }
  return 0;
}
