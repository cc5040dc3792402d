//===- SimtFma.cpp - The SIMT FMA atom every backend has ------------------===//
//
// This file defines the SIMT fallback atom and its lowering: each thread
// computes its chunks of the accumulator with one fused multiply-add per
// element and k (fma.rn.f32, PTX ISA §9.7.3.6), A and B read from shared
// memory and converted to f32.
//
//===----------------------------------------------------------------------===//

#include "backends/common/MmaAtoms.h"

#include "backends/AtomLowering.h"
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
  Type f32 = builder.getF32Type();
  ctx.barrier();
  auto forOp = scf::ForOp::create(builder, loc, ctx.cst(0), ctx.cst(gemm.getK()), ctx.cst(1));
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    ctx.forEachChunk(c.type.getShape(), c.distribution, [&](const Chunk &chunk) {
      Value i = chunk.coords[0], j = chunk.coords[1];
      Value av = memref::LoadOp::create(
          builder, loc, a.memref,
          ctx.sharedIndices(a, transA ? SmallVector<Value>{k, i} : SmallVector<Value>{i, k}));
      av = ctx.convert(av, f32);
      for (int64_t v = 0; v < c.distribution.getVector(); ++v) {
        Value jv = ctx.add(j, ctx.cst(v));
        Value bv = memref::LoadOp::create(
            builder, loc, b.memref,
            ctx.sharedIndices(b, transB ? SmallVector<Value>{jv, k} : SmallVector<Value>{k, jv}));
        bv = ctx.convert(bv, f32);
        Value slot = ctx.cst(chunk.firstSlot + v);
        Value acc = memref::LoadOp::create(builder, loc, c.memref, ValueRange{slot});
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
    auto *simt = new MmaAtom{
        MmaAtomKind::kSimtFma, "SIMT_1x1x1_F32F32F32F32", 1, 1, 1, {"f16", "bf16", "f32"}, 1};
    simt->lowering = &lowering;
    return simt;
  }();
  return *atom;
}

} // namespace tessera
