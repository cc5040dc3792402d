//===- SimtFma.cpp - The SIMT FMA atom every backend has ------------------===//
//
// This file defines the SIMT fallback atom and its lowering: each thread
// computes its chunks of the accumulator with one fused multiply-add per
// element and k (fma.rn, PTX ISA §9.7.3.6) in the accumulator's type, or
// an integer multiply-add for i32 accumulators, A and B read from shared
// memory and converted exactly.
//
//===----------------------------------------------------------------------===//

#include "backends/common/MmaAtoms.h"
#include "backends/common/SimtGemm.h"

#include "contract/AtomLowering.h"
#include "contract/ElementConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;

/// C += A * B one element and one k at a time, over the chunks of the
/// accumulator's distribution this thread owns.
class SimtFmaLowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
};

LogicalResult SimtFmaLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                         const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  const BufferInfo &a = ctx.buffer(gemm.getA());
  const BufferInfo &b = ctx.buffer(gemm.getB());
  const BufferInfo &c = ctx.buffer(gemm.getC());
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  // Products in the accumulator's type: fma.rn in f16, f32 or f64; exact
  // integer products summed in i32 (wrapping). Inputs convert exactly (FP8
  // decoded, i8 sign- and ui8 zero-extended).
  Type inType = a.type.getElementType(), accType = c.type.getElementType();
  bool integer = isa<IntegerType>(accType);
  auto load = [&](const BufferInfo &buffer, SmallVector<Value> coords) -> SmallVector<Value> {
    Value v =
        memref::LoadOp::create(builder, loc, buffer.memref, ctx.sharedIndices(buffer, coords));
    return {convertElement(builder, loc, v, inType, accType)};
  };
  auto loadA = [&](Value k, Value i) {
    return load(a, transA ? SmallVector<Value>{k, i} : SmallVector<Value>{i, k});
  };
  auto loadB = [&](Value k, Value j) {
    return load(b, transB ? SmallVector<Value>{j, k} : SmallVector<Value>{k, j});
  };
  auto update = [&](ArrayRef<Value> av, ArrayRef<Value> bv, Value acc) -> Value {
    if (integer)
      return arith::AddIOp::create(builder, loc, acc,
                                   arith::MulIOp::create(builder, loc, av[0], bv[0]));
    return math::FmaOp::create(builder, loc, av[0], bv[0], acc);
  };
  return lowerSimtGemm(ctx, gemm, atom, /*kStep=*/1, loadA, loadB, update);
}

} // namespace
} // namespace lowering

const MmaAtom &getSimtFmaAtom() {
  static const lowering::SimtFmaLowering lowering;
  static const MmaAtom *atom = [] {
    // Every input type (TF32 computed as exact f32) and accumulator.
    auto *simt = new MmaAtom{"SIMT_1x1x1_F32F32F32F32",
                             1,
                             1,
                             1,
                             {"f16", "bf16", "f32", "tf32", "f64", "e4m3", "e5m2", "s8", "u8"},
                             1};
    simt->accumulatorTypes = {"f32", "f16", "f64", "s32"};
    simt->lowering = &lowering;
    return simt;
  }();
  return *atom;
}

} // namespace tessera
