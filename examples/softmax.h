//===- softmax.h - The softmax example's kernel, for reuse ------*- C++ -*-===//
//
// Declares the row softmax of examples/softmax.cc for the conformance suite
// and the benchmarks.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_SOFTMAX_H_
#define TESSERA_EXAMPLES_SOFTMAX_H_

#include <string>

#include "frontend/Tessera.h"

namespace tessera::examples {

/// Y = softmax(X) over rows of length `n` (static), `rowsPerBlock` rows per
/// block of `threads` threads; X and Y hold `dtype`, math in f32.
Kernel Softmax(Dim rows, int64_t n, DType dtype, int64_t rowsPerBlock, int threads,
               const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_SOFTMAX_H_
