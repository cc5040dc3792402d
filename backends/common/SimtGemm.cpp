//===- SimtGemm.cpp - The loop of SIMT-style gemm atoms -------------------===//
//
// This file implements the loop that atoms computing one accumulator
// element per thread share: a barrier, K in steps, the thread's chunks of
// C, and the atom's step per element.
//
//===----------------------------------------------------------------------===//

#include "backends/common/SimtGemm.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::lowering {

using namespace mlir;

LogicalResult lowerSimtGemm(GemmLoweringContext &ctx, tile::GemmOp gemm, const MmaAtom &atom,
                            int64_t kStep, SimtOperandLoader loadA, SimtOperandLoader loadB,
                            SimtUpdate update) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  const BufferInfo &a = ctx.buffer(gemm.getA());
  const BufferInfo &b = ctx.buffer(gemm.getB());
  const BufferInfo &c = ctx.buffer(gemm.getC());
  if (!a.type.isShared() || !b.type.isShared() || !c.distribution)
    return gemm.emitOpError() << "with atom " << atom.name
                              << " reads A and B from shared memory into a distributed C";
  ctx.barrier();
  auto forOp = scf::ForOp::create(builder, loc, ctx.cst(0), ctx.cst(gemm.getK()),
                                  ctx.cst(kStep));
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    ctx.forEachChunk(c.type.getShape(), c.distribution, [&](const Chunk &chunk) {
      Value i = chunk.coords[0], j = chunk.coords[1];
      SmallVector<Value> av = loadA(k, i);
      for (int64_t v = 0; v < c.distribution.getVector(); ++v) {
        SmallVector<Value> bv = loadB(k, ctx.add(j, ctx.cst(v)));
        Value slot = ctx.cst(chunk.firstSlot + v);
        Value acc = memref::LoadOp::create(builder, loc, c.memref, ValueRange{slot});
        acc = update(av, bv, acc);
        memref::StoreOp::create(builder, loc, acc, c.memref, ValueRange{slot});
      }
    });
  }
  ctx.noteSharedAccess();
  return success();
}

} // namespace tessera::lowering
