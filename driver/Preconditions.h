//===- Preconditions.h - tile.require for the runtime -----------*- C++ -*-===//
//
// The driver's conversion of a kernel's preconditions (tile.require) into
// the runtime's expressions, which the runtime evaluates at launch.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DRIVER_PRECONDITIONS_H
#define TESSERA_DRIVER_PRECONDITIONS_H

#include "ir/TileDialect.h"
#include "runtime/kernel.pb.h"

namespace tessera::compiler {

/// Adds `kernel`'s tile.require conditions to `desc.preconditions`, each
/// with its location ("file:line"). The verifier admits only what converts;
/// anything else is an error on the op.
mlir::LogicalResult describePreconditions(tile::KernelOp kernel, runtime::CompiledKernel &desc);

} // namespace tessera::compiler

#endif // TESSERA_DRIVER_PRECONDITIONS_H
