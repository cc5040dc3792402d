//===- QuadpairMma.cpp - Volta's mma.sync.m8n8k4 atom ---------------------===//
//
// This file defines the sm70 family's MMA atom and its lowering:
// mma.sync.aligned.m8n8k4 (PTX ISA §9.7.14.5.1), where each of a warp's
// four quadpairs computes one 8 x 8 block of every 16 x 16 step of the
// warp's tile, its operands read from shared memory with 8-byte loads.
//
//===----------------------------------------------------------------------===//

#include "backends/sm70/QuadpairMma.h"

#include "backends/AtomLowering.h"
#include "backends/NvvmOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;
using tile::MmaLayoutAttr;

/// m8n8k4 by quadpairs: each warp step is 16 x 16, each quadpair 8 x 8.
class QuadpairMmaLowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
};

LogicalResult QuadpairMmaLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                             const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom, 8, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 16;
  Type i32 = builder.getI32Type();
  ctx.barrier();
  SmallVector<int64_t> shape = {gemm.getM(), gemm.getN()};
  Value warp = ctx.warpId(), lane = ctx.laneId();
  Value quadpair = ctx.quadpairId(lane);
  // Within a quadpair: lanes 0-3 (low group) and 16-19 (high group).
  Value inGroup =
      ctx.add(arith::RemUIOp::create(builder, loc, lane, ctx.cst(4)),
              ctx.mul(arith::DivUIOp::create(builder, loc, lane, ctx.cst(16)), ctx.cst(4)));
  Value warpRow = ctx.quadpairBlockRow(shape, mma, warp, quadpair);
  Value warpCol = ctx.quadpairBlockCol(shape, mma, warp, quadpair);
  Value quarter = arith::RemUIOp::create(builder, loc, lane, ctx.cst(4));
  Value highHalf = ctx.mul(arith::DivUIOp::create(builder, loc, lane, ctx.cst(16)), ctx.cst(4));
  // Four contiguous f16 of a shared buffer as two b32 registers (one
  // 8-byte load: the operand layout is chosen so they are contiguous).
  auto load4 = [&](const BufferInfo &buffer, Value row, Value col) {
    return ctx.unpackVector(LLVM::LoadOp::create(builder, loc, VectorType::get({2}, i32),
                                                 ctx.sharedPointer(buffer, {row, col}), 8));
  };
  // A .row: lane's row, k0..k0+3; A transposed (K x M) .col: k = lane mod 4,
  // its 4 rows. B .row (K x N): k = lane mod 4, its 4 columns; B transposed
  // (N x K) .col: its column, k0..k0+3.
  // The accumulators stay SSA values through the gemm (one load and one
  // store of each, not one per k-step).
  // f16 accumulators are summed in f32 within the gemm: the instruction's
  // f16-accumulator form lays C out differently (one row of 8 per lane),
  // which the m8n8 accumulator layout does not describe.
  Type accType = c.type.getElementType(), f32 = builder.getF32Type();
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mt * nt * 8; ++r)
    acc.push_back(ctx.convert(
        memref::LoadOp::create(builder, loc, c.memref, ValueRange{ctx.cst(r)}), f32));
  for (int64_t ks = 0; ks < gemm.getK() / 4; ++ks) {
    Value k0 = ctx.cst(ks * 4);
    SmallVector<SmallVector<Value>> aRegs, bRegs;
    for (int64_t mi = 0; mi < mt; ++mi) {
      Value r0 = ctx.add(warpRow, ctx.cst(mi * 16));
      aRegs.push_back(transA ? load4(a, ctx.add(k0, quarter), ctx.add(r0, highHalf))
                             : load4(a, ctx.add(r0, inGroup), k0));
    }
    for (int64_t ni = 0; ni < nt; ++ni) {
      Value c0 = ctx.add(warpCol, ctx.cst(ni * 16));
      bRegs.push_back(transB ? load4(b, ctx.add(c0, inGroup), k0)
                             : load4(b, ctx.add(k0, quarter), ctx.add(c0, highHalf)));
    }
    for (int64_t mi = 0; mi < mt; ++mi) {
      for (int64_t ni = 0; ni < nt; ++ni) {
        int64_t base = (mi * nt + ni) * 8;
        SmallVector<Value> d = mmaM8n8k4(builder, loc, transA, transB, aRegs[mi], bRegs[ni],
                                         ValueRange(acc).slice(base, 8));
        std::copy(d.begin(), d.end(), acc.begin() + base);
      }
    }
  }
  for (int64_t r = 0; r < mt * nt * 8; ++r)
    memref::StoreOp::create(builder, loc, ctx.convert(acc[r], accType), c.memref,
                            ValueRange{ctx.cst(r)});
  ctx.noteSharedAccess();
  return success();
}

} // namespace
} // namespace lowering

const MmaAtom &getSm70QuadpairAtom() {
  static const lowering::QuadpairMmaLowering lowering;
  static const MmaAtom *atom = [] {
    auto *quadpair =
        new MmaAtom{MmaAtomKind::kQuadpairMma, "SM70_8x8x4_F32F16F16F32", 8, 8, 4, {"f16"}, 32};
    quadpair->warpM = quadpair->warpN = 16;
    quadpair->accumulatorTypes = {"f32", "f16"};
    quadpair->lowering = &lowering;
    return quadpair;
  }();
  return *atom;
}

} // namespace tessera
