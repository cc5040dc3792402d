//===- TileComputeOps.cpp - Verifiers of the tile dialect's compute ops ---===//
//
// This file implements the verifiers of the operations that compute on
// tiles and elements: tile.gemm (which element and accumulator types the
// instruction atoms take), tile.reduce and tile.cast.
//
//===----------------------------------------------------------------------===//

#include "ir/TileDialect.h"

using namespace mlir;
using namespace tessera::tile;

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::verify() {
  auto a = cast<BufferType>(getA().getType());
  auto b = cast<BufferType>(getB().getType());
  auto c = cast<BufferType>(getC().getType());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError() << "operands must be 2-D tiles, got ranks " << a.getRank() << ", "
                         << b.getRank() << " and " << c.getRank();
  if (!c.isFragment())
    return emitOpError() << "accumulator C must be a fragment, got " << c;
  Type elt = a.getElementType(), acc = c.getElementType();
  if (elt != b.getElementType())
    return emitOpError() << "A holds " << elt << " but B holds " << b.getElementType()
                         << "; A and B must share their element type";
  bool fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(elt);
  bool int8 = elt.isSignlessInteger(8) || elt.isUnsignedInteger(8);
  if (!(elt.isF16() || elt.isBF16() || elt.isF32() || elt.isF64() || fp8 || int8))
    return emitOpError() << "A and B must hold f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8 or "
                            "ui8, got "
                         << elt;
  // What the tensor cores accumulate each input type in.
  bool f16Acc = elt.isF16() || fp8;
  StringRef expected = elt.isF64() ? "f64" : int8 ? "i32" : f16Acc ? "f32 or f16" : "f32";
  bool accOk = elt.isF64() ? acc.isF64()
               : int8      ? acc.isSignlessInteger(32)
               : f16Acc    ? (acc.isF32() || acc.isF16())
                           : acc.isF32();
  if (!accOk)
    return emitOpError() << "accumulator C must hold " << expected << " for " << elt
                         << " inputs, got " << acc;
  if (getPrecision() && *getPrecision() == Precision::tf32 && !elt.isF32())
    return emitOpError() << "precision tf32 applies to f32 inputs, got " << elt;
  int64_t m = a.getShape()[getTransposeA() ? 1 : 0], ka = a.getShape()[getTransposeA() ? 0 : 1];
  int64_t kb = b.getShape()[getTransposeB() ? 1 : 0], n = b.getShape()[getTransposeB() ? 0 : 1];
  if (ka != kb)
    return emitOpError() << "A has K = " << ka << " but B has K = " << kb;
  if (m != c.getShape()[0] || n != c.getShape()[1])
    return emitOpError() << "A x B is " << m << "x" << n << " but C is " << c.getShape()[0]
                         << "x" << c.getShape()[1];
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto src = cast<BufferType>(getSrc().getType());
  auto dst = cast<BufferType>(getDst().getType());
  if (!src.isFragment() || !dst.isFragment())
    return emitOpError() << "reduces a fragment into a fragment, got " << src << " and " << dst;
  auto floating = [](Type type) { return isa<FloatType>(type) && !isStorageOnlyType(type); };
  auto integer = [](Type type) { return type.isSignlessInteger(32) || type.isSignlessInteger(64); };
  Type from = src.getElementType(), to = dst.getElementType();
  if (!(floating(from) && floating(to)) && !(integer(from) && integer(to)))
    return emitOpError() << "reduces f16, bf16, f32 or f64 fragments, or i32 or i64 ones (signed), "
                            "got "
                         << from << " and " << to;
  if (integer(from) && from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return emitOpError() << "reduces " << from << " into " << to
                         << ", which would drop each element's high bits; reduce into " << from;
  ArrayRef<int64_t> shape = src.getShape();
  SmallVector<int64_t> expected(shape.drop_back());
  if (expected.empty())
    expected.push_back(1);
  if (dst.getShape() != ArrayRef<int64_t>(expected)) {
    InFlightDiagnostic diag = emitOpError() << "reducing " << src << " over its last axis gives shape [";
    llvm::interleaveComma(expected, diag);
    return diag << "], but the destination is " << dst;
  }
  // A row-slice result is the row slice of its source's layout.
  auto dstAlloc = getDst().getDefiningOp<AllocFragmentOp>();
  auto srcAlloc = getSrc().getDefiningOp<AllocFragmentOp>();
  if (dstAlloc && dstAlloc.getRowSlice() && srcAlloc && srcAlloc.getMmaLayoutAttr() &&
      srcAlloc.getMmaLayoutAttr() != dstAlloc.getMmaLayoutAttr())
    return emitOpError() << "reduces a fragment of " << srcAlloc.getMmaLayoutAttr()
                         << " into the row slice of another layout, "
                         << dstAlloc.getMmaLayoutAttr();
  if (getScratch()) {
    auto scratch = cast<BufferType>(getScratch().getType());
    Type expected = getReduceScratchElementType(dst.getElementType());
    if (!scratch.isShared() || scratch.getElementType() != expected)
      return emitOpError() << "scratch must be a shared buffer of " << expected << ", got "
                           << scratch;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  Type from = getInput().getType(), to = getType();
  for (Type type : {from, to})
    if (!type.isIntOrFloat() || !isSupportedElementType(type))
      return emitOpError() << "converts between element types (" << kElementTypes << "), got "
                           << type;
  if (!isa_and_nonnull<ParallelOp>((*this)->getParentOp()))
    return emitOpError() << "converts elements inside a tile.parallel body";
  return success();
}

//===----------------------------------------------------------------------===//
// AtomicOp
//===----------------------------------------------------------------------===//

LogicalResult AtomicOp::verify() {
  auto type = cast<TileTensorType>(getTensor().getType());
  Type element = type.getElementType();
  if (getValue().getType() != element || getResult().getType() != element)
    return emitOpError() << "combines a value of type " << getValue().getType()
                         << " into a tensor of " << element << "; the types must match";
  if (int64_t(getIndices().size()) != type.getRank())
    return emitOpError() << "a tensor of rank " << type.getRank() << " needs " << type.getRank()
                         << " indices, got " << getIndices().size();
  bool integer = element.isSignlessInteger(32) || element.isSignlessInteger(64);
  bool supported = getKind() == AtomicKind::add ? integer || element.isF32() || element.isF64() ||
                                                      element.isF16() || element.isBF16()
                                                : integer || element.isF32();
  if (!supported)
    return emitOpError() << "atomic " << stringifyAtomicKind(getKind()) << " of " << element
                         << "; add takes f32, f64, f16, bf16, i32 and i64, max and min i32, i64 "
                            "and f32";
  if (!(*this)->getParentOfType<ParallelOp>())
    return emitOpError() << "combines one element per iteration and belongs in a tile.parallel "
                            "body; a whole tile is added by tile.copy {atomic_add}";
  return success();
}
