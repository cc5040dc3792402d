//===- Dmma.cpp - Ampere's f64 mma.sync.m8n8k4 (DMMA) atom ----------------===//
//
// This file defines the sm80 family's f64 MMA atom and its lowering:
// mma.sync.aligned.m8n8k4.row.col.f64 (PTX ISA §9.7.14.5.1), one f64 of A
// (row g, k t), one of B (k t, column g) and two accumulators (row g,
// columns 2t and 2t + 1) per lane, g = lane / 4, t = lane mod 4. Two
// instructions, on rows 0-7 and 8-15, make an m16n8 accumulator tile, the
// layout every warp-level atom shares. ldmatrix moves 16-bit elements only,
// so each lane reads its operands from shared memory one f64 at a time.
//
//===----------------------------------------------------------------------===//

#include "backends/sm80/MmaSync.h"

#include "contract/NvvmOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;
using tile::MmaLayoutAttr;

/// Two m8n8k4 f64 MMAs per m16n8 accumulator tile of a warp.
class DmmaLowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
  bool tilesAccumulatorOverWarps() const override { return true; }
  std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                             int64_t threads, bool wholeRows,
                                             int64_t warpsM) const override {
    return chooseWarpGridTiling(atom, m, n, threads, wholeRows, {}, warpsM);
  }
  /// A cp.async loop issues its next copies after this gemm (the lowering
  /// leaves issueDeferredCopies to the strategy, after the body).
  bool defersLoopCopies() const override { return true; }
};

LogicalResult DmmaLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                      const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t mt = gemm.getM() / mma.getWarpsM() / 16, nt = gemm.getN() / mma.getWarpsN() / 8;
  SmallVector<int64_t> shape = {gemm.getM(), gemm.getN()};
  ctx.barrier();
  Value warp = ctx.warpId(), lane = ctx.laneId();
  Value g = arith::DivUIOp::create(builder, loc, lane, ctx.cst(4));
  Value t = arith::RemUIOp::create(builder, loc, lane, ctx.cst(4));
  Value warpRow = ctx.add(ctx.warpTileRow(shape, mma, warp), g);
  Value warpCol = ctx.add(ctx.warpTileCol(shape, mma, warp), g);
  auto load = [&](const BufferInfo &buffer, Value row, Value col) -> Value {
    return memref::LoadOp::create(builder, loc, buffer.memref,
                                  ctx.sharedIndices(buffer, {row, col}));
  };
  // The accumulators stay SSA values through the gemm.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    acc.push_back(memref::LoadOp::create(builder, loc, c.memref, ValueRange{ctx.cst(r)}));
  for (int64_t ks = 0; ks < gemm.getK() / 4; ++ks) {
    Value k = ctx.add(t, ctx.cst(ks * 4));
    // A: rows g and g + 8 of each 16-row tile; B: column g of each 8.
    SmallVector<Value> aRegs, bRegs;
    for (int64_t mi = 0; mi < mt; ++mi)
      for (int64_t h = 0; h < 2; ++h) {
        Value row = ctx.add(warpRow, ctx.cst(mi * 16 + h * 8));
        aRegs.push_back(transA ? load(a, k, row) : load(a, row, k));
      }
    for (int64_t ni = 0; ni < nt; ++ni) {
      Value col = ctx.add(warpCol, ctx.cst(ni * 8));
      bRegs.push_back(transB ? load(b, col, k) : load(b, k, col));
    }
    for (int64_t mi = 0; mi < mt; ++mi)
      for (int64_t ni = 0; ni < nt; ++ni)
        for (int64_t h = 0; h < 2; ++h) {
          int64_t base = (mi * nt + ni) * 4 + h * 2;
          SmallVector<Value> d = mmaSync(builder, loc, 8, 8, 4, "f64", "f64",
                                         {aRegs[mi * 2 + h]}, {bRegs[ni]},
                                         ValueRange(acc).slice(base, 2));
          std::copy(d.begin(), d.end(), acc.begin() + base);
        }
  }
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    memref::StoreOp::create(builder, loc, acc[r], c.memref, ValueRange{ctx.cst(r)});
  ctx.noteSharedAccess();
  return success();
}

} // namespace
} // namespace lowering

const MmaAtom &getSm80DmmaAtom() {
  static const lowering::DmmaLowering lowering;
  static const MmaAtom *atom = [] {
    // One m16n8 accumulator tile per step (two m8n8k4 instructions); any
    // operand order (scalar shared loads).
    auto *dmma = new MmaAtom{"SM80_8x8x4_F64F64F64F64_TN", 16, 8, 4, {"f64"}, 32};
    dmma->accumulatorTypes = {"f64"};
    dmma->lowering = &lowering;
    return dmma;
  }();
  return *atom;
}

} // namespace tessera
