//===- norms.h - The normalization examples' kernels, for reuse -*- C++ -*-===//
//
// Declares RMSNorm (examples/rmsnorm.cc) and LayerNorm
// (examples/layernorm.cc) for the conformance suite and the benchmarks.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_NORMS_H_
#define TESSERA_EXAMPLES_NORMS_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// Y = X / sqrt(mean(X^2) + 1e-6) * W over rows of length `n` (static).
Kernel RmsNorm(Dim rows, int64_t n, DType dtype, int threads, const std::string& name);

/// Y = (X - mean) / sqrt(var + 1e-5) * W + B over rows of length `n`.
Kernel LayerNorm(Dim rows, int64_t n, DType dtype, int threads, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_NORMS_H_
