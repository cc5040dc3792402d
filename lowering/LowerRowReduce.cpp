//===- LowerRowReduce.cpp - Row slices of MMA accumulator layouts ---------===//
//
// This file implements the row-slice layout of an MMA accumulator layout
// and the reductions into it. A 1-D fragment of R elements in the row
// slice of `#tile.mma_layout<...>` holds, in each thread, exactly the rows
// that thread owns in an R-row accumulator of that layout: 2 rows per
// 16-row step of its warp's tile (m16n8: rows g and g + 8, g = lane / 4;
// m8n8k4 quadpairs: rows (l & 1) + 4 (l >= 16) and 2 below). A reduction
// over an accumulator's columns then stays in registers: each thread
// combines its own columns, the lanes that share a row (a quad for m16n8,
// lanes 2 and 8 apart for quadpairs) exchange with two xor-shuffles, and
// warps that split the columns (warps_n > 1) meet in shared memory.
// tile.parallel bodies over the accumulator read a row's value from the
// thread's own register (the broadcast of the softmax's rescale). A copy
// of a row slice to a tensor tile (a log-sum-exp per row) has one writer
// per row: the holder whose lane bits of the row's sharers are clear, in
// warp column 0.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"
#include "contract/ElementConversion.h"

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

/// Whether `mma` is the m8n8k4 quadpair layout (forEachQuadpairOwned).
bool isQuadpairLayout(MmaLayoutAttr mma) { return mma.getM() == 8 && mma.getN() == 8; }

/// Rows of a warp's tile per step of the layout: both layouts cover 16
/// rows per step (m16n8's atom tile; a quadpair step of 16 x 16), of which
/// each thread holds 2.
constexpr int64_t kRowsPerStep = 16;

} // namespace

int64_t tessera::rowSliceSlots(int64_t rows, MmaLayoutAttr mma) {
  return rows / mma.getWarpsM() / kRowsPerStep * 2;
}

SmallVector<int32_t> tessera::rowSliceLaneMasks(MmaLayoutAttr mma) {
  // m16n8: lane = 4 g + t, the row is g, so lanes differing in t's two bits
  // (xor 1, xor 2) share it. Quadpairs: the row is set by lane bits 0, 2
  // and 4, the column by bits 1 and 3.
  if (isQuadpairLayout(mma))
    return {2, 8};
  return {1, 2};
}

namespace tessera::lowering {

int64_t KernelLowering::rowSliceSlot(ArrayRef<int64_t> shape, MmaLayoutAttr mma,
                                     int64_t accumulatorSlot) {
  int64_t tn = shape[1] / mma.getWarpsN();
  if (isQuadpairLayout(mma)) {
    // Slot (mi nt + ni) 8 + i holds row mi 16 + (i & 2) of the step.
    int64_t nt = tn / 16;
    return accumulatorSlot / (8 * nt) * 2 + ((accumulatorSlot % 8) & 2) / 2;
  }
  // Slot ((mi nt + ni) 2 + h) 2 holds row mi 16 + 8 h.
  int64_t nt = tn / mma.getN();
  return accumulatorSlot / (4 * nt) * 2 + (accumulatorSlot / 2) % 2;
}

void KernelLowering::forEachOwnedRow(int64_t rows, MmaLayoutAttr mma,
                                     llvm::function_ref<void(const Chunk &)> body) {
  // Only the rows of the 2-D layout matter; the column extent is any one
  // the layout divides.
  SmallVector<int64_t> shape = {rows, mma.getN() * mma.getWarpsN()};
  Value warp = warpId(), lane = laneId();
  Value rowBase;
  if (isQuadpairLayout(mma)) {
    Value high = arith::DivUIOp::create(b_, loc_, lane, cst(16));
    rowBase = add(quadpairBlockRow(shape, mma, warp, quadpairId(lane)),
                  add(arith::AndIOp::create(b_, loc_, lane, cst(1)), mul(high, cst(4))));
  } else {
    rowBase = add(warpTileRow(shape, mma, warp), arith::DivUIOp::create(b_, loc_, lane, cst(4)));
  }
  // The two rows of a step: 8 apart (m16n8) or 2 apart (quadpairs).
  int64_t second = isQuadpairLayout(mma) ? 2 : 8;
  for (int64_t slot = 0; slot < rowSliceSlots(rows, mma); ++slot) {
    Chunk chunk;
    chunk.coords = {add(rowBase, cst(slot / 2 * kRowsPerStep + slot % 2 * second))};
    chunk.firstSlot = slot;
    chunk.vector = 1;
    body(chunk);
  }
}

Value KernelLowering::shuffleXor(Value x, int32_t offset) {
  // shfl.sync moves 32 bits: a 16-bit value travels as its (exact) f32
  // extension; a 64-bit one as two halves (tessera-convert-to-nvvm).
  Type type = x.getType();
  bool narrow = type.getIntOrFloatBitWidth() < 32;
  Value sent = narrow ? arith::ExtFOp::create(b_, loc_, b_.getF32Type(), x).getResult() : x;
  Value got =
      gpu::ShuffleOp::create(b_, loc_, sent, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
  return narrow ? arith::TruncFOp::create(b_, loc_, type, got).getResult() : got;
}

LogicalResult KernelLowering::lowerRowReduce(ReduceOp reduce) {
  const BufferInfo &src = buffers_[reduce.getSrc()];
  const BufferInfo &dst = buffers_[reduce.getDst()];
  MmaLayoutAttr mma = dst.mma;
  if (src.mma != mma || src.type.getRank() != 2)
    return reduce.emitOpError() << "reduces into the row slice of " << mma
                                << " but its source is not a 2-D fragment of that layout";
  Type acc = dst.type.getElementType();
  ArrayRef<int64_t> shape = src.type.getShape();
  int64_t slots = rowSliceSlots(shape[0], mma);

  // 1. Each thread combines the columns it holds of each of its rows.
  ReduceKind kind = reduce.getKind();
  Value partials = allocReductionPartials(kind, acc, slots);
  forEachOwned(shape, {}, mma, [&](const Chunk &chunk) {
    Value slot = cst(rowSliceSlot(shape, mma, chunk.firstSlot));
    for (int64_t v = 0; v < chunk.vector; ++v) {
      Value x = loadReductionOperand(src, chunk.firstSlot + v, acc, kind);
      Value old = memref::LoadOp::create(b_, loc_, partials, ValueRange{slot});
      memref::StoreOp::create(b_, loc_, combineReduction(kind, old, x), partials, ValueRange{slot});
    }
  });

  // 2. The lanes of the warp that hold the same row: two xor-shuffles.
  SmallVector<Value> results = combineAcrossLanes(kind, partials, slots, rowSliceLaneMasks(mma));

  // 3. Warps that split the columns: each publishes its rows' partials in
  // the scratch (row r of warp column wn at [wn, r]; the lanes sharing a row
  // store the same value), and every thread combines the warp columns in
  // the same order, so all holders of a row agree bit for bit.
  if (mma.getWarpsN() > 1) {
    if (!reduce.getScratch())
      return reduce.emitOpError() << "needs scratch shared memory; run tile-plan-shared-memory";
    const BufferInfo &scratch = buffers_[reduce.getScratch()];
    Type scratchType = scratch.type.getElementType();
    Value warpColumn = arith::RemUIOp::create(b_, loc_, warpId(), cst(mma.getWarpsN()));
    SmallVector<Value> rowCoords;
    forEachOwnedRow(shape[0], mma, [&](const Chunk &chunk) { rowCoords.push_back(chunk.coords[0]); });
    barrier();
    for (int64_t s = 0; s < slots; ++s)
      memref::StoreOp::create(b_, loc_, convert(results[s], scratchType), scratch.memref,
                              ValueRange{warpColumn, rowCoords[s]});
    lastWasBarrier_ = false;
    barrier();
    for (int64_t s = 0; s < slots; ++s) {
      Value x = memref::LoadOp::create(b_, loc_, scratch.memref, ValueRange{cst(0), rowCoords[s]});
      for (int64_t w = 1; w < mma.getWarpsN(); ++w)
        x = combineReduction(kind, 
            x, memref::LoadOp::create(b_, loc_, scratch.memref, ValueRange{cst(w), rowCoords[s]}));
      results[s] = convert(x, acc);
    }
    // Later reductions reuse the scratch.
    lastWasBarrier_ = false;
    barrier();
  }

  // 4. Into the destination's slots, replacing or combining.
  storeReductionResults(reduce, dst.memref, results);
  return success();
}

LogicalResult KernelLowering::lowerRowSliceStore(CopyOp copy) {
  const BufferInfo &src = buffers_[copy.getSrc()];
  MmaLayoutAttr mma = src.mma;
  Type srcElt = src.type.getElementType();
  Type dstElt = cast<TileTensorType>(copy.getDst().getType()).getElementType();
  TensorInfo tensor = copyTensor(copy);
  SmallVector<Value> offsets = copyOffsets(copy);
  // The lanes that share a row differ in the bits of rowSliceLaneMasks; the
  // one with those bits clear writes it, in the warp of column 0.
  int32_t laneBits = 0;
  for (int32_t mask : rowSliceLaneMasks(mma))
    laneBits |= mask;
  Value writer = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq,
                                       arith::AndIOp::create(b_, loc_, laneId(), cst(laneBits)),
                                       cst(0));
  if (mma.getWarpsN() > 1) {
    Value warpColumn = arith::RemUIOp::create(b_, loc_, warpId(), cst(mma.getWarpsN()));
    writer = andi(writer, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, warpColumn,
                                                cst(0)));
  }
  ifThen(writer, [&] {
    forEachOwnedRow(src.type.getShape()[0], mma, [&](const Chunk &chunk) {
      Value x = memref::LoadOp::create(b_, loc_, src.memref, ValueRange{cst(chunk.firstSlot)});
      x = convertElement(b_, loc_, x, srcElt, dstElt, saturatesInto(dstElt));
      storeGlobal(tensor, tensorCoords(offsets, chunk), {x}, /*aligned=*/false);
    });
  });
  lastWasBarrier_ = false;
  return success();
}

} // namespace tessera::lowering
