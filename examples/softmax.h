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

/// The same softmax for long rows (e.g. a vocabulary's): one row per block,
/// read twice in chunks (the fewest of at most `chunk` columns that divide
/// `n`; the whole row where those would be under a quarter of `chunk`), the
/// first pass keeping a running maximum and sum (online softmax), the second
/// writing; a chunk's registers a thread instead of a row's, so several rows
/// an SM (4096 x 32000 f16 in chunks of 16000 on 256 threads: 3.24 TB/s
/// against the whole row's 2.38 on an H200).
Kernel SoftmaxOnline(Dim rows, int64_t n, DType dtype, int64_t chunk, int threads,
                     const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_SOFTMAX_H_
