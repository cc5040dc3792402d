//===- TileLoopOps.cpp - The tile dialect's loops and element accesses ----===//
//
// This file implements tile.parallel (its builder, iteration count and
// region checks: which fragments its body may touch, and how), the element
// accesses of its body (tile.load, tile.store) and tile.pipelined.
//
//===----------------------------------------------------------------------===//

#include "ir/TileDialect.h"
#include "ir/TileVerify.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tessera::tile;

//===----------------------------------------------------------------------===//
// ParallelOp
//===----------------------------------------------------------------------===//

void ParallelOp::build(OpBuilder &builder, OperationState &state, ArrayRef<int64_t> extents) {
  state.addAttribute(getExtentsAttrName(state.name), builder.getDenseI64ArrayAttr(extents));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (size_t i = 0; i < extents.size(); ++i)
    block->addArgument(builder.getIndexType(), state.location);
  ParallelOp::ensureTerminator(*body, builder, state.location);
}

ParseResult ParallelOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> ivs;
  if (parser.parseArgumentList(ivs, OpAsmParser::Delimiter::Paren) || parser.parseKeyword("in"))
    return failure();
  SmallVector<int64_t> extents;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t extent;
        if (parser.parseInteger(extent))
          return failure();
        extents.push_back(extent);
        return success();
      }))
    return failure();
  for (auto &iv : ivs)
    iv.type = parser.getBuilder().getIndexType();
  result.addAttribute(getExtentsAttrName(result.name),
                      parser.getBuilder().getDenseI64ArrayAttr(extents));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, ivs))
    return failure();
  ParallelOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void ParallelOp::print(OpAsmPrinter &p) {
  p << " (";
  llvm::interleaveComma(getInductionVars(), p, [&](BlockArgument arg) { p << arg; });
  p << ") in [";
  llvm::interleaveComma(getExtents(), p);
  p << "]";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {getExtentsAttrName()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/false);
}

int64_t ParallelOp::getNumIterations() {
  int64_t n = 1;
  for (int64_t extent : getExtents())
    n *= extent;
  return n;
}

LogicalResult ParallelOp::verifyRegions() {
  if (getExtents().empty())
    return emitOpError() << "needs at least one extent";
  int64_t iterations = 1;
  for (int64_t extent : getExtents()) {
    if (extent <= 0)
      return emitOpError() << "extents must be positive, got " << extent;
    if (extent > detail::kMaxInt32Quantity / iterations)
      return emitOpError() << "iteration space exceeds 2^31 - 1 iterations";
    iterations *= extent;
  }
  if (getBodyBlock().getNumArguments() != getExtents().size())
    return emitOpError() << "has " << getExtents().size() << " extents but "
                         << getBodyBlock().getNumArguments() << " induction variables";
  for (BlockArgument arg : getInductionVars())
    if (!arg.getType().isIndex())
      return emitOpError() << "induction variables must be of type index";
  // A 1-D loop in an MMA layout runs over the rows of its row slice.
  if (MmaLayoutAttr layout = getMmaLayoutAttr())
    if (failed(getExtents().size() == 1
                   ? detail::verifyRowSlice([&] { return emitOpError(); }, layout, getExtents()[0],
                                    "iteration space")
                   : layout.verifyShape([&] { return emitOpError(); }, getExtents(),
                                        "iteration space")))
      return failure();
  // A row slice is accessed at its row (the first index) in a loop of its
  // layout, and only read in a loop over its accumulator's columns too.
  for (Operation &op : getBodyBlock()) {
    auto load = dyn_cast<LoadOp>(op);
    auto store = dyn_cast<StoreOp>(op);
    Value buffer = load ? load.getBuffer() : store ? store.getBuffer() : Value();
    auto alloc = buffer ? buffer.getDefiningOp<AllocFragmentOp>() : AllocFragmentOp();
    if (!alloc || !alloc.getRowSlice())
      continue;
    Value row = load ? load.getIndices()[0] : store.getIndices()[0];
    if (getMmaLayoutAttr() != alloc.getMmaLayoutAttr() || row != getInductionVars()[0] ||
        (store && getExtents().size() != 1))
      return op.emitOpError() << "accesses a row-slice fragment of " << alloc.getMmaLayoutAttr()
                              << " other than at the first index of a tile.parallel of that "
                                 "layout (read-only over more than its rows)";
  }
  for (Operation &op : getBodyBlock())
    if (isa<CopyOp, AllocFragmentOp, AllocSharedOp, FillOp, ClearOp, ParallelOp, GemmOp,
            PipelinedOp, ReduceOp>(op))
      return op.emitOpError() << "is not allowed inside tile.parallel; the body computes one "
                                 "element at a time";
  // FP8 and ui8 are storage types: only loads, stores and tile.cast touch
  // them (computing in them would round every step, and arith has no
  // unsigned integers).
  WalkResult storage = getBody().walk([&](Operation *op) {
    if (isa<TileDialect>(op->getDialect()))
      return WalkResult::advance();
    for (Type type : llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (isStorageOnlyType(type)) {
        op->emitOpError() << "computes in " << type
                          << ", a storage type; tile.cast it to f32 (or i32) first";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(storage.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyIndices(Operation *op, BufferType type, ValueRange indices) {
  if (int64_t(indices.size()) != type.getRank())
    return op->emitOpError() << "buffer " << type << " of rank " << type.getRank() << " needs "
                             << type.getRank() << " indices, got " << indices.size();
  // The indices whose range is known here: constants, and the induction
  // variables of the tile.parallel whose body holds the access (not one
  // nested under a condition, which may guard it). Either must stay inside
  // the buffer's dimension.
  for (auto [dim, index] : llvm::enumerate(indices)) {
    int64_t size = type.getShape()[dim];
    if (ShapedType::isDynamic(size))
      continue;
    APInt constant;
    if (matchPattern(index, m_ConstantInt(&constant))) {
      int64_t value = constant.getSExtValue();
      if (value < 0 || value >= size)
        return op->emitOpError() << "index " << value << " of dimension " << dim
                                 << " is outside buffer " << type << " (size " << size << ")";
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(index);
    if (!arg || arg.getOwner() != op->getBlock())
      continue;
    auto parallel = dyn_cast_or_null<ParallelOp>(arg.getOwner()->getParentOp());
    if (!parallel || arg.getArgNumber() >= parallel.getExtents().size())
      continue;
    int64_t extent = parallel.getExtents()[arg.getArgNumber()];
    if (extent > size)
      return op->emitOpError() << "index of dimension " << dim << " is tile.parallel's induction "
                               << "variable " << arg.getArgNumber() << ", which runs to " << extent
                               << ", past buffer " << type << " (size " << size << ")";
  }
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyIndices(*this, cast<BufferType>(getBuffer().getType()), getIndices());
}

LogicalResult StoreOp::verify() {
  return verifyIndices(*this, cast<BufferType>(getBuffer().getType()), getIndices());
}

//===----------------------------------------------------------------------===//
// PipelinedOp
//===----------------------------------------------------------------------===//

void PipelinedOp::build(OpBuilder &builder, OperationState &state, Value count,
                        int64_t stages) {
  state.addOperands(count);
  state.addAttribute(getStagesAttrName(state.name), builder.getI64IntegerAttr(stages));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(builder.getIndexType(), state.location);
  PipelinedOp::ensureTerminator(*body, builder, state.location);
}

ParseResult tessera::tile::detail::parseLoopHeader(OpAsmParser &parser, OperationState &result,
                                                   StringRef opName, OpAsmParser::Argument &iv) {
  OpAsmParser::UnresolvedOperand count;
  int64_t lowerBound = 0;
  if (parser.parseArgument(iv) || parser.parseEqual())
    return failure();
  llvm::SMLoc boundLoc = parser.getCurrentLocation();
  if (parser.parseInteger(lowerBound))
    return failure();
  if (lowerBound != 0)
    return parser.emitError(boundLoc) << opName << " loops start at 0";
  iv.type = parser.getBuilder().getIndexType();
  return failure(parser.parseKeyword("to") || parser.parseOperand(count) ||
                 parser.resolveOperand(count, iv.type, result.operands));
}

ParseResult PipelinedOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  int64_t stages = 1;
  if (detail::parseLoopHeader(parser, result, "tile.pipelined", iv) ||
      parser.parseKeyword("stages") || parser.parseInteger(stages))
    return failure();
  result.addAttribute(getStagesAttrName(result.name),
                      parser.getBuilder().getI64IntegerAttr(stages));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {iv}))
    return failure();
  PipelinedOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void PipelinedOp::print(OpAsmPrinter &p) {
  // The signed value: an invalid negative count still prints as text that
  // parses back (and fails verification again).
  p << " " << getInductionVar() << " = 0 to " << getCount() << " stages "
    << getStagesAttr().getInt();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {getStagesAttrName()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/false);
}

LogicalResult PipelinedOp::verify() {
  // I64Attr accessors return uint64_t: compare the signed value.
  int64_t stages = getStagesAttr().getInt();
  if (stages < 1 || stages > detail::kMaxInt32Quantity)
    return emitOpError() << "stages must be in [1, 2^31 - 1], got " << stages;
  APInt count;
  if (matchPattern(getCount(), m_ConstantInt(&count)) && count.isNegative())
    return emitOpError() << "iteration count must be non-negative, got " << count.getSExtValue();
  if (getBodyBlock().getNumArguments() != 1 || !getInductionVar().getType().isIndex())
    return emitOpError() << "body takes one index induction variable";
  return success();
}
