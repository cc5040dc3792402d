//===- TileDialect.h - The tile dialect -------------------------*- C++ -*-===//
//
// This file declares the `tile` dialect, its attributes, types and
// operations (generated from ir/TileBase.td and ir/TileOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_IR_TILEDIALECT_H
#define TESSERA_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/TileDialect.h.inc"
#include "ir/TileEnums.h.inc"

namespace tessera::tile {

/// The bases of an MMA accumulator layout (MmaLayoutAttr's lanes and
/// registers) hold one number per index bit: r > 0 moves the element r
/// rows, r < 0 moves it -r columns.
inline bool isRowBasis(int64_t basis) { return basis > 0; }
inline int64_t basisRows(int64_t basis) { return basis > 0 ? basis : 0; }
inline int64_t basisCols(int64_t basis) { return basis < 0 ? -basis : 0; }
/// mma.sync m16n8's accumulator layout, the default bases (PTX ISA
/// §9.7.14.5.8): lane = 4 g + t holds rows g, g + 8 and columns 2t, 2t + 1.
inline constexpr int64_t kM16N8Lanes[] = {-2, -4, 1, 2, 4};
inline constexpr int64_t kM16N8Registers[] = {-1, 8};

} // namespace tessera::tile

#define GET_ATTRDEF_CLASSES
#include "ir/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "ir/TileOps.h.inc"

namespace tessera::tile {

/// Returns the `tile.target` attribute of the module enclosing `op`, or null.
TargetAttr getTargetAttr(mlir::Operation *op);

/// The size in bytes of one element of a tile type (f16 -> 2, f32 -> 4, ...).
int64_t getElementBytes(mlir::Type type);

/// The size in bytes of one copy (one stage) of a buffer.
int64_t getBufferBytes(BufferType type);

/// The element type in which a tile.reduce with results of `element`
/// combines its warps' partials through shared memory: f64 for an f64
/// reduction, f32 otherwise (16-bit partials exactly).
mlir::Type getReduceScratchElementType(mlir::Type element);

/// True for the element types tensors and buffers may hold.
bool isSupportedElementType(mlir::Type type);

/// The element types, as the dialect's messages list them.
inline constexpr const char *kElementTypes =
    "f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8, ui8, i32 or i64";

/// True for the element types that are stored but not computed with: FP8
/// (f8E4M3FN, f8E5M2) and ui8. Only tile.load, tile.store, tile.cast, copies
/// and gemms touch them.
bool isStorageOnlyType(mlir::Type type);

/// True for the names a tile.kernel may have: [A-Za-z_][A-Za-z0-9_]*. The
/// name becomes the PTX entry: LLVM's NVPTX backend aborts on a space, '-',
/// '"' or a non-ASCII byte, and ptxas rejects a leading digit or '.'.
bool isKernelName(llvm::StringRef name);

/// What a kernel's name must be, as the messages say it.
inline constexpr const char *kKernelNameRule =
    "is not an identifier (ASCII letters, digits and '_', not starting with a digit): it "
    "becomes the kernel's PTX entry";

} // namespace tessera::tile

#endif // TESSERA_IR_TILEDIALECT_H
