//===- bundle_fuzzer.cc - Fuzzes reading kernel files ---------------------===//
//
// This file implements a libFuzzer target for kernel files (runtime/bundle.h).
// The first byte picks what the rest is: the bytes of a whole file, given to
// ParseBundle and ParseCompiledKernel as they are (damage must be refused),
// or a payload wrapped here in a correct header and checksum, so that the
// search reaches the protobuf parser and the validation instead of stopping
// at the checksum. A kernel that passes validation is then used as the
// runtime uses it: its signature printed, its grid evaluated.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/bundle.h"
#include "runtime/launch.h"

namespace {

using ::tessera::runtime::CompiledKernel;

/// `payload` behind a well-formed header of `kind` (1 bundle, 2 kernel).
std::string Wrap(absl::string_view payload, uint32_t kind) {
  std::string out("\x89TESSERA", 8);
  auto append = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
  };
  append(tessera::runtime::kKernelFileFormatVersion, 4);
  append(kind, 4);
  append(payload.size(), 8);
  append(tessera::runtime::Fnv1a64(payload), 8);
  out.append(payload.data(), payload.size());
  return out;
}

/// What the runtime does with a loaded kernel before any CUDA call.
void Use(const CompiledKernel& kernel) {
  (void)tessera::runtime::FormatSignature(kernel);
  int64_t dynamic_dims = 0;
  for (const auto& param : kernel.params())
    for (int64_t dim : param.shape()) dynamic_dims += dim == -1;
  for (int64_t value : {int64_t(1), int64_t(1000), int64_t(1) << 40}) {
    std::vector<int64_t> dims(dynamic_dims, value);
    for (const auto& extent : kernel.grid())
      (void)tessera::runtime::EvaluateExpr(extent, dims);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  absl::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string bytes(rest);
  if (mode % 3 == 1) bytes = Wrap(rest, 1);
  if (mode % 3 == 2) bytes = Wrap(rest, 2);
  if (auto bundle = tessera::runtime::ParseBundle(bytes, "fuzz.pb"); bundle.ok()) {
    for (const CompiledKernel& kernel : bundle->kernels()) Use(kernel);
    (void)tessera::runtime::FindKernel(*bundle, "gemm");
  }
  if (auto kernel = tessera::runtime::ParseCompiledKernel(bytes, "fuzz.pb"); kernel.ok())
    Use(*kernel);
  return 0;
}
