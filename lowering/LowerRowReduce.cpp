//===- LowerRowReduce.cpp - Row slices of MMA accumulator layouts ---------===//
//
// This file implements the row-slice layout of an MMA accumulator layout
// and the reductions into it. A 1-D fragment of R elements in the row
// slice of `#tile.mma_layout<...>` holds, in each thread, exactly the rows
// that thread owns in an R-row accumulator of that layout, as the layout's
// lane and register bases place them: per step of its warp's tile, one row
// per combination of its row register bits (m16n8: rows g and g + 8,
// g = lane / 4; m8n8k4 quadpairs: rows (l & 1) + 4 (l >= 16) and 2 below;
// a row per lane: one). A reduction over an accumulator's columns then
// stays in registers: each thread combines its own columns, the lanes that
// share a row (those differing in lane bits whose bases are columns: a
// quad for m16n8) exchange with xor-shuffles, and warps that split the
// columns (warps_n > 1) meet in shared memory.
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

/// The register bases of `mma` that move rows, in register-bit order: a
/// thread holds 2^size rows of each step.
SmallVector<int64_t> rowRegisterBases(MmaLayoutAttr mma) {
  SmallVector<int64_t> bases;
  for (int64_t basis : mma.getRegisters())
    if (isRowBasis(basis))
      bases.push_back(basis);
  return bases;
}

} // namespace

int64_t tessera::rowSliceSlots(int64_t rows, MmaLayoutAttr mma) {
  return rows / mma.getWarpsM() / mma.getM() << rowRegisterBases(mma).size();
}

SmallVector<int32_t> tessera::rowSliceLaneMasks(MmaLayoutAttr mma) {
  SmallVector<int32_t> masks;
  for (auto [bit, basis] : llvm::enumerate(mma.getLanes()))
    if (!isRowBasis(basis))
      masks.push_back(int32_t(1) << bit);
  return masks;
}

int64_t tessera::mmaVectorRegisters(MmaLayoutAttr mma) {
  int64_t vector = 1;
  for (int64_t basis : mma.getRegisters()) {
    if (basisCols(basis) != vector)
      break;
    vector *= 2;
  }
  return vector;
}

int64_t tessera::mmaRegisterOffset(MmaLayoutAttr mma, int64_t reg, bool rows) {
  int64_t offset = 0;
  for (auto [bit, basis] : llvm::enumerate(mma.getRegisters()))
    if (reg >> bit & 1)
      offset += rows ? basisRows(basis) : basisCols(basis);
  return offset;
}

namespace tessera::lowering {

int64_t KernelLowering::rowSliceSlot(ArrayRef<int64_t> shape, MmaLayoutAttr mma,
                                     int64_t accumulatorSlot) {
  // Slot (mi nt + ni) perStep + r holds row step mi and, among the rows of
  // a step, the one r's row bits select.
  int64_t perStep = mma.registersPerStep();
  int64_t nt = shape[1] / mma.getWarpsN() / mma.getN();
  int64_t mi = accumulatorSlot / perStep / nt, r = accumulatorSlot % perStep;
  int64_t rowBits = 0, row = 0;
  for (auto [bit, basis] : llvm::enumerate(mma.getRegisters()))
    if (isRowBasis(basis))
      row |= (r >> bit & 1) << rowBits++;
  return (mi << rowBits) + row;
}

void KernelLowering::forEachOwnedRow(int64_t rows, MmaLayoutAttr mma,
                                     llvm::function_ref<void(const Chunk &)> body) {
  // Only the rows of the 2-D layout matter; the column extent is any one
  // the layout divides.
  SmallVector<int64_t> shape = {rows, mma.getN() * mma.getWarpsN()};
  Value rowBase = add(warpTileRow(shape, mma, warpId()), laneOffset(laneId(), mma, /*rows=*/true));
  SmallVector<int64_t> rowBases = rowRegisterBases(mma);
  int64_t perStep = int64_t(1) << rowBases.size();
  for (int64_t slot = 0; slot < rowSliceSlots(rows, mma); ++slot) {
    int64_t offset = slot / perStep * mma.getM();
    for (auto [bit, basis] : llvm::enumerate(rowBases))
      if (slot % perStep >> bit & 1)
        offset += basis;
    Chunk chunk;
    chunk.coords = {add(rowBase, cst(offset))};
    chunk.firstSlot = slot;
    chunk.vector = 1;
    body(chunk);
  }
}

Value KernelLowering::shuffleXor(Value x, int32_t offset) {
  // shfl.sync moves 32 bits: a 16-bit value travels as its (exact) f32
  // extension; a 64-bit one as two halves (tessera-convert-to-nvvm).
  Type type = x.getType();
  bool narrow = isa<FloatType>(type) && type.getIntOrFloatBitWidth() < 32;
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
    noteSharedAccess();
    barrier();
    for (int64_t s = 0; s < slots; ++s) {
      Value x = memref::LoadOp::create(b_, loc_, scratch.memref, ValueRange{cst(0), rowCoords[s]});
      for (int64_t w = 1; w < mma.getWarpsN(); ++w)
        x = combineReduction(kind, 
            x, memref::LoadOp::create(b_, loc_, scratch.memref, ValueRange{cst(w), rowCoords[s]}));
      results[s] = convert(x, acc);
    }
    // Later reductions reuse the scratch.
    noteSharedAccess();
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
  noteSharedAccess();
  return success();
}

} // namespace tessera::lowering
