//===- TileControlFlowOps.cpp - tile.if and tile.serial -------------------===//
//
// This file implements the block-uniform control flow of the tile dialect:
// tile.if (a branch every thread of the block takes alike) and tile.serial
// (a loop the whole block runs in order, unrolled on request): builders,
// custom syntax and the checks that keep them block-uniform.
//
//===----------------------------------------------------------------------===//

#include "ir/TileDialect.h"
#include "ir/TileVerify.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tessera::tile;

namespace {

/// The most iterations a tile.serial may unroll: each is emitted on its own.
constexpr int64_t kMaxUnrolledIterations = 64;

/// Checks what block-uniform control flow (`op`, named `what`) may hold and
/// where it may be: not inside tile.parallel (whose indices differ per
/// thread), and no allocations in its regions (buffers live across it).
LogicalResult verifyBlockUniform(Operation *op, StringRef what) {
  if (op->getParentOfType<ParallelOp>())
    return op->emitOpError() << "is block-uniform control flow and not valid inside "
                                "tile.parallel; use arith.select for per-element choices";
  WalkResult walk = op->walk([&](Operation *inner) {
    if (!isa<AllocSharedOp, AllocFragmentOp>(inner))
      return WalkResult::advance();
    inner->emitOpError() << "allocates a buffer inside " << what
                         << "; allocate it before (buffers live across branches and loops)";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

} // namespace

//===----------------------------------------------------------------------===//
// IfOp
//===----------------------------------------------------------------------===//

void IfOp::build(OpBuilder &builder, OperationState &state, Value condition, bool withElse) {
  state.addOperands(condition);
  for (int r = 0; r < 2; ++r) {
    Region *region = state.addRegion();
    if (r == 1 && !withElse)
      continue;
    region->push_back(new Block());
    IfOp::ensureTerminator(*region, builder, state.location);
  }
}

ParseResult IfOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand condition;
  if (parser.parseOperand(condition) ||
      parser.resolveOperand(condition, parser.getBuilder().getI1Type(), result.operands))
    return failure();
  Region *thenRegion = result.addRegion();
  Region *elseRegion = result.addRegion();
  if (parser.parseRegion(*thenRegion, {}))
    return failure();
  IfOp::ensureTerminator(*thenRegion, parser.getBuilder(), result.location);
  if (succeeded(parser.parseOptionalKeyword("else"))) {
    if (parser.parseRegion(*elseRegion, {}))
      return failure();
    IfOp::ensureTerminator(*elseRegion, parser.getBuilder(), result.location);
  }
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

void IfOp::print(OpAsmPrinter &p) {
  p << " " << getCondition() << " ";
  p.printRegion(getThenRegion(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
  if (hasElse()) {
    p << " else ";
    p.printRegion(getElseRegion(), /*printEntryBlockArgs=*/false,
                  /*printBlockTerminators=*/false);
  }
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
}

LogicalResult IfOp::verify() { return verifyBlockUniform(*this, "tile.if"); }

//===----------------------------------------------------------------------===//
// SerialOp
//===----------------------------------------------------------------------===//

void SerialOp::build(OpBuilder &builder, OperationState &state, Value count, bool unroll) {
  state.addOperands(count);
  if (unroll)
    state.addAttribute(getUnrollAttrName(state.name), builder.getUnitAttr());
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(builder.getIndexType(), state.location);
  SerialOp::ensureTerminator(*body, builder, state.location);
}

ParseResult SerialOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  if (detail::parseLoopHeader(parser, result, "tile.serial", iv) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {iv}))
    return failure();
  SerialOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void SerialOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " = 0 to " << getCount();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/false);
}

LogicalResult SerialOp::verify() {
  if (getBodyBlock().getNumArguments() != 1 || !getInductionVar().getType().isIndex())
    return emitOpError() << "body takes one index induction variable";
  APInt count;
  bool constant = matchPattern(getCount(), m_ConstantInt(&count));
  if (constant && count.isNegative())
    return emitOpError() << "iteration count must be non-negative, got " << count.getSExtValue();
  if (getUnroll() && !constant)
    return emitOpError() << "unrolls only a constant iteration count";
  if (getUnroll() && count.getSExtValue() > kMaxUnrolledIterations)
    return emitOpError() << "unrolls " << count.getSExtValue() << " iterations, over the limit of "
                         << kMaxUnrolledIterations << " (each is emitted on its own)";
  return verifyBlockUniform(*this, "tile.serial");
}
