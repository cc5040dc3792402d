//===- LowerLayouts.cpp - Fragment layouts and addressing ----------------===//
//
// Where a thread's elements of a tile are: the chunks of a distribution,
// the accumulator layouts of the MMA atoms (m16n8 tiles, m8n8k4
// quadpairs), shared-buffer indices and addresses with the swizzle, and
// global element addresses with their bounds.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"
#include "contract/ElementConversion.h"
#include "contract/NvvmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

void KernelLowering::forEachChunk(ArrayRef<int64_t> shape, DistributionAttr dist,
                                  llvm::function_ref<void(const Chunk &)> body) {
  int64_t numElements = std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                        std::multiplies<int64_t>());
  int64_t threads = dist.getThreads(), vector = dist.getVector();
  int64_t chunks = llvm::divideCeil(numElements, threads * vector);
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  // A replicated layout (one "thread") is iterated whole by every thread.
  Value thread = threads == 1 ? cst(0) : threadId_;
  // Each chunk after the first moves whole rows when a chunk's elements
  // (threads x vector) fill whole rows of the leading dimension.
  bool rowSteps = shape.size() >= 2 && (threads * vector) % strides[0] == 0;
  SmallVector<Value> firstCoords;
  for (int64_t c = 0; c < chunks; ++c) {
    Value first = mul(add(cst(c * threads), thread), cst(vector));
    Chunk chunk;
    chunk.firstSlot = c * vector;
    chunk.vector = vector;
    for (auto [extent, stride] : llvm::zip(shape, strides)) {
      Value coord = b_.createOrFold<arith::DivUIOp>(loc_, first, cst(stride));
      chunk.coords.push_back(stride * extent == numElements
                                 ? coord
                                 : b_.createOrFold<arith::RemUIOp>(loc_, coord, cst(extent)));
    }
    if (c == 0)
      firstCoords = chunk.coords;
    if (rowSteps) {
      chunk.base = firstCoords;
      chunk.shift.assign(shape.size(), 0);
      chunk.shift[0] = c * threads * vector / strides[0];
    }
    if ((c + 1) * threads * vector <= numElements) {
      body(chunk);
      continue;
    }
    // The last chunk overhangs the tile for some threads.
    auto guard = scf::IfOp::create(b_, loc_, lt(first, cst(numElements)), /*withElse=*/false);
    OpBuilder::InsertionGuard insertion(b_);
    b_.setInsertionPointToStart(guard.thenBlock());
    body(chunk);
  }
}

Value KernelLowering::warpId() { return arith::DivUIOp::create(b_, loc_, threadId_, cst(32)); }

Value KernelLowering::laneId() { return arith::RemUIOp::create(b_, loc_, threadId_, cst(32)); }

Value KernelLowering::warpTileRow(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp) {
  return mul(arith::DivUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())),
             cst(shape[0] / mma.getWarpsM()));
}

Value KernelLowering::warpTileCol(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp) {
  return mul(arith::RemUIOp::create(b_, loc_, warp, cst(mma.getWarpsN())),
             cst(shape[1] / mma.getWarpsN()));
}

Value KernelLowering::laneOffset(Value lane, MmaLayoutAttr mma, bool rows) {
  // Runs of consecutive lane bits whose bases double from bit to bit (m16n8's
  // rows: lane bits 2-4 with bases r1, r2, r4) add one field of the lane
  // times the run's first basis.
  ArrayRef<int64_t> lanes = mma.getLanes();
  auto offset = [&](int64_t bit) { return rows ? basisRows(lanes[bit]) : basisCols(lanes[bit]); };
  Value sum = cst(0);
  for (int64_t lo = 0; lo < 5;) {
    if (offset(lo) == 0) {
      ++lo;
      continue;
    }
    int64_t hi = lo;
    while (hi + 1 < 5 && offset(hi + 1) == 2 * offset(hi))
      ++hi;
    Value field = lane;
    if (lo > 0)
      field = arith::DivUIOp::create(b_, loc_, field, cst(int64_t(1) << lo));
    if (hi < 4)
      field = arith::RemUIOp::create(b_, loc_, field, cst(int64_t(1) << (hi - lo + 1)));
    sum = add(sum, mul(field, cst(offset(lo))));
    lo = hi + 1;
  }
  return sum;
}

void KernelLowering::forEachOwned(ArrayRef<int64_t> shape, DistributionAttr dist,
                                  MmaLayoutAttr mma,
                                  llvm::function_ref<void(const Chunk &)> body) {
  if (!mma) {
    forEachChunk(shape, dist, body);
    return;
  }
  if (shape.size() == 1) {
    forEachOwnedRow(shape[0], mma, body);
    return;
  }
  // A warp's tile is mt x nt steps of the layout, row steps outermost; a
  // thread holds registersPerStep() registers of each, and its registers
  // whose bases are c1, c2, ... hold consecutive columns (one chunk).
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / mma.getM(), nt = tn / mma.getN();
  int64_t perStep = mma.registersPerStep(), vector = mmaVectorRegisters(mma);
  Value warp = warpId(), lane = laneId();
  Value rowBase = add(warpTileRow(shape, mma, warp), laneOffset(lane, mma, /*rows=*/true));
  Value colBase = add(warpTileCol(shape, mma, warp), laneOffset(lane, mma, /*rows=*/false));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t ni = 0; ni < nt; ++ni)
      for (int64_t r = 0; r < perStep; r += vector) {
        Chunk chunk;
        chunk.coords = {add(rowBase, cst(mi * mma.getM() + mmaRegisterOffset(mma, r, true))),
                        add(colBase, cst(ni * mma.getN() + mmaRegisterOffset(mma, r, false)))};
        chunk.firstSlot = (mi * nt + ni) * perStep + r;
        chunk.vector = vector;
        body(chunk);
      }
}

SmallVector<Value> KernelLowering::sharedIndices(const BufferInfo &info, ArrayRef<Value> coords) {
  SmallVector<Value> indices(coords.begin(), coords.end());
  const SharedSwizzle &swizzle = info.swizzle;
  if (swizzle.rowBytes != 0) {
    // Chunk c of row r of a panel is stored at chunk c ^ ((r / L) mod C),
    // with C chunks per row and L = 128 / rowBytes rows per 128-byte line:
    // the eight rows an ldmatrix (or a wgmma core matrix) reads hit eight
    // distinct 16-byte bank groups.
    int64_t perChunk = 16 / getElementBytes(info.type.getElementType());
    int64_t chunks = swizzle.rowBytes / 16;
    int64_t panelColumns = swizzle.rowBytes / getElementBytes(info.type.getElementType());
    Value row = coords[0], col = coords[1];
    Value panel, inPanel = col;
    if (swizzle.panels > 1) {
      panel = arith::DivUIOp::create(b_, loc_, col, cst(panelColumns));
      inPanel = arith::RemUIOp::create(b_, loc_, col, cst(panelColumns));
    }
    Value phase = arith::RemUIOp::create(
        b_, loc_, arith::DivUIOp::create(b_, loc_, row, cst(128 / swizzle.rowBytes)), cst(chunks));
    Value chunk = arith::DivUIOp::create(b_, loc_, inPanel, cst(perChunk));
    Value within = arith::RemUIOp::create(b_, loc_, inPanel, cst(perChunk));
    Value swizzled = arith::XOrIOp::create(b_, loc_, chunk, phase);
    indices = {row, add(mul(swizzled, cst(perChunk)), within)};
    if (panel)
      indices.insert(indices.begin(), panel);
  }
  if (info.stages > 1)
    indices.insert(indices.begin(), info.stage);
  return indices;
}

Value KernelLowering::sharedByteOffset(const BufferInfo &info, ArrayRef<Value> indices) {
  // The memref's trailing extents (a staged buffer's leading stage index is
  // in `indices` only when the buffer is addressed with it).
  ArrayRef<int64_t> shape = cast<MemRefType>(info.memref.getType()).getShape().take_back(
      indices.size());
  Value linear = indices[0];
  for (size_t i = 1; i < indices.size(); ++i)
    linear = add(mul(linear, cst(shape[i])), indices[i]);
  return mul(linear, cst(getElementBytes(info.type.getElementType())));
}

Value KernelLowering::sharedAddress(const BufferInfo &info, ArrayRef<Value> coords) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, info.memref);
  Value bytes = add(base, sharedByteOffset(info, sharedIndices(info, coords)));
  return arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), bytes);
}

Value KernelLowering::sharedAddress32(const BufferInfo &info, ArrayRef<Value> coords,
                                      ArrayRef<int64_t> shift) {
  Type i32 = b_.getI32Type();
  int64_t eltBytes = getElementBytes(info.type.getElementType());
  ArrayRef<int64_t> tileShape = info.type.getShape();
  SmallVector<Value> at(coords.begin(), coords.end());
  int64_t delta = 0;
  if (llvm::any_of(shift, [](int64_t by) { return by != 0; })) {
    const SharedSwizzle &swizzle = info.swizzle;
    assert(tileShape.size() == 2 && shift.size() == 2 && "sharedAddress32 takes 2-D tiles");
    // Row and column strides of a constant shift, 0 where the shift must
    // move the coordinates instead: the swizzle repeats every 8 rows
    // (128 / rowBytes rows per line, rowBytes / 16 phases) and panels are
    // rows x rowBytes apart.
    int64_t rowStride = tileShape[1] * eltBytes, panelColumns = tileShape[1], panelStride = 0;
    if (swizzle.rowBytes != 0) {
      rowStride = shift[0] % 8 == 0 ? swizzle.rowBytes : 0;
      panelColumns = swizzle.rowBytes / eltBytes;
      panelStride = tileShape[0] * swizzle.rowBytes;
    }
    if (rowStride != 0)
      delta += shift[0] * rowStride;
    else
      at[0] = add(at[0], cst(shift[0]));
    if (swizzle.rowBytes == 0)
      delta += shift[1] * eltBytes;
    else if (shift[1] % panelColumns == 0)
      delta += shift[1] / panelColumns * panelStride;
    else
      at[1] = add(at[1], cst(shift[1]));
  }
  // The element's offset within one stage.
  BufferInfo unstaged = info;
  unstaged.stages = 1;
  Value offset = toI32(sharedByteOffset(info, sharedIndices(unstaged, at)));
  // The stage's base: the buffer's address plus whole stages.
  Value base = toI32(memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, info.memref));
  if (info.stages > 1) {
    int64_t stageBytes = eltBytes;
    for (int64_t extent : cast<MemRefType>(info.memref.getType()).getShape().drop_front())
      stageBytes *= extent;
    base = arith::AddIOp::create(b_, loc_, base, toI32(mul(info.stage, cst(stageBytes))));
  }
  Value address = arith::AddIOp::create(b_, loc_, base, offset);
  if (delta != 0)
    address = arith::AddIOp::create(
        b_, loc_, address, arith::ConstantIntOp::create(b_, loc_, i32, delta));
  return address;
}

Value KernelLowering::packVector(ArrayRef<Value> values) {
  Type i32 = b_.getI32Type();
  Value vec = LLVM::PoisonOp::create(
      b_, loc_, VectorType::get({int64_t(values.size())}, values.front().getType()));
  for (auto [i, value] : llvm::enumerate(values))
    vec = LLVM::InsertElementOp::create(b_, loc_, vec, value,
                                        arith::ConstantIntOp::create(b_, loc_, i32, i));
  return vec;
}

SmallVector<Value> KernelLowering::unpackVector(Value vec) {
  Type i32 = b_.getI32Type();
  SmallVector<Value> values;
  for (int64_t i = 0; i < cast<VectorType>(vec.getType()).getNumElements(); ++i)
    values.push_back(LLVM::ExtractElementOp::create(
        b_, loc_, vec, arith::ConstantIntOp::create(b_, loc_, i32, i)));
  return values;
}

Value KernelLowering::sharedPointer(const BufferInfo &info, ArrayRef<Value> coords) {
  return LLVM::IntToPtrOp::create(b_, loc_, LLVM::LLVMPointerType::get(b_.getContext(), 3),
                                  sharedAddress(info, coords));
}

bool KernelLowering::isSharedVector(const BufferInfo &info, int64_t vector) {
  int64_t eltBytes = getElementBytes(info.type.getElementType());
  int64_t bytes = vector * eltBytes;
  // One 4-, 8- or 16-byte access inside one row and one 16-byte chunk (the
  // unit the swizzle permutes), aligned: rows are whole vectors and buffers
  // start 128-byte aligned.
  return vector > 1 && (bytes == 4 || bytes == 8 || bytes == 16) &&
         (info.type.getShape().back() * eltBytes) % bytes == 0;
}

void KernelLowering::storeShared(const BufferInfo &info, ArrayRef<Value> coords,
                                 ArrayRef<Value> values) {
  int64_t vector = values.size();
  if (!isSharedVector(info, vector)) {
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords);
      at.back() = add(at.back(), cst(v));
      memref::StoreOp::create(b_, loc_, values[v], info.memref, sharedIndices(info, at));
    }
    return;
  }
  LLVM::StoreOp::create(b_, loc_, packVector(values), sharedPointer(info, coords),
                        vector * getElementBytes(info.type.getElementType()));
}

SmallVector<Value> KernelLowering::loadShared(const BufferInfo &info, ArrayRef<Value> coords,
                                              int64_t vector) {
  SmallVector<Value> values;
  if (!isSharedVector(info, vector)) {
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords);
      at.back() = add(at.back(), cst(v));
      values.push_back(memref::LoadOp::create(b_, loc_, info.memref, sharedIndices(info, at)));
    }
    return values;
  }
  auto vecType = VectorType::get({vector}, getStorageType(info.type.getElementType()));
  return unpackVector(LLVM::LoadOp::create(b_, loc_, vecType, sharedPointer(info, coords),
                                           vector * getElementBytes(info.type.getElementType())));
}

DistributionAttr KernelLowering::copyDistribution(BufferType tile, Type globalElementType) {
  int64_t vector = std::max<int64_t>(1, caps_.globalVectorBytes / getElementBytes(globalElementType));
  int64_t threads = kernel_.getThreads();
  while (vector > 1 &&
         (tile.getShape().back() % vector != 0 || tile.getNumElements() < threads * vector))
    vector /= 2;
  return DistributionAttr::get(b_.getContext(), threads, vector);
}

bool KernelLowering::isVectorAligned(const TensorInfo &tensor, ValueRange offsets,
                                     int64_t vector) {
  if (vector == 1)
    return true;
  if (knownDivisor(offsets.back()) % vector != 0)
    return false;
  // A slice starts at a multiple of its innermost dimension's divisor.
  if (!tensor.strides.empty() && tensor.divisors.back() % vector != 0)
    return false;
  // Every row stride must be a multiple of the vector: static and divisible,
  // or dynamic with a promised divisibility (checked by the runtime).
  int64_t stride = 1;
  for (size_t i = tensor.divisors.size() - 1; i > 0; --i) {
    stride *= tensor.divisors[i];
    if (stride % vector != 0)
      return false;
  }
  return true;
}

Value KernelLowering::elementAddress(const TensorInfo &tensor, ArrayRef<Value> coords,
                                     Value from) {
  Value linear = coords.front();
  if (!tensor.strides.empty()) {
    linear = mul(coords.front(), tensor.strides.front());
    for (size_t k = 1; k < coords.size(); ++k)
      linear = add(linear, mul(coords[k], tensor.strides[k]));
  }
  for (size_t k = 1; k < coords.size() && tensor.strides.empty(); ++k)
    linear = add(mul(linear, tensor.dims[k]), coords[k]);
  Value index = arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), linear);
  return LLVM::GEPOp::create(b_, loc_, tensor.ptr.getType(),
                             getStorageType(tensor.type.getElementType()),
                             from ? from : tensor.ptr, ValueRange{index},
                             LLVM::GEPNoWrapFlags::inbounds);
}

void KernelLowering::boundsPredicates(const TensorInfo &tensor, ArrayRef<Value> coords,
                                      int64_t vector, Value &rowsInBounds, Value &fullVector) {
  rowsInBounds = nullptr;
  for (size_t k = 0; k + 1 < coords.size(); ++k)
    rowsInBounds = andi(rowsInBounds, lt(coords[k], tensor.dims[k]));
  fullVector = andi(rowsInBounds, le(add(coords.back(), cst(vector)), tensor.dims.back()));
}

} // namespace tessera::lowering
