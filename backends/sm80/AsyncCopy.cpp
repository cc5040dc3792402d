//===- AsyncCopy.cpp - cp.async copies of pipelined loops ----------------===//
//
// The global-to-shared copies the cp.async strategy issues ahead: cp.async
// with bounds checked per chunk, per edge tile or not at all, and the
// analyses that decide which (tiles inside their tensors, dimensions that
// move with the iteration, byte counts computed once per edge tile).
//
//===----------------------------------------------------------------------===//

#include "backends/sm80/AsyncCopy.h"

#include "contract/ElementConversion.h"
#include "contract/NvvmOps.h"
#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera::sm80 {

using namespace mlir;
using namespace tessera::lowering;
using namespace tessera::tile;
using lowering::BufferInfo;
using lowering::Chunk;
using lowering::TensorInfo;


Value AsyncCopies::tileInBounds(CopyOp copy, ArrayRef<bool> only) {
  TensorInfo tensor = kl.copyTensor(copy);
  SmallVector<Value> offsets = kl.copyOffsets(copy);
  Value inside;
  for (auto [d, offset, extent, dim] :
       llvm::enumerate(offsets, copy.getTileType().getShape(), tensor.dims))
    if (only.empty() || only[d])
      inside = kl.andi(inside, kl.le(kl.add(offset, kl.cst(extent)), dim));
  return inside ? inside : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
}

SmallVector<bool> AsyncCopies::varyingDims(PipelinedOp loop, CopyOp copy) {
  SmallVector<bool> varying;
  for (Value offset : copy.getTileOffsets())
    varying.push_back(kl.dependsOnAny(offset, {loop.getInductionVar()}));
  return varying;
}

Value AsyncCopies::chunkBytes(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                                 ArrayRef<bool> varying, Value also) {
  int64_t eltBytes = getElementBytes(tensor.type.getElementType());
  auto checks = [&](size_t d) { return varying.empty() || !varying[d]; };
  Value rows;
  for (size_t d = 0; d + 1 < coords.size(); ++d)
    if (checks(d))
      rows = kl.andi(rows, kl.lt(coords[d], tensor.dims[d]));
  Value bytes = kl.cst(vector * eltBytes);
  if (checks(coords.size() - 1)) {
    Value remaining = arith::SubIOp::create(b, loc, tensor.dims.back(), coords.back());
    bytes = kl.mul(arith::MaxSIOp::create(
                    b, loc, arith::MinSIOp::create(b, loc, remaining, kl.cst(vector)), kl.cst(0)),
                kl.cst(eltBytes));
  }
  if (also)
    rows = kl.andi(rows, also);
  return rows ? arith::SelectOp::create(b, loc, rows, bytes, kl.cst(0)).getResult() : bytes;
}

void AsyncCopies::precomputeEdgeBytes(CopyOp copy, ArrayRef<bool> varying) {
  TensorInfo tensor = kl.copyTensor(copy);
  DistributionAttr dist = kl.copyDistribution(copy.getTileType(), tensor.type.getElementType());
  SmallVector<Value> offsets = kl.copyOffsets(copy);
  Block *here = b.getInsertionBlock();
  kl.forEachChunk(copy.getTileType().getShape(), dist, [&](const Chunk &chunk) {
    if (b.getInsertionBlock() != here)
      return; // a guarded last chunk: computed where it is issued
    Value bytes = kl.toI32(
        chunkBytes(tensor, kl.tensorCoords(offsets, chunk), dist.getVector(), varying));
    // Through an opaque move (inline PTX: no op is opaque to LLVM): LICM
    // would otherwise hoist the arithmetic out of every loop around, and the
    // counts would stay live (in registers) through the hot loop too.
    edgeBytes_[{copy.getOperation(), chunk.firstSlot}] =
        emitPtx(b, loc, "mov.b32 $0, $1;", "=r,r", {bytes}, {b.getI32Type()},
                /*sideEffects=*/true)[0];
  });
}

void AsyncCopies::lowerAsyncCopy(CopyOp copy, Value valid, CopyBounds bounds,
                                    ArrayRef<bool> varying) {
  const bool checked = bounds == CopyBounds::kAll;
  BufferType tile = copy.getTileType();
  TensorInfo tensor = kl.copyTensor(copy);
  const BufferInfo &dst = kl.buffer(copy.getDst());
  Type eltType = tensor.type.getElementType();
  int64_t eltBytes = getElementBytes(eltType);
  DistributionAttr dist = kl.copyDistribution(tile, eltType);
  int64_t vector = dist.getVector();
  SmallVector<Value> offsets = kl.copyOffsets(copy);
  // cp.async moves bytes: a copy that converts elements goes through
  // registers.
  bool async = vector * eltBytes == 16 && eltType == dst.type.getElementType() &&
               kl.isVectorAligned(tensor, copy.getTileOffsets(), vector) &&
               (tile.getShape().back() * eltBytes) % 16 == 0;
  Value chained;
  int64_t chainedRow = 0;
  // A 16-byte cp.async of `bytes` (i32 or index; the rest zero-filled) from
  // `address`, or from the tensor's base where there are none (any valid
  // address will do).
  auto copySized = [&](const Chunk &chunk, Value address, Value bytes) {
    Value some = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, bytes,
                                       bytes.getType().isIndex() ? kl.cst(0) : kl.cst32(0));
    Value safe = arith::SelectOp::create(b, loc, some, address, tensor.ptr);
    Value src = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), safe);
    if (bytes.getType().isIndex())
      bytes = kl.toI32(bytes);
    // Inline PTX: nvvm.cp.async.shared.global takes a 64-bit shared pointer
    // (a cvt.u64.u32 of this 32-bit address before every copy).
    kl.ptx("cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r",
        {kl.chunkSharedAddress(dst, chunk), src, bytes});
  };
  kl.forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    SmallVector<Value> coords = kl.tensorCoords(offsets, chunk);
    if (!async) {
      // Not provably 16-byte aligned: synchronous loads (still ahead).
      SmallVector<Value> values = kl.loadGlobal(tensor, coords, vector, false);
      for (int64_t v = 0; v < vector; ++v) {
        SmallVector<Value> at(chunk.coords);
        at.back() = kl.add(at.back(), kl.cst(v));
        memref::StoreOp::create(b, loc,
                                convertElement(b, loc, values[v], tensor.type.getElementType(),
                                               dst.type.getElementType(),
                                               saturatesInto(dst.type.getElementType())),
                                dst.memref, kl.sharedIndices(dst, at));
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
          chained = kl.elementAddress(tensor, chunk.base, kl.elementAddress(tensor, offsets));
          chainedRow = 0;
        }
        if (chunk.shift[0] != chainedRow)
          chained = kl.elementAddress(tensor, {kl.cst(chunk.shift[0] - chainedRow), kl.cst(0)}, chained);
        chainedRow = chunk.shift[0];
        address = chained;
      } else {
        address = kl.elementAddress(tensor, coords);
      }
      if (bounds == CopyBounds::kInvariant) {
        // Along the dimensions the iteration does not move, the chunk's
        // byte count is the same every iteration: computed before the loop
        // (precomputeEdgeBytes) where it can be, then one select a chunk.
        auto known = edgeBytes_.find({copy.getOperation(), chunk.firstSlot});
        Value bytes = known != edgeBytes_.end()
                          ? known->second
                          : kl.toI32(chunkBytes(tensor, coords, vector, varying));
        copySized(chunk, address, bytes);
        return;
      }
      Value src = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), address);
      // Inline PTX: as copySized's cp.async (a 64-bit pointer in the op).
      kl.ptx("cp.async.cg.shared.global [$0], [$1], 16;", "r,l", {kl.chunkSharedAddress(dst, chunk), src});
      return;
    }
    // cp.async.cg 16 bytes with src-size: bytes past the tensor (or of an
    // iteration past the loop) are zero-filled and never read.
    Value bytes = chunkBytes(tensor, coords, vector, /*varying=*/{}, valid);
    copySized(chunk, kl.elementAddress(tensor, coords), bytes);
  });
}

} // namespace tessera::sm80
