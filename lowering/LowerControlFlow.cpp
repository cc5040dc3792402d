//===- LowerControlFlow.cpp - tile.if and tile.serial ---------------------===//
//
// Block-uniform control flow: tile.if becomes scf.if and tile.serial an
// scf.for (or its body once per iteration, unrolled). Every thread of the
// block takes the same path, so the barriers the regions' lowerings place
// are reached by all. What the lowering tracks between operations (whether
// the last one was a barrier, whether generic-proxy shared writes wait for
// a fence) is merged over the paths: a barrier only if every path ends in
// one, pending writes if any path leaves some.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

LogicalResult KernelLowering::lowerIf(IfOp op) {
  auto branch = scf::IfOp::create(b_, loc_, map_.lookupOrDefault(op.getCondition()),
                                  /*withElseRegion=*/op.hasElse());
  bool barrierBefore = lastWasBarrier_, writesBefore = genericSharedWrites_;
  // Lowers `block` into `into`; returns the state at its end.
  auto lowerPath = [&](Block &block, Block *into, bool &barrierAfter,
                       bool &writesAfter) -> LogicalResult {
    lastWasBarrier_ = barrierBefore;
    genericSharedWrites_ = writesBefore;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(into->getTerminator());
    if (failed(lowerBlock(block)))
      return failure();
    barrierAfter = lastWasBarrier_;
    writesAfter = genericSharedWrites_;
    return success();
  };
  bool thenBarrier, thenWrites, elseBarrier = barrierBefore, elseWrites = writesBefore;
  if (failed(lowerPath(op.getThenBlock(), branch.thenBlock(), thenBarrier, thenWrites)))
    return failure();
  if (op.hasElse() &&
      failed(lowerPath(op.getElseBlock(), branch.elseBlock(), elseBarrier, elseWrites)))
    return failure();
  lastWasBarrier_ = thenBarrier && elseBarrier;
  genericSharedWrites_ = thenWrites || elseWrites;
  return success();
}

LogicalResult KernelLowering::lowerSerial(SerialOp op) {
  Value count = map_.lookupOrDefault(op.getCount());
  if (op.getUnroll()) {
    std::optional<int64_t> trips = getConstantIntValue(count);
    if (!trips)
      return op.emitOpError() << "unrolls only a constant iteration count";
    for (int64_t i = 0; i < *trips; ++i) {
      map_.map(op.getInductionVar(), cst(i));
      if (failed(lowerBlock(op.getBodyBlock())))
        return failure();
    }
    return success();
  }
  auto loop = scf::ForOp::create(b_, loc_, cst(0), count, cst(1));
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(loop.getBody()->getTerminator());
  map_.map(op.getInductionVar(), loop.getInductionVar());
  // The body starts after the kernel's code before the loop or after its
  // own last iteration: no barrier can be assumed, and shared writes either
  // path leaves wait for a fence before async-proxy reads.
  bool writesInBody = false;
  op.getBody().walk([&](Operation *inner) { writesInBody |= writesSharedBuffer(inner); });
  bool writesBefore = genericSharedWrites_;
  lastWasBarrier_ = false;
  genericSharedWrites_ |= writesInBody;
  if (failed(lowerBlock(op.getBodyBlock())))
    return failure();
  // After zero iterations the writes before the loop are still pending.
  lastWasBarrier_ = false;
  genericSharedWrites_ |= writesBefore || writesInBody;
  return success();
}

} // namespace tessera::lowering
