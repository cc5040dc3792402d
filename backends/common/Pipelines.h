//===- Pipelines.h - The pipelining strategies every target has -*- C++ -*-===//
//
// Strategies that need no special instruction: register double buffering
// (RegisterDoubleBuffer.cpp; targets without cp.async) and the in-order
// loop (InOrderPipeline.cpp; always correct, every backend's last resort).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_COMMON_PIPELINES_H
#define TESSERA_BACKENDS_COMMON_PIPELINES_H

#include "backends/PipelineStrategy.h"

namespace tessera::common {

/// Two shared stages; iteration k loads iteration k + 1's tiles into
/// registers while it computes on stage k mod 2, then stores them to the
/// other stage (CUTLASS's sm70 mainloop). Named "register-double-buffer".
const PipelineStrategy &registerDoubleBufferPipeline();

/// The loop as written: copies, then compute, a barrier between
/// iterations. Runs any loop. Named "in-order".
const PipelineStrategy &inOrderPipeline();

} // namespace tessera::common

#endif // TESSERA_BACKENDS_COMMON_PIPELINES_H
