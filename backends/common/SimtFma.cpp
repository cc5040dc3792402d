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

#include "backends/AtomLowering.h"
#include "backends/ElementConversion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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
                                         const MmaAtom &) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  const BufferInfo &a = ctx.buffer(gemm.getA());
  const BufferInfo &b = ctx.buffer(gemm.getB());
  const BufferInfo &c = ctx.buffer(gemm.getC());
  if (!a.type.isShared() || !b.type.isShared())
    return gemm.emitOpError() << "with the SIMT FMA atom reads A and B from shared memory; "
                                 "copy them into shared buffers first";
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  // Products in the accumulator's type: fma.rn in f16, f32 or f64; exact
  // integer products summed in i32 (wrapping). Inputs convert exactly (FP8
  // decoded, i8 sign- and ui8 zero-extended).
  Type inType = a.type.getElementType(), accType = c.type.getElementType();
  bool integer = isa<IntegerType>(accType);
  auto load = [&](const BufferInfo &buffer, SmallVector<Value> coords) {
    Value v =
        memref::LoadOp::create(builder, loc, buffer.memref, ctx.sharedIndices(buffer, coords));
    return convertElement(builder, loc, v, inType, accType);
  };
  ctx.barrier();
  auto forOp = scf::ForOp::create(builder, loc, ctx.cst(0), ctx.cst(gemm.getK()), ctx.cst(1));
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    ctx.forEachChunk(c.type.getShape(), c.distribution, [&](const Chunk &chunk) {
      Value i = chunk.coords[0], j = chunk.coords[1];
      Value av = load(a, transA ? SmallVector<Value>{k, i} : SmallVector<Value>{i, k});
      for (int64_t v = 0; v < c.distribution.getVector(); ++v) {
        Value jv = ctx.add(j, ctx.cst(v));
        Value bv = load(b, transB ? SmallVector<Value>{jv, k} : SmallVector<Value>{k, jv});
        Value slot = ctx.cst(chunk.firstSlot + v);
        Value acc = memref::LoadOp::create(builder, loc, c.memref, ValueRange{slot});
        if (integer)
          acc = arith::AddIOp::create(builder, loc, acc,
                                      arith::MulIOp::create(builder, loc, av, bv));
        else
          acc = math::FmaOp::create(builder, loc, av, bv, acc);
        memref::StoreOp::create(builder, loc, acc, c.memref, ValueRange{slot});
      }
    });
  }
  ctx.noteSharedAccess();
  return success();
}

} // namespace
} // namespace lowering

const MmaAtom &getSimtFmaAtom() {
  static const lowering::SimtFmaLowering lowering;
  static const MmaAtom *atom = [] {
    // Every input type (TF32 computed as exact f32) and accumulator.
    auto *simt = new MmaAtom{MmaAtomKind::kSimtFma,
                             "SIMT_1x1x1_F32F32F32F32",
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
