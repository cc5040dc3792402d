//===- example.h - What every example binary shares -------------*- C++ -*-===//
//
// This file declares the description of an example kernel and the main
// function every example binary uses: `--target=` and `--emit=` print a
// compilation stage; without --emit the kernel is compiled and, where a GPU
// is present, run, checked and timed on its workloads.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_COMMON_EXAMPLE_H_
#define TESSERA_EXAMPLES_COMMON_EXAMPLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// The values of an example's knobs given on its command line
/// (`--bm=64 --dtype=bf16 --causal`): typed getters that fall back to the
/// default when a knob is absent and record the first malformed value.
class KnobValues {
 public:
  /// Records `--name=value` (a bare `--name` is "true").
  void Set(const std::string& name, const std::string& value) { values_[name] = value; }
  bool empty() const { return values_.empty(); }
  /// A positive integer (tile extents, stages, threads).
  int64_t Int(const std::string& name, int64_t fallback);
  /// true, false, 1 or 0.
  bool Bool(const std::string& name, bool fallback);
  /// f16 or bf16.
  DType Float16(const std::string& name, DType fallback);
  /// The first malformed value ("--bm=abc: expects a positive integer"), or "".
  const std::string& error() const { return error_; }

 private:
  std::map<std::string, std::string> values_;
  std::string error_;
};

/// Applies the knobs the tiled examples share, --bm, --bn, --stages and
/// --threads, to a configuration with members of those names (GemmConfig,
/// FlashAttentionConfig, FlashAttentionBwdConfig); an absent knob keeps the
/// configuration's value.
template <typename Config>
void ApplyTileKnobs(KnobValues& knobs, Config& c) {
  c.bm = knobs.Int("bm", c.bm);
  c.bn = knobs.Int("bn", c.bn);
  c.stages = static_cast<int>(knobs.Int("stages", c.stages));
  c.threads = static_cast<int>(knobs.Int("threads", c.threads));
}

/// A command-line knob of an example: `--name=value`.
struct Knob {
  std::string name;
  std::string help;
};

/// An example kernel in its default configuration.
struct Example {
  /// The kernel's entry name, which the workloads run.
  std::string name;
  /// Builds the kernel in its default configuration for a target ("sm_90a"):
  /// tile sizes and threads are the author's choice per target, like any
  /// tuning knob; the kernel's code is the same everywhere.
  std::function<Kernel(const std::string& target)> build;
  /// Kernels its workloads launch besides it (flash_decoding's combine),
  /// compiled with it by its binary; the catalog lists them as examples too.
  std::vector<Example> companions = {};
  /// Knobs a user may set on the example binary's command line, and the
  /// build that reads them (the default configuration where none is set).
  /// A knob that changes the kernel's interface (its dtype, head dimension)
  /// changes its entry name to the one whose workloads fit. Companions with
  /// a `configure` get the same knobs.
  std::vector<Knob> knobs = {};
  std::function<Kernel(const std::string& target, KnobValues& knobs)> configure = nullptr;
};

/// The targets every example is built for.
const std::vector<std::string>& AllTargets();

/// Every example, for the kernels x targets table and the conformance suite.
const std::vector<Example>& AllExamples();

/// main() of an example binary.
int ExampleMain(int argc, char** argv, const Example& example);

}  // namespace tessera::examples

/// Defines main() for an example unless the file is compiled into the
/// catalog library (TESSERA_NO_EXAMPLE_MAIN).
#ifdef TESSERA_NO_EXAMPLE_MAIN
#define TESSERA_EXAMPLE_MAIN(example)
#else
#define TESSERA_EXAMPLE_MAIN(example)                                   \
  int main(int argc, char** argv) {                                     \
    return ::tessera::examples::ExampleMain(argc, argv, (example));     \
  }
#endif

#endif  // TESSERA_EXAMPLES_COMMON_EXAMPLE_H_
