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

#include <functional>
#include <string>
#include <vector>

#include "frontend/Tessera.h"

namespace tessera::examples {

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
