//===- LowerAsyncCopy.cpp - cp.async copies of pipelined loops -----------===//
//
// The global-to-shared copies a pipelined loop issues ahead: cp.async with
// bounds checked per chunk, per edge tile or not at all, and the analyses
// that decide which (tiles inside their tensors, dimensions that move with
// the iteration, byte counts computed once per edge tile).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"
#include "backends/ElementConversion.h"

#include "backends/NvvmOps.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

namespace tessera::lowering {

Value KernelLowering::tileInBounds(CopyOp copy, ArrayRef<bool> only) {
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  Value inside;
  for (auto [d, offset, extent, dim] : llvm::enumerate(
           copy.getSrcOffsets(), copy.getTileType().getShape(), tensor.dims))
    if (only.empty() || only[d])
      inside = andi(inside, le(add(map_.lookupOrDefault(offset), cst(extent)), dim));
  return inside ? inside : arith::ConstantIntOp::create(b_, loc_, 1, 1).getResult();
}

SmallVector<bool> KernelLowering::varyingDims(PipelinedOp loop, CopyOp copy) {
  SmallVector<bool> varying;
  for (Value offset : copy.getSrcOffsets())
    varying.push_back(dependsOnAny(offset, {loop.getInductionVar()}));
  return varying;
}

Value KernelLowering::chunkBytes(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                                 ArrayRef<bool> varying, Value also) {
  int64_t eltBytes = getElementBytes(tensor.type.getElementType());
  auto checks = [&](size_t d) { return varying.empty() || !varying[d]; };
  Value rows;
  for (size_t d = 0; d + 1 < coords.size(); ++d)
    if (checks(d))
      rows = andi(rows, lt(coords[d], tensor.dims[d]));
  Value bytes = cst(vector * eltBytes);
  if (checks(coords.size() - 1)) {
    Value remaining = arith::SubIOp::create(b_, loc_, tensor.dims.back(), coords.back());
    bytes = mul(arith::MaxSIOp::create(
                    b_, loc_, arith::MinSIOp::create(b_, loc_, remaining, cst(vector)), cst(0)),
                cst(eltBytes));
  }
  if (also)
    rows = andi(rows, also);
  return rows ? arith::SelectOp::create(b_, loc_, rows, bytes, cst(0)).getResult() : bytes;
}

void KernelLowering::precomputeEdgeBytes(CopyOp copy, ArrayRef<bool> varying) {
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  DistributionAttr dist = copyDistribution(copy.getTileType(), tensor.type.getElementType());
  SmallVector<Value> offsets;
  for (Value v : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  Block *here = b_.getInsertionBlock();
  forEachChunk(copy.getTileType().getShape(), dist, [&](const Chunk &chunk) {
    if (b_.getInsertionBlock() != here)
      return; // a guarded last chunk: computed where it is issued
    Value bytes = toI32(
        chunkBytes(tensor, tensorCoords(offsets, chunk), dist.getVector(), varying));
    // Through an opaque move (inline PTX: no op is opaque to LLVM): LICM
    // would otherwise hoist the arithmetic out of every loop around, and the
    // counts would stay live (in registers) through the hot loop too.
    edgeBytes_[{copy.getOperation(), chunk.firstSlot}] =
        emitPtx(b_, loc_, "mov.b32 $0, $1;", "=r,r", {bytes}, {b_.getI32Type()},
                /*sideEffects=*/true)[0];
  });
}

void KernelLowering::lowerAsyncCopy(CopyOp copy, Value valid, CopyBounds bounds,
                                    ArrayRef<bool> varying) {
  const bool checked = bounds == CopyBounds::kAll;
  BufferType tile = copy.getTileType();
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  const BufferInfo &dst = buffers_[copy.getDst()];
  Type eltType = tensor.type.getElementType();
  int64_t eltBytes = getElementBytes(eltType);
  DistributionAttr dist = copyDistribution(tile, eltType);
  int64_t vector = dist.getVector();
  SmallVector<Value> offsets;
  for (Value v : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  bool async = vector * eltBytes == 16 &&
               isVectorAligned(tensor, copy.getSrcOffsets(), vector) &&
               (tile.getShape().back() * eltBytes) % 16 == 0;
  Value chained;
  int64_t chainedRow = 0;
  // A 16-byte cp.async of `bytes` (i32 or index; the rest zero-filled) from
  // `address`, or from the tensor's base where there are none (any valid
  // address will do).
  auto copySized = [&](const Chunk &chunk, Value address, Value bytes) {
    Value some = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sgt, bytes,
                                       bytes.getType().isIndex() ? cst(0) : cst32(0));
    Value safe = arith::SelectOp::create(b_, loc_, some, address, tensor.ptr);
    Value src = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), safe);
    if (bytes.getType().isIndex())
      bytes = toI32(bytes);
    // Inline PTX: nvvm.cp.async.shared.global takes a 64-bit shared pointer
    // (a cvt.u64.u32 of this 32-bit address before every copy).
    ptx("cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r",
        {chunkSharedAddress(dst, chunk), src, bytes});
  };
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    SmallVector<Value> coords = tensorCoords(offsets, chunk);
    if (!async) {
      // Not provably 16-byte aligned: synchronous loads (still ahead).
      SmallVector<Value> values = loadGlobal(tensor, coords, vector, false);
      for (int64_t v = 0; v < vector; ++v) {
        SmallVector<Value> at(chunk.coords);
        at.back() = add(at.back(), cst(v));
        memref::StoreOp::create(b_, loc_,
                                convertElement(b_, loc_, values[v], tensor.type.getElementType(),
                                               dst.type.getElementType(),
                                               saturatesInto(dst.type.getElementType())),
                                dst.memref, sharedIndices(dst, at));
      }
      return;
    }
    if (!checked) {
      // The tile lies inside the tensor (tileInBounds), or along the
      // varying dimensions (kInvariant): 16 bytes, no checks along those.
      // Addressed as the tile's origin, the thread's first chunk in it (the
      // same every iteration) and whole rows: no product per chunk.
      // Each chunk steps from the one before, so the steps (equal for
      // equal row shifts) share one register.
      Value address;
      if (chunk.shift.size() == 2 && offsets.size() == 2) {
        if (chunk.shift[0] == 0 || !chained) {
          chained = elementAddress(tensor, chunk.base, elementAddress(tensor, offsets));
          chainedRow = 0;
        }
        if (chunk.shift[0] != chainedRow)
          chained = elementAddress(tensor, {cst(chunk.shift[0] - chainedRow), cst(0)}, chained);
        chainedRow = chunk.shift[0];
        address = chained;
      } else {
        address = elementAddress(tensor, coords);
      }
      if (bounds == CopyBounds::kInvariant) {
        // Along the dimensions the iteration does not move, the chunk's
        // byte count is the same every iteration: computed before the loop
        // (precomputeEdgeBytes) where it can be, then one select a chunk.
        auto known = edgeBytes_.find({copy.getOperation(), chunk.firstSlot});
        Value bytes = known != edgeBytes_.end()
                          ? known->second
                          : toI32(chunkBytes(tensor, coords, vector, varying));
        copySized(chunk, address, bytes);
        return;
      }
      Value src = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), address);
      // Inline PTX: as copySized's cp.async (a 64-bit pointer in the op).
      ptx("cp.async.cg.shared.global [$0], [$1], 16;", "r,l", {chunkSharedAddress(dst, chunk), src});
      return;
    }
    // cp.async.cg 16 bytes with src-size: bytes past the tensor (or of an
    // iteration past the loop) are zero-filled and never read.
    Value bytes = chunkBytes(tensor, coords, vector, /*varying=*/{}, valid);
    copySized(chunk, elementAddress(tensor, coords), bytes);
  });
}

} // namespace tessera::lowering
