//===- TileVerify.h - What the tile dialect's verifiers share ---*- C++ -*-===//
//
// Private to ir/: the bounds and checks the verifiers of TileDialect.cpp,
// TileLoopOps.cpp and TileControlFlowOps.cpp share, and the loops' common
// syntax.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_IR_TILEVERIFY_H
#define TESSERA_IR_TILEVERIFY_H

#include "ir/TileDialect.h"

#include "mlir/IR/OpImplementation.h"

namespace tessera::tile::detail {

/// The largest count, extent or stage number an attribute may hold: what the
/// lowering's 32-bit arithmetic and the runtime's launch take.
inline constexpr int64_t kMaxInt32Quantity = (int64_t(1) << 31) - 1;

/// Whether `rows` split into the warps_m warps of `layout` and whole steps.
mlir::LogicalResult verifyRowSlice(llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                                   MmaLayoutAttr layout, int64_t rows, llvm::StringRef what);

/// Parses a loop header `%iv = 0 to %count` (`opName` in the error for any
/// other lower bound), resolving `count` as an index into `result`'s
/// operands; `iv` gets its index type.
mlir::ParseResult parseLoopHeader(mlir::OpAsmParser &parser, mlir::OperationState &result,
                                  llvm::StringRef opName, mlir::OpAsmParser::Argument &iv);

} // namespace tessera::tile::detail

#endif // TESSERA_IR_TILEVERIFY_H
