//===- compile_bundle.cc - Compile the project's kernel into a bundle -----===//
//
// Usage: compile_bundle OUT.tbundle
// Compiles ScaledAdd (n dynamic) for sm_80 and sm_90a with Tessera's
// compiler, in process, and writes both into one bundle that a runtime-only
// program (run_bundle) loads without the compiler.
//
//===----------------------------------------------------------------------===//

#include <cstdio>

#include "kernels/scaled_add.h"
#include "runtime/bundle.h"
#include "runtime/kernel.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: compile_bundle OUT.tbundle\n");
    return 2;
  }
  tessera::Kernel kernel = embedding::ScaledAdd(tessera::Dim::Dynamic("n"));
  tessera::runtime::KernelBundle bundle;
  for (const char* target : {"sm_80", "sm_90a"}) {
    tessera::CompileOptions options;
    options.target = target;
    absl::StatusOr<tessera::runtime::CompiledKernel> compiled = kernel.Compile(options);
    if (!compiled.ok()) {
      std::fprintf(stderr, "compile_bundle: %s: %s\n", target,
                   compiled.status().ToString().c_str());
      return 1;
    }
    std::printf("%s: %zu bytes of PTX, compiled in %.1f ms\n", target, compiled->ptx().size(),
                compiled->compile_micros() / 1000.0);
    *bundle.add_kernels() = *std::move(compiled);
  }
  if (absl::Status written = tessera::runtime::WriteBundle(bundle, argv[1]); !written.ok()) {
    std::fprintf(stderr, "compile_bundle: %s\n", written.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s\n", argv[1]);
  return 0;
}
