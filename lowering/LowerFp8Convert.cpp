//===- LowerFp8Convert.cpp - Conversions to FP8 in hardware ---------------===//
//
// tile.cast to FP8 with saturation where the target converts in hardware:
// one cvt.rn.satfinite.{e4m3,e5m2}x2.f32 per element (the integer encoding
// of contract/ElementConversion.cpp takes about 20 instructions per
// element, most of the FP8 GEMM's epilogue).
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"
#include "contract/ElementConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace tessera;

namespace tessera::lowering {

Value KernelLowering::convertCast(Value value, Type from, Type to, bool saturate) {
  auto fromFloat = dyn_cast<FloatType>(from);
  // Round to nearest even, values past the finite range to its extremes,
  // NaN to NaN: convertElement's saturating conversion.
  if (!caps_.hasFp8Convert || !saturate || !isa<Float8E4M3FNType, Float8E5M2Type>(to) || !fromFloat ||
      isa<Float8E4M3FNType, Float8E5M2Type>(from) ||
      fromFloat.getWidth() > 32)
    return convertElement(b_, loc_, value, from, to, saturate);
  Type f32 = b_.getF32Type();
  if (from != f32)
    value = arith::ExtFOp::create(b_, loc_, f32, value);
  // Both halves of the pair from this element; the low byte holds the one
  // converted from the second operand.
  Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
      b_, loc_, b_.getI16Type(), value, value,
      NVVM::FPRoundingModeAttr::get(b_.getContext(), NVVM::FPRoundingMode::RN),
      NVVM::SaturationModeAttr::get(b_.getContext(), NVVM::SaturationMode::SATFINITE),
      b_.getBoolAttr(false), TypeAttr::get(to));
  return arith::TruncIOp::create(b_, loc_, b_.getI8Type(), pair);
}

} // namespace tessera::lowering
