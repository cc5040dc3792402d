//===- QuadpairMma.cpp - Volta's mma.sync.m8n8k4 atoms --------------------===//
//
// This file defines the sm70 family's MMA atoms and their lowering:
// mma.sync.aligned.m8n8k4 (PTX ISA §9.7.14.5.1), where each of a warp's
// four quadpairs computes one 8 x 8 block of every 16 x 16 step of the
// warp's tile, its operands read from shared memory with 8-byte loads.
// The instruction has two C/D forms with layouts of their own, described
// here as data: f32 (eight registers; the layout accumulator fragments
// keep, kQuadpairStep) and f16 (four f16x2 registers, a row per
// lane). The f16 form's atom moves its accumulators into the f16 layout
// before its MMAs and back after them, with XOR shuffles within each quad.
//
//===----------------------------------------------------------------------===//

#include "backends/sm70/QuadpairMma.h"

#include <array>

#include "contract/AtomLowering.h"
#include "contract/NvvmOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;
using tile::MmaLayoutAttr;

/// A bit of an accumulator element's coordinates within a 4-row half of
/// its quadpair's 8 x 8 block (the half, rows 0-3 or 4-7, is lane bit 4 in
/// both forms). Elements travel in pairs of adjacent columns (two f32
/// registers, or one f16x2), so the coordinates are 2 row bits and 2
/// column-pair bits.
enum class CoordBit { kRow0, kRow1, kColPair0, kColPair1 };

/// A C/D fragment layout of m8n8k4 within a quad (lanes 4g..4g+3): which
/// coordinate bit each of the two low lane bits carries, and each of the
/// two bits of a lane's pair index (PTX ISA §9.7.14.5.1, "Matrix fragments
/// for mma.m8n8k4").
struct QuadpairAccLayout {
  std::array<CoordBit, 2> lane, pair;
};

/// .f32 C/D: lane l's c[i] is at row (l & 1) + (i & 2), column (l & 2) +
/// (i & 4) + (i & 1); pair j = i / 2 (CuTe's SM70_8x8_32b).
constexpr QuadpairAccLayout kF32Form = {{CoordBit::kRow0, CoordBit::kColPair0},
                                        {CoordBit::kRow1, CoordBit::kColPair1}};
/// .f16 C/D: lane l holds row l mod 4, columns 2j and 2j + 1 in register j
/// (CuTe's SM70_8x8_16b).
constexpr QuadpairAccLayout kF16Form = {{CoordBit::kRow0, CoordBit::kRow1},
                                        {CoordBit::kColPair0, CoordBit::kColPair1}};

/// A quad's registers (one 32-bit pair each, indexed by pair) moved from
/// layout `from` to layout `to`: each lane bit that differs is swapped with
/// the pair bit that holds the coordinate it needs (one butterfly stage:
/// two XOR shuffles, the lanes whose bit is set keeping the upper half of
/// each register pair), then the pairs are renamed.
SmallVector<Value> relayoutPairs(GemmLoweringContext &ctx, ArrayRef<Value> pairs,
                                 QuadpairAccLayout from, const QuadpairAccLayout &to) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  SmallVector<Value> regs(pairs.begin(), pairs.end());
  Value lane = ctx.laneId();
  for (int64_t bit = 0; bit < 2; ++bit) {
    if (from.lane[bit] == to.lane[bit])
      continue;
    // The layouts used here differ by lane-pair swaps only; a coordinate
    // moving between lane bits would need an index shuffle.
    int64_t c = from.pair[0] == to.lane[bit] ? 0 : 1;
    assert(from.pair[c] == to.lane[bit] && "quadpair layouts differ by a lane permutation");
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, lane, ctx.cst(int64_t(1) << bit)), ctx.cst(0));
    for (int64_t lo = 0; lo < 4; ++lo) {
      if (lo & (int64_t(1) << c))
        continue;
      int64_t hi = lo | (int64_t(1) << c);
      Value send = arith::SelectOp::create(b, loc, set, regs[lo], regs[hi]);
      Value got = gpu::ShuffleOp::create(b, loc, send, int64_t(1) << bit, 32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
      regs[lo] = arith::SelectOp::create(b, loc, set, got, regs[lo]);
      regs[hi] = arith::SelectOp::create(b, loc, set, regs[hi], got);
    }
    std::swap(from.lane[bit], from.pair[c]);
  }
  // Rename: `to`'s pair q holds, in each of its bits, the coordinate that
  // some bit of `from`'s pair index holds now.
  SmallVector<Value> renamed(4);
  for (int64_t k = 0; k < 4; ++k) {
    int64_t q = 0;
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t e = 0; e < 2; ++e)
        if (to.pair[d] == from.pair[e] && (k >> e & 1))
          q |= int64_t(1) << d;
    renamed[q] = regs[k];
  }
  return renamed;
}

/// The f32 form's accumulator layout over a warp's 16 x 16 step (PTX ISA
/// §9.7.14.5.1): quadpair q = (lane / 4) mod 4 holds the 8 x 8 block at
/// (8 (q mod 2), 8 (q / 2)); register i of lane l is row (l & 1) + (i & 2)
/// + 4 (l >= 16), column (i & 4) + (l & 2) + (i & 1). As lane bases: bit 0
/// r1, bit 1 c2, bits 2-3 the quadpair (r8, c8), bit 4 r4; register bases
/// c1, r2, c4.
const AccumulatorStep kQuadpairStep{16, 16, {1, -2, 8, -8, 4}, {-1, 2, -4}};

/// m8n8k4 by quadpairs: each warp step is 16 x 16, each quadpair 8 x 8.
/// With `halfAccumulators` the MMAs take the f16 C/D form.
class QuadpairMmaLowering final : public MmaAtomLowering {
public:
  explicit QuadpairMmaLowering(bool halfAccumulators) : halfAccumulators_(halfAccumulators) {}
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
  bool tilesAccumulatorOverWarps() const override { return true; }
  std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                             int64_t threads, bool wholeRows,
                                             int64_t warpsM) const override {
    return chooseWarpGridTiling(atom, m, n, threads, wholeRows, kQuadpairStep, warpsM);
  }

private:
  /// The accumulators of an 8 x 8 block (slots `base`..`base` + 7 of C,
  /// in the f32 form's order) as the MMA takes them, and back.
  SmallVector<Value> loadBlock(GemmLoweringContext &ctx, const BufferInfo &c,
                               int64_t base) const;
  void storeBlock(GemmLoweringContext &ctx, const BufferInfo &c, int64_t base,
                  ArrayRef<Value> regs) const;

  bool halfAccumulators_;
};

SmallVector<Value> QuadpairMmaLowering::loadBlock(GemmLoweringContext &ctx, const BufferInfo &c,
                                                  int64_t base) const {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  SmallVector<Value> slots;
  for (int64_t r = 0; r < 8; ++r)
    slots.push_back(memref::LoadOp::create(b, loc, c.memref, ValueRange{ctx.cst(base + r)}));
  if (!halfAccumulators_) {
    // f16 accumulators of the f32 atom are summed in f32 within the gemm.
    for (Value &slot : slots)
      slot = ctx.convert(slot, b.getF32Type());
    return slots;
  }
  SmallVector<Value> pairs;
  for (int64_t j = 0; j < 4; ++j)
    pairs.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(),
                                            ctx.packVector({slots[2 * j], slots[2 * j + 1]})));
  SmallVector<Value> regs;
  for (Value pair : relayoutPairs(ctx, pairs, kF32Form, kF16Form))
    regs.push_back(
        LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()), pair));
  return regs;
}

void QuadpairMmaLowering::storeBlock(GemmLoweringContext &ctx, const BufferInfo &c, int64_t base,
                                     ArrayRef<Value> regs) const {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Type accType = c.type.getElementType();
  SmallVector<Value> slots;
  if (!halfAccumulators_) {
    for (Value reg : regs)
      slots.push_back(ctx.convert(reg, accType));
  } else {
    SmallVector<Value> pairs;
    for (Value reg : regs)
      pairs.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), reg));
    for (Value pair : relayoutPairs(ctx, pairs, kF16Form, kF32Form))
      llvm::append_range(slots, ctx.unpackVector(LLVM::BitcastOp::create(
                                    b, loc, VectorType::get({2}, b.getF16Type()), pair)));
  }
  for (int64_t r = 0; r < 8; ++r)
    memref::StoreOp::create(b, loc, slots[r], c.memref, ValueRange{ctx.cst(base + r)});
}

LogicalResult QuadpairMmaLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                             const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom, kQuadpairStep);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  if (halfAccumulators_ && !c.type.getElementType().isF16())
    return gemm.emitOpError() << "with atom " << atom.name << " accumulates in f16 only";
  MmaLayoutAttr mma = c.mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 16;
  Type i32 = builder.getI32Type();
  ctx.barrier();
  SmallVector<int64_t> shape = {gemm.getM(), gemm.getN()};
  Value warp = ctx.warpId(), lane = ctx.laneId();
  // Quadpair q = (lane / 4) mod 4 computes the 8 x 8 block at
  // (8 (q mod 2), 8 (q / 2)) of each 16 x 16 step; its lanes are 0-3 (low
  // group) and 16-19 (high group) of the quadpair.
  Value quadpair = arith::RemUIOp::create(
      builder, loc, arith::DivUIOp::create(builder, loc, lane, ctx.cst(4)), ctx.cst(4));
  Value inGroup =
      ctx.add(arith::RemUIOp::create(builder, loc, lane, ctx.cst(4)),
              ctx.mul(arith::DivUIOp::create(builder, loc, lane, ctx.cst(16)), ctx.cst(4)));
  Value warpRow =
      ctx.add(ctx.warpTileRow(shape, mma, warp),
              ctx.mul(arith::RemUIOp::create(builder, loc, quadpair, ctx.cst(2)), ctx.cst(8)));
  Value warpCol =
      ctx.add(ctx.warpTileCol(shape, mma, warp),
              ctx.mul(arith::DivUIOp::create(builder, loc, quadpair, ctx.cst(2)), ctx.cst(8)));
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
  // store of each, not one per k-step), `perBlock` registers per 8 x 8.
  int64_t perBlock = halfAccumulators_ ? 4 : 8;
  SmallVector<Value> acc;
  for (int64_t block = 0; block < mt * nt; ++block)
    llvm::append_range(acc, loadBlock(ctx, c, block * 8));
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
        int64_t base = (mi * nt + ni) * perBlock;
        SmallVector<Value> d = mmaM8n8k4(builder, loc, transA, transB, aRegs[mi], bRegs[ni],
                                         ValueRange(acc).slice(base, perBlock));
        std::copy(d.begin(), d.end(), acc.begin() + base);
      }
    }
  }
  for (int64_t block = 0; block < mt * nt; ++block)
    storeBlock(ctx, c, block * 8, ArrayRef<Value>(acc).slice(block * perBlock, perBlock));
  ctx.noteSharedAccess();
  return success();
}

} // namespace
} // namespace lowering

const MmaAtom &getSm70QuadpairAtom() {
  static const lowering::QuadpairMmaLowering lowering(/*halfAccumulators=*/false);
  static const MmaAtom *atom = [] {
    auto *quadpair = new MmaAtom{"SM70_8x8x4_F32F16F16F32", 8, 8, 4, {"f16"}, 32};
    quadpair->warpM = quadpair->warpN = 16;
    quadpair->accumulatorTypes = {"f32", "f16"};
    quadpair->lowering = &lowering;
    return quadpair;
  }();
  return *atom;
}

const MmaAtom &getSm70QuadpairF16Atom() {
  static const lowering::QuadpairMmaLowering lowering(/*halfAccumulators=*/true);
  static const MmaAtom *atom = [] {
    auto *quadpair = new MmaAtom{"SM70_8x8x4_F16F16F16F16", 8, 8, 4, {"f16"}, 32};
    quadpair->warpM = quadpair->warpN = 16;
    quadpair->accumulatorTypes = {"f16"};
    quadpair->lowering = &lowering;
    return quadpair;
  }();
  return *atom;
}

} // namespace tessera
