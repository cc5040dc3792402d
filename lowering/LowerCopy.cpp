//===- LowerCopy.cpp - tile.copy, tile.fill and tile.clear ----------------===//
//
// Copies between tensors, shared buffers and fragments: vector global
// loads and stores with tails, accumulator stores transposed within quads,
// stmatrix to shared memory, the bulk-store epilogue of persistent
// warp-specialized kernels; and fills.
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

SmallVector<Value> KernelLowering::loadGlobal(const TensorInfo &tensor, ArrayRef<Value> coords,
                                              int64_t vector, bool aligned) {
  Type eltType = getStorageType(tensor.type.getElementType());
  int64_t eltBytes = getElementBytes(eltType);
  Value rows, full;
  boundsPredicates(tensor, coords, vector, rows, full);
  Value zero = arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(eltType));
  auto loadScalars = [&](OpBuilder &b, Location loc) {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
    SmallVector<Value> values;
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords.begin(), coords.end());
      at.back() = add(at.back(), cst(v));
      Value inBounds = andi(rows, lt(at.back(), tensor.dims.back()));
      auto guarded = scf::IfOp::create(
          b_, loc_, inBounds,
          [&](OpBuilder &tb, Location l) {
            OpBuilder::InsertionGuard g(b_);
            b_.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
            Value x = LLVM::LoadOp::create(b_, l, eltType, elementAddress(tensor, at), eltBytes);
            scf::YieldOp::create(b_, l, x);
          },
          [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, zero); });
      values.push_back(guarded.getResult(0));
    }
    return values;
  };
  if (!aligned || vector == 1) {
    return loadScalars(b_, loc_);
  }
  auto vecType = VectorType::get({vector}, eltType);
  // As in storeGlobal: when the row length is a multiple of the vector, an
  // aligned vector lies wholly inside the tensor or wholly past its end, so
  // the other branch reads zeros, with no per-element tail.
  bool wholeVectors = tensor.divisors.back() % vector == 0;
  auto ifOp = scf::IfOp::create(
      b_, loc_, full,
      [&](OpBuilder &tb, Location l) {
        OpBuilder::InsertionGuard g(b_);
        b_.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
        Value vec = LLVM::LoadOp::create(b_, l, vecType, elementAddress(tensor, coords),
                                         vectorAlignment(vector * eltBytes));
        scf::YieldOp::create(b_, l, vec);
      },
      [&](OpBuilder &eb, Location l) {
        OpBuilder::InsertionGuard g(b_);
        b_.setInsertionPoint(eb.getInsertionBlock(), eb.getInsertionPoint());
        if (wholeVectors) {
          scf::YieldOp::create(
              b_, l, Value(arith::ConstantOp::create(b_, l, cast<TypedAttr>(b_.getZeroAttr(vecType)))));
          return;
        }
        scf::YieldOp::create(b_, l, packVector(loadScalars(eb, l)));
      });
  return unpackVector(ifOp.getResult(0));
}

void KernelLowering::storeGlobal(const TensorInfo &tensor, ArrayRef<Value> coords,
                                 ArrayRef<Value> values, bool aligned) {
  Type eltType = getStorageType(tensor.type.getElementType());
  int64_t eltBytes = getElementBytes(eltType);
  int64_t vector = values.size();
  Value rows, full;
  boundsPredicates(tensor, coords, vector, rows, full);
  auto storeScalars = [&]() {
    for (int64_t v = 0; v < vector; ++v) {
      SmallVector<Value> at(coords.begin(), coords.end());
      at.back() = add(at.back(), cst(v));
      Value inBounds = andi(rows, lt(at.back(), tensor.dims.back()));
      auto guarded = scf::IfOp::create(b_, loc_, inBounds, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToStart(guarded.thenBlock());
      LLVM::StoreOp::create(b_, loc_, values[v], elementAddress(tensor, at), eltBytes);
    }
  };
  if (!aligned || vector == 1) {
    storeScalars();
    return;
  }
  // When the row length is a multiple of the vector, an aligned vector is
  // wholly inside the tensor or wholly past its end: no scalar tail.
  bool wholeVectors = tensor.divisors.back() % vector == 0;
  auto ifOp = scf::IfOp::create(b_, loc_, full, /*withElse=*/!wholeVectors);
  {
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(ifOp.thenBlock());
    LLVM::StoreOp::create(b_, loc_, packVector(values), elementAddress(tensor, coords),
                          vectorAlignment(vector * eltBytes));
    if (wholeVectors)
      return;
    b_.setInsertionPointToStart(ifOp.elseBlock());
    storeScalars();
  }
}

Value KernelLowering::elementInBounds(const TensorInfo &tensor, ArrayRef<Value> indices,
                                      function_ref<Value()> access, Value onlyIf) {
  Type eltType = getStorageType(tensor.type.getElementType());
  // Unsigned compares: a negative index is outside too.
  Value inBounds = onlyIf;
  for (auto [index, dim] : llvm::zip(indices, tensor.dims))
    inBounds =
        andi(inBounds, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, index, dim));
  Value zero = arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(eltType));
  if (!inBounds)
    return zero;
  auto guarded = scf::IfOp::create(
      b_, loc_, inBounds,
      [&](OpBuilder &tb, Location l) {
        OpBuilder::InsertionGuard g(b_);
        b_.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
        scf::YieldOp::create(b_, l, access());
      },
      [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, zero); });
  return guarded.getResult(0);
}

Value KernelLowering::readElement(const TensorInfo &tensor, ArrayRef<Value> indices) {
  Type eltType = tensor.type.getElementType();
  return elementInBounds(tensor, indices, [&] {
    return LLVM::LoadOp::create(b_, loc_, eltType, elementAddress(tensor, indices),
                                getElementBytes(eltType));
  });
}

Value KernelLowering::readIndex(ReadOp read, ArrayRef<Value> indices) {
  Value element = readElement(tensors_[read.getTensor()], indices);
  return arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), element);
}

Value KernelLowering::atomicElement(AtomicOp atomic, ArrayRef<Value> indices, Value value,
                                    Value onlyIf) {
  const TensorInfo &tensor = tensors_[atomic.getTensor()];
  bool isFloat = isa<FloatType>(tensor.type.getElementType());
  LLVM::AtomicBinOp kind;
  switch (atomic.getKind()) {
  case AtomicKind::add:
    kind = isFloat ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
    break;
  case AtomicKind::max:
    kind = isFloat ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
    break;
  case AtomicKind::min:
    kind = isFloat ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
    break;
  }
  return elementInBounds(
      tensor, indices,
      [&] {
        return LLVM::AtomicRMWOp::create(b_, loc_, kind, elementAddress(tensor, indices), value,
                                         LLVM::AtomicOrdering::monotonic, StringRef("device"))
            .getResult();
      },
      onlyIf);
}

void KernelLowering::atomicAddGlobal(const TensorInfo &tensor, ArrayRef<Value> coords,
                                     ArrayRef<Value> values, Value onlyIf, bool aligned) {
  Type eltType = tensor.type.getElementType();
  auto kind = isa<FloatType>(eltType) ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  Value rows, full;
  boundsPredicates(tensor, coords, values.size(), rows, full);
  OpBuilder::InsertionGuard outer(b_);
  int64_t width = int64_t(values.size());
  bool vectorF32 = caps_.hasVectorRedF32 && eltType.isF32() && (width == 2 || width == 4);
  bool pairs = width % 2 == 0 &&
               ((eltType.isF16() && caps_.hasRedF16x2) || (eltType.isBF16() && caps_.hasRedBf16x2));
  if (aligned && (vectorF32 || pairs)) {
    // The whole run inside: one vector or packed-pair reduction per run or
    // pair (PTX text: the NVVM dialect has neither `red` form); else the
    // elements one by one below.
    auto whole = scf::IfOp::create(b_, loc_, andi(onlyIf, full), /*withElse=*/true);
    b_.setInsertionPointToStart(whole.thenBlock());
    if (vectorF32) {
      std::string text = "red.relaxed.gpu.global.add.v" + std::to_string(width) + ".f32 [$0], {";
      std::string constraints = "l";
      for (int64_t v = 0; v < width; ++v) {
        text += (v ? ", $" : "$") + std::to_string(v + 1);
        constraints += ",f";
      }
      SmallVector<Value> operands = {elementAddress(tensor, coords)};
      llvm::append_range(operands, values);
      emitPtx(b_, loc_, text + "};", constraints, operands, {}, /*sideEffects=*/true);
    } else {
      std::string text = std::string("red.relaxed.gpu.global.add.noftz.") +
                         (eltType.isF16() ? "f16x2" : "bf16x2") + " [$0], $1;";
      for (int64_t v = 0; v < width; v += 2) {
        SmallVector<Value> at(coords.begin(), coords.end());
        at.back() = add(at.back(), cst(v));
        Value pair = LLVM::BitcastOp::create(b_, loc_, b_.getI32Type(),
                                             packVector({values[v], values[v + 1]}));
        emitPtx(b_, loc_, text, "l,r", {elementAddress(tensor, at), pair}, {},
                /*sideEffects=*/true);
      }
    }
    b_.setInsertionPoint(whole.elseBlock()->getTerminator());
  }
  for (int64_t v = 0; v < width; ++v) {
    SmallVector<Value> at(coords.begin(), coords.end());
    at.back() = add(at.back(), cst(v));
    Value inBounds = andi(onlyIf, andi(rows, lt(at.back(), tensor.dims.back())));
    auto guarded = scf::IfOp::create(b_, loc_, inBounds, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(guarded.thenBlock());
    // Relaxed at device scope: the adds need no order among themselves;
    // the kernel's end (or the author's barrier) orders them before readers.
    // An unused result lets ptxas issue `red`.
    LLVM::AtomicRMWOp::create(b_, loc_, kind, elementAddress(tensor, at), values[v],
                              LLVM::AtomicOrdering::monotonic, StringRef("device"));
  }
}

Value KernelLowering::packedPair(const BufferInfo &frag, int64_t slot, Type elt) {
  SmallVector<Value> pair;
  for (int64_t e = 0; e < 2; ++e)
    pair.push_back(
        convert(memref::LoadOp::create(b_, loc_, frag.memref, ValueRange{cst(slot + e)}), elt));
  return LLVM::BitcastOp::create(b_, loc_, b_.getI32Type(), packVector(pair));
}

std::optional<KernelLowering::MmaStoreTiles>
KernelLowering::mmaFragmentStoreTiles(CopyOp copy, int64_t elementBytes) {
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstTensor = dyn_cast<TileTensorType>(copy.getDst().getType());
  if (!srcBuffer || !srcBuffer.isFragment() || !dstTensor ||
      getElementBytes(dstTensor.getElementType()) != elementBytes)
    return std::nullopt;
  const BufferInfo &frag = buffers_[copy.getSrc()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  if (!mma || !mma.isM16N8())
    return std::nullopt;
  return MmaStoreTiles{shape[0] / mma.getWarpsM() / 16, shape[1] / mma.getWarpsN() / 8};
}

bool KernelLowering::lowerMmaFragmentStore(CopyOp copy) {
  // Loads keep the generic path: a guarded 16-byte load per lane followed
  // by the shuffles serializes the loads' latency, slower on the H200 than
  // many 4-byte loads in flight.
  std::optional<MmaStoreTiles> tiles = mmaFragmentStoreTiles(copy, 2);
  if (!tiles || tiles->nt % 4 != 0)
    return false;
  auto dstTensor = cast<TileTensorType>(copy.getDst().getType());
  const BufferInfo &frag = buffers_[copy.getSrc()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  int64_t mt = tiles->mt, nt = tiles->nt;
  TensorInfo tensor = copyTensor(copy);
  Type elt = dstTensor.getElementType();
  Type i32 = b_.getI32Type();
  auto pairType = VectorType::get({2}, elt);
  bool aligned = isVectorAligned(tensor, copy.getTileOffsets(), 8);
  SmallVector<Value> offsets = copyOffsets(copy);

  Value warp = warpId(), lane = laneId();
  Value quad = arith::RemUIOp::create(b_, loc_, lane, cst(4));
  Value quadI32 = toI32(quad);
  Value rowBase =
      add(warpTileRow(shape, mma, warp), arith::DivUIOp::create(b_, loc_, lane, cst(4)));
  Value colBase = add(warpTileCol(shape, mma, warp), mul(quad, cst(8)));
  // Whether bit 0 / bit 1 of this lane's index in its quad is set.
  Value quadBit[2];
  for (int64_t bit = 0; bit < 2; ++bit)
    quadBit[bit] = arith::CmpIOp::create(
        b_, loc_, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b_, loc_, quadI32,
                              arith::ConstantIntOp::create(b_, loc_, i32, 1 << bit)),
        arith::ConstantIntOp::create(b_, loc_, i32, 0));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t g = 0; g < nt / 4; ++g) {
        SmallVector<Value> coords = {add(offsets[0], add(rowBase, cst(mi * 16 + 8 * h))),
                                     add(offsets[1], add(colBase, cst(g * 32)))};
        // P[j]: this lane's pair (packed in 32 bits) of atom tile 4 g + j.
        SmallVector<Value> pairs;
        for (int64_t j = 0; j < 4; ++j)
          pairs.push_back(packedPair(frag, ((mi * nt + 4 * g + j) * 2 + h) * 2, elt));
        // The 4 x 4 transpose within the quad (lane t ends with Q[s] = the
        // pair of lane s in tile t: 8 consecutive elements) as two butterfly
        // stages: stage b swaps bit b of the lane with bit b of the slot, so
        // each pair of slots (j, j ^ m), m = 2^b, sends the one whose bit b
        // differs from the lane's to lane t ^ m, which puts it in the other.
        SmallVector<Value> quads(pairs);
        for (int64_t bit = 0; bit < 2; ++bit) {
          int64_t m = int64_t(1) << bit;
          for (int64_t lo = 0; lo < 4; ++lo) {
            if (lo & m)
              continue;
            int64_t hi = lo | m;
            Value send = arith::SelectOp::create(b_, loc_, quadBit[bit], quads[lo], quads[hi]);
            Value got = gpu::ShuffleOp::create(b_, loc_, send, m, 32, gpu::ShuffleMode::XOR)
                            .getShuffleResult();
            quads[lo] = arith::SelectOp::create(b_, loc_, quadBit[bit], got, quads[lo]);
            quads[hi] = arith::SelectOp::create(b_, loc_, quadBit[bit], quads[hi], got);
          }
        }
        SmallVector<Value> values;
        for (Value q : quads)
          llvm::append_range(values,
                             unpackVector(LLVM::BitcastOp::create(b_, loc_, pairType, q)));
        storeGlobal(tensor, coords, values, aligned);
      }
  noteSharedAccess();
  return true;
}

bool KernelLowering::lowerMmaFragmentToShared(CopyOp copy) {
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstBuffer = dyn_cast<BufferType>(copy.getDst().getType());
  if (!caps_.hasStmatrix || !srcBuffer || !srcBuffer.isFragment() || !dstBuffer ||
      !dstBuffer.isShared() || getElementBytes(dstBuffer.getElementType()) != 2 ||
      srcBuffer.getShape() != dstBuffer.getShape() || dstBuffer.getRank() != 2)
    return false;
  const BufferInfo &frag = buffers_[copy.getSrc()];
  const BufferInfo &dst = buffers_[copy.getDst()];
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  if (!mma || !mma.isM16N8() || dst.stages > 1 || shape[1] % 8 != 0)
    return false;
  int64_t tn = shape[1] / mma.getWarpsN();
  if ((tn / 8) % 2 != 0)
    return false;
  storeMatrices(frag, dst, 0, tn);
  noteSharedAccess();
  return true;
}

void KernelLowering::storeMatrices(const BufferInfo &frag, const BufferInfo &dst,
                                   int64_t colBegin, int64_t cols) {
  MmaLayoutAttr mma = frag.mma;
  ArrayRef<int64_t> shape = frag.type.getShape();
  int64_t tm = shape[0] / mma.getWarpsM(), tn = shape[1] / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  Type elt = dst.type.getElementType();
  // stmatrix.x4 stores four 8 x 8 matrices; lanes 8i..8i+7 give the row
  // addresses of matrix i, and each lane's register i holds its pair of
  // matrix i in the accumulator's own layout (row lane / 4, columns
  // 2 (lane mod 4) and + 1). Matrix i of the 16 x 16 block (mi, q) is rows
  // 8 (i mod 2) of atom tile 2 q + i / 2.
  Value warp = warpId(), lane = laneId();
  Value mat = arith::DivUIOp::create(b_, loc_, lane, cst(8));
  Value row = add(warpTileRow(shape, mma, warp),
                  add(arith::RemUIOp::create(b_, loc_, lane, cst(8)),
                      mul(arith::RemUIOp::create(b_, loc_, mat, cst(2)), cst(8))));
  Value col = add(warpTileCol(shape, mma, warp),
                  mul(arith::DivUIOp::create(b_, loc_, mat, cst(2)), cst(8)));
  for (int64_t mi = 0; mi < mt; ++mi)
    for (int64_t q = colBegin / 16; q < std::min(nt / 2, (colBegin + cols) / 16); ++q) {
      SmallVector<Value> operands = {
          sharedAddress32(dst, {row, col}, {mi * 16, q * 16 - colBegin})};
      for (int64_t i = 0; i < 4; ++i)
        operands.push_back(packedPair(frag, ((mi * nt + 2 * q + i / 2) * 2 + i % 2) * 2, elt));
      // Inline PTX: nvvm.stmatrix takes a 64-bit shared pointer (a cvt.u64.u32
      // of this 32-bit address before every store).
      ptx("stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};", "r,r,r,r,r",
          operands);
    }
}

SmallVector<Value> KernelLowering::rowMajorStrides(ArrayRef<Value> dims) {
  SmallVector<Value> strides(dims.size(), cst(1));
  for (int64_t k = int64_t(dims.size()) - 2; k >= 0; --k)
    strides[k] = mul(strides[k + 1], dims[k + 1]);
  return strides;
}

TensorInfo KernelLowering::copyTensor(CopyOp copy) {
  TensorInfo tensor = copyTensorSlice(copy);
  // `until` ends an axis of the tile early: as if the dimension it spans
  // stopped there (at most at its own end). Nothing is then known to divide
  // that dimension.
  if (Value until = copy.getUntil()) {
    int64_t axis = copy.getUntilAxis().value_or(0);
    // A whole tensor's addresses come from its dims (row-major): make its
    // strides explicit first, so that the clamp bounds without moving rows.
    if (tensor.strides.empty())
      tensor.strides = rowMajorStrides(tensor.dims);
    // A negative end bounds the axis at 0 (min on unsigned values would
    // take it as huge).
    Value end = arith::MaxSIOp::create(b_, loc_, map_.lookupOrDefault(until), cst(0));
    tensor.dims[axis] = arith::MinUIOp::create(b_, loc_, tensor.dims[axis], end);
    tensor.divisors[axis] = 1;
  }
  return tensor;
}

TensorInfo KernelLowering::copyTensorSlice(CopyOp copy) {
  bool fromTensor = isa<TileTensorType>(copy.getSrc().getType());
  const TensorInfo &whole = tensors_[fromTensor ? copy.getSrc() : copy.getDst()];
  std::optional<ArrayRef<int64_t>> spanned = copy.getTensorDims();
  if (!spanned)
    return whole;
  OperandRange offsets = fromTensor ? copy.getSrcOffsets() : copy.getDstOffsets();
  int64_t rank = whole.type.getRank();
  // The whole tensor's strides (row-major unless a view gives its own); the
  // fixed offsets give the slice's start, and whether it lies inside the
  // tensor.
  SmallVector<Value> strides = whole.strides.empty() ? rowMajorStrides(whole.dims) : whole.strides;
  Value start = cst(0), inside;
  TensorInfo view;
  SmallVector<int64_t> shape;
  for (int64_t k = 0; k < rank; ++k) {
    if (llvm::is_contained(*spanned, k)) {
      shape.push_back(whole.type.getShape()[k]);
      view.dims.push_back(whole.dims[k]);
      view.strides.push_back(strides[k]);
      view.divisors.push_back(1);
      continue;
    }
    Value at = map_.lookupOrDefault(offsets[k]);
    start = add(start, mul(at, strides[k]));
    inside = andi(inside, lt(at, whole.dims[k]));
  }
  view.divisors.back() = whole.divisors.back();
  view.addressFromData = whole.addressFromData;
  view.type = TileTensorType::get(b_.getContext(), shape, whole.type.getElementType());
  Value index = arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), start);
  // The element's storage type: LLVM has no FP8 types (an f8 GEP does not
  // translate).
  view.ptr = LLVM::GEPOp::create(b_, loc_, whole.ptr.getType(),
                                 getStorageType(whole.type.getElementType()), whole.ptr,
                                 ValueRange{index}, LLVM::GEPNoWrapFlags::inbounds);
  if (inside)
    view.dims.front() = arith::SelectOp::create(b_, loc_, inside, view.dims.front(), cst(0));
  return view;
}

SmallVector<Value> KernelLowering::copyOffsets(CopyOp copy) {
  SmallVector<Value> offsets;
  for (Value v : copy.getTileOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  return offsets;
}

LogicalResult KernelLowering::lowerCopy(CopyOp copy) {
  BufferType tile = copy.getTileType();
  auto srcTensor = dyn_cast<TileTensorType>(copy.getSrc().getType());
  auto dstTensor = dyn_cast<TileTensorType>(copy.getDst().getType());
  auto srcBuffer = dyn_cast<BufferType>(copy.getSrc().getType());
  auto dstBuffer = dyn_cast<BufferType>(copy.getDst().getType());
  Type dstElt = dstTensor ? dstTensor.getElementType() : dstBuffer.getElementType();
  Type srcElt = srcTensor ? srcTensor.getElementType() : srcBuffer.getElementType();
  bool touchesShared = (srcBuffer && srcBuffer.isShared()) || (dstBuffer && dstBuffer.isShared());
  if (touchesShared)
    barrier();
  genericSharedWrites_ |= dstBuffer && dstBuffer.isShared();
  bool atomic = copy.getAtomicAdd();
  if (atomic && srcBuffer && buffers_[copy.getSrc()].rowSlice)
    return copy.emitOpError() << "atomic_add of a row-slice fragment is not supported; copy "
                                 "it into a fragment of its own first";
  if (srcBuffer && buffers_[copy.getSrc()].rowSlice && dstTensor)
    return lowerRowSliceStore(copy);
  for (Value side : {copy.getSrc(), copy.getDst()})
    if (isa<BufferType>(side.getType()) && buffers_[side].rowSlice)
      return copy.emitOpError() << "copies a row-slice fragment into a buffer or from "
                                   "somewhere; only a copy to a tensor tile reads one";

  // A copy after a warp-specialized loop may take its strategy's epilogue
  // form (sm90: bulk tensor stores that drain while the next tile runs).
  // Atomic adds take the generic path (one read-modify-write per element).
  if (!atomic && specialized_ && !directCopies_ &&
      schedules_[specialized_].strategy->lowerEpilogueCopy(*this, copy))
    return success();
  if (!atomic && (lowerMmaFragmentStore(copy) || lowerByteFragmentStore(copy) ||
                  lowerMmaFragmentToShared(copy)))
    return success();

  // Fragments keep their own layout; otherwise the copy picks a distribution.
  DistributionAttr dist;
  MmaLayoutAttr mma;
  if (srcBuffer && srcBuffer.isFragment()) {
    dist = buffers_[copy.getSrc()].distribution;
    mma = buffers_[copy.getSrc()].mma;
  } else if (dstBuffer && dstBuffer.isFragment()) {
    dist = buffers_[copy.getDst()].distribution;
    mma = buffers_[copy.getDst()].mma;
  } else {
    dist = copyDistribution(tile, srcTensor   ? srcTensor.getElementType()
                                  : dstTensor ? dstTensor.getElementType()
                                              : tile.getElementType());
  }
  int64_t vector = mma ? mmaVectorRegisters(mma) : dist.getVector();
  // Every thread holds a replicated fragment whole: its atomic adds are
  // thread 0's alone.
  Value onlyOneThread =
      atomic && srcBuffer && buffers_[copy.getSrc()].replicated ? isThread(0) : Value();
  bool aligned = true;
  TensorInfo tensor;
  SmallVector<Value> offsets;
  if (srcTensor || dstTensor) {
    tensor = copyTensor(copy);
    aligned = isVectorAligned(tensor, copy.getTileOffsets(), vector);
    offsets = copyOffsets(copy);
  }

  forEachOwned(tile.getShape(), dist, mma, [&](const Chunk &chunk) {
    auto at = [&](ArrayRef<Value> offsets) { return tensorCoords(offsets, chunk); };
    // Read the chunk's elements.
    SmallVector<Value> values;
    if (srcTensor) {
      values = loadGlobal(tensor, at(offsets), vector, aligned);
    } else {
      const BufferInfo &src = buffers_[copy.getSrc()];
      if (src.type.isFragment()) {
        for (int64_t v = 0; v < vector; ++v)
          values.push_back(memref::LoadOp::create(b_, loc_, src.memref,
                                                  ValueRange{cst(chunk.firstSlot + v)}));
      } else {
        values = loadShared(src, chunk.coords, vector);
      }
    }
    for (Value &value : values)
      value = convertElement(b_, loc_, value, srcElt, dstElt, saturatesInto(dstElt));
    // Write them.
    if (dstTensor) {
      if (atomic)
        atomicAddGlobal(tensor, at(offsets), values, onlyOneThread,
                        aligned && int64_t(values.size()) == vector);
      else
        storeGlobal(tensor, at(offsets), values, aligned);
      return;
    }
    const BufferInfo &dst = buffers_[copy.getDst()];
    if (!dst.type.isFragment()) {
      storeShared(dst, chunk.coords, values);
      return;
    }
    for (int64_t v = 0; v < vector; ++v)
      memref::StoreOp::create(b_, loc_, values[v], dst.memref,
                              ValueRange{cst(chunk.firstSlot + v)});
  });
  // No barrier after: every lowering that touches shared memory starts with
  // one, which also orders this copy's shared accesses before the next
  // writer's (a trailing barrier here was redundant, and at a kernel's end
  // it cost a synchronization before exit). Only a copy into shared memory
  // leaves writes a later reader waits for.
  if (dstBuffer && dstBuffer.isShared())
    noteSharedAccess();
  else
    lastWasBarrier_ = false;
  return success();
}

LogicalResult KernelLowering::lowerClear(Value buffer) {
  Type type = getStorageType(cast<BufferType>(buffer.getType()).getElementType());
  return lowerFill(buffer, arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(type)));
}

LogicalResult KernelLowering::lowerFill(Value buffer, Value value) {
  const BufferInfo &info = buffers_[buffer];
  // An FP8 constant as its bits (ui8 buffers are filled with i8 bits).
  Type storage = getStorageType(info.type.getElementType());
  if (value.getType() != storage) {
    FloatAttr constant;
    if (!matchPattern(value, m_Constant(&constant)))
      return emitError(loc_) << "fills an " << info.type.getElementType()
                             << " buffer with a value that is not a constant";
    value = storageConstant(b_, loc_, info.type.getElementType(), constant.getValueAsDouble());
  }
  if (info.type.isFragment()) {
    int64_t slots = cast<MemRefType>(info.memref.getType()).getDimSize(0);
    for (int64_t s = 0; s < slots; ++s)
      memref::StoreOp::create(b_, loc_, value, info.memref, ValueRange{cst(s)});
    // Registers only: no shared writes for a reader to wait for.
    lastWasBarrier_ = false;
    return success();
  }
  barrier();
  genericSharedWrites_ = true;
  auto dist = DistributionAttr::get(b_.getContext(), kernel_.getThreads(), 1);
  forEachChunk(info.type.getShape(), dist, [&](const Chunk &chunk) {
    memref::StoreOp::create(b_, loc_, value, info.memref, sharedIndices(info, chunk.coords));
  });
  noteSharedAccess();
  barrier();
  return success();
}

/// Approximate forms of f32 math under CompileOptions::fastMath, or null.

} // namespace tessera::lowering
