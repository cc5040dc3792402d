//===- scaled_add.h - A downstream project's kernel -------------*- C++ -*-===//
//
// Out = alpha * X + Y over vectors of any length: the kind of kernel a
// project embedding Tessera writes for itself.
//
//===----------------------------------------------------------------------===//

#ifndef EMBEDDING_KERNELS_SCALED_ADD_H
#define EMBEDDING_KERNELS_SCALED_ADD_H

#include <cstdint>

#include "frontend/Tessera.h"

namespace embedding {

/// Out[i] = alpha * X[i] + Y[i] for i < n; n may be dynamic.
tessera::Kernel ScaledAdd(tessera::Dim n, int64_t block = 1024, int threads = 256);

}  // namespace embedding

#endif  // EMBEDDING_KERNELS_SCALED_ADD_H
