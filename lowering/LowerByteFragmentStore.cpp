//===- LowerByteFragmentStore.cpp - 1-byte accumulator-layout stores ------===//
//
// Stores of m16n8-layout fragments of 1-byte elements (FP8, int8 outputs):
// a lane holds pairs of 2 bytes, 8 columns apart, so stored as they are a
// warp writes 8 bytes of each 32-byte sector per instruction. The four
// lanes of a quad exchange them (a 4 x 4 transpose of 32-bit words, then
// byte permutes) so that each lane holds 16 consecutive bytes of its row:
// one 16-byte store per lane, whole sectors per quad.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"
#include "contract/ElementConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

QuadLanes KernelLowering::quadLanes() {
  Type i32 = b_.getI32Type();
  QuadLanes quad;
  quad.index = arith::RemUIOp::create(b_, loc_, laneId(), cst(4));
  Value index32 = toI32(quad.index);
  for (int64_t bit = 0; bit < 2; ++bit)
    quad.bit[bit] = arith::CmpIOp::create(
        b_, loc_, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b_, loc_, index32,
                              arith::ConstantIntOp::create(b_, loc_, i32, 1 << bit)),
        arith::ConstantIntOp::create(b_, loc_, i32, 0));
  return quad;
}

Value KernelLowering::byteFragmentChunk(const BufferInfo &frag, Type dstElt,
                                        const QuadLanes &quad, int64_t mi, int64_t h,
                                        int64_t g) {
  Type i8 = b_.getI8Type(), i32 = b_.getI32Type();
  auto bytes4 = VectorType::get({4}, i8);
  ArrayRef<int64_t> shape = frag.type.getShape();
  int64_t nt = shape[1] / frag.mma.getWarpsN() / 8;
  Type srcElt = frag.type.getElementType();
  // W[k]: this lane's pairs of atom tiles 8 g + 2 k and 8 g + 2 k + 1
  // (columns 16 k + 2 t, + 1 and 16 k + 8 + 2 t, + 1 of the group).
  SmallVector<Value> words;
  for (int64_t k = 0; k < 4; ++k) {
    SmallVector<Value> four;
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        int64_t slot = ((mi * nt + 8 * g + 2 * k + j) * 2 + h) * 2 + e;
        Value v = memref::LoadOp::create(b_, loc_, frag.memref, ValueRange{cst(slot)});
        four.push_back(convertElement(b_, loc_, v, srcElt, dstElt, saturatesInto(dstElt)));
      }
    words.push_back(LLVM::BitcastOp::create(b_, loc_, i32, packVector(four)));
  }
  // The 4 x 4 transpose within the quad (lowerMmaFragmentStore's butterfly):
  // lane t ends with Q[s] = W[t] of lane s, its pairs of tiles 2 t and
  // 2 t + 1, which are columns 16 t + 2 s, + 1, + 8, + 9.
  for (int64_t bit = 0; bit < 2; ++bit) {
    int64_t m = int64_t(1) << bit;
    for (int64_t lo = 0; lo < 4; ++lo) {
      if (lo & m)
        continue;
      int64_t hi = lo | m;
      Value send = arith::SelectOp::create(b_, loc_, quad.bit[bit], words[lo], words[hi]);
      Value got = gpu::ShuffleOp::create(b_, loc_, send, m, 32, gpu::ShuffleMode::XOR)
                      .getShuffleResult();
      words[lo] = arith::SelectOp::create(b_, loc_, quad.bit[bit], got, words[lo]);
      words[hi] = arith::SelectOp::create(b_, loc_, quad.bit[bit], words[hi], got);
    }
  }
  // Byte permutes (prmt) into column order: columns 4 c .. 4 c + 3 of the
  // lane's 16 are the low (c < 2) or high (c >= 2) halves of Q[2 (c mod 2)]
  // and Q[2 (c mod 2) + 1].
  SmallVector<Value> q;
  for (Value w : words)
    q.push_back(LLVM::BitcastOp::create(b_, loc_, bytes4, w));
  SmallVector<Value> ordered;
  for (int64_t c = 0; c < 4; ++c) {
    int64_t half = c < 2 ? 0 : 2, pair = 2 * (c % 2);
    Value bytes = LLVM::ShuffleVectorOp::create(
        b_, loc_, q[pair], q[pair + 1],
        ArrayRef<int32_t>{int32_t(half), int32_t(half + 1), int32_t(4 + half),
                          int32_t(5 + half)});
    ordered.push_back(LLVM::BitcastOp::create(b_, loc_, i32, bytes));
  }
  return packVector(ordered);
}

bool KernelLowering::lowerByteFragmentStore(CopyOp copy) {
  std::optional<MmaStoreTiles> tiles = mmaFragmentStoreTiles(copy, 1);
  if (!tiles || tiles->nt % 8 != 0)
    return false;
  auto dstTensor = cast<TileTensorType>(copy.getDst().getType());
  const BufferInfo &frag = buffers_[copy.getSrc()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  int64_t mt = tiles->mt, nt = tiles->nt;
  TensorInfo tensor = copyTensor(copy);
  Type elt = dstTensor.getElementType();
  bool aligned = isVectorAligned(tensor, copy.getTileOffsets(), 16);
  SmallVector<Value> offsets = copyOffsets(copy);
  Value warp = warpId();
  QuadLanes quad = quadLanes();
  Value rowBase =
      add(warpTileRow(shape, mma, warp), arith::DivUIOp::create(b_, loc_, laneId(), cst(4)));
  Value colBase = add(warpTileCol(shape, mma, warp), mul(quad.index, cst(16)));
  auto bytes16 = VectorType::get({16}, b_.getI8Type());
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t g = 0; g < nt / 8; ++g) {
        SmallVector<Value> coords = {add(offsets[0], add(rowBase, cst(mi * 16 + 8 * h))),
                                     add(offsets[1], add(colBase, cst(g * 64)))};
        Value chunk = byteFragmentChunk(frag, elt, quad, mi, h, g);
        storeGlobal(tensor, coords, unpackVector(LLVM::BitcastOp::create(b_, loc_, bytes16, chunk)),
                    aligned);
      }
  noteSharedAccess();
  return true;
}

} // namespace tessera::lowering
