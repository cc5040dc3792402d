//===- TileViewOp.cpp - Tensors at addresses read from data ---------------===//
//
// This file implements the checks of tile.view: a global tensor whose
// address (and, through its size operands, whose shape) comes from an i64
// element of another tensor, as pointer-array grouped GEMMs take their
// operands.
//
//===----------------------------------------------------------------------===//

#include "ir/TileDialect.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessera::tile;

LogicalResult ViewOp::verify() {
  auto pointers = cast<TileTensorType>(getPointers().getType());
  auto result = cast<TileTensorType>(getResult().getType());
  if (!pointers.getElementType().isSignlessInteger(64))
    return emitOpError() << "reads an address from a tensor of " << pointers.getElementType()
                         << "; addresses come from i64 tensors";
  if (int64_t(getIndices().size()) != pointers.getRank())
    return emitOpError() << "a pointer tensor of rank " << pointers.getRank() << " needs "
                         << pointers.getRank() << " indices, got " << getIndices().size();
  if (int64_t(getSizes().size()) != result.getNumDynamicDims())
    return emitOpError() << "the result type has " << result.getNumDynamicDims()
                         << " dynamic dimensions but " << getSizes().size()
                         << " sizes are given; give one per '?', in order";
  if (!getStrides().empty() && int64_t(getStrides().size()) != result.getRank() - 1)
    return emitOpError() << "a view of rank " << result.getRank() << " takes "
                         << result.getRank() - 1
                         << " strides (every dimension but the innermost), got "
                         << getStrides().size();
  if (std::optional<int64_t> align = getAlign()) {
    int64_t element = getElementBytes(result.getElementType());
    if (*align > 16 || !llvm::isPowerOf2_64(*align) || *align < element)
      return emitOpError() << "align must be a power of two from the element's " << element
                           << " bytes to 16, got " << *align;
    int64_t inner = result.getShape().back();
    if (!ShapedType::isDynamic(inner) && (inner * element) % *align != 0)
      return emitOpError() << "promises rows of a multiple of " << *align
                           << " bytes, but its innermost dimension is " << inner << " elements ("
                           << inner * element << " bytes)";
  }
  if ((*this)->getParentOfType<ParallelOp>())
    return emitOpError() << "reads a block-uniform address and is not valid inside "
                            "tile.parallel; make the view before the loop";
  if ((*this)->getParentOfType<PipelinedOp>())
    return emitOpError() << "is not valid inside tile.pipelined (its copies run ahead of the "
                            "iteration that would make the view); make it before the loop";
  return success();
}
