//===- ElementConversion.h - Stored and converted elements ----*- C++ -*-===//
//
// This file declares how lowered kernels store and convert the tile
// dialect's element types. FP8 (f8E4M3FN, f8E5M2) and ui8 are storage types:
// LLVM has no FP8 and arith no unsigned integers, so a lowered kernel keeps
// them as i8 bits, and conversions to and from them are integer arithmetic
// (exact decoding; rounding to nearest even and optional saturation when
// encoding), the same on every target.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONTRACT_ELEMENTCONVERSION_H
#define TESSERA_CONTRACT_ELEMENTCONVERSION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace tessera {

/// The type a lowered kernel holds elements of `type` in: i8 for FP8 and
/// ui8, `type` itself otherwise.
mlir::Type getStorageType(mlir::Type type);

/// `value`, an element of type `from` in its storage type, converted to an
/// element of type `to` in its storage type. Floats round to nearest even,
/// FP8 decodes exactly, ui8 zero-extends, floats truncate toward zero into
/// integers. With `saturate`, values beyond `to`'s finite range become its
/// extreme finite values (NaN: NaN for floats, 0 for integers); without it
/// an FP8 overflow is NaN (e4m3) or infinity (e5m2).
mlir::Value convertElement(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                           mlir::Type from, mlir::Type to, bool saturate = false);

/// Whether copies into elements of `type` saturate: FP8 (a quantizing
/// store keeps the finite range rather than overflowing to NaN) and the
/// integers (an i32 accumulator stored as i8 clamps to [-128, 127], as a
/// requantizing store wants, rather than wrapping).
bool saturatesInto(mlir::Type type);

/// The constant `value` of element type `type`, in its storage type (FP8
/// rounded to nearest even and saturated).
mlir::Value storageConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                            double value);

} // namespace tessera

#endif // TESSERA_CONTRACT_ELEMENTCONVERSION_H
