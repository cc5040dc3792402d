//===- LowerControlFlow.cpp - tile.if, tile.serial and variables ----------===//
//
// Block-uniform control flow and state: tile.if becomes scf.if, tile.serial
// an scf.for (or its body once per iteration, unrolled), a tile.var a
// one-element array private to each thread (every thread assigns it alike). Every thread of the
// block takes the same path, so the barriers the regions' lowerings place
// are reached by all. What the lowering tracks between operations (whether
// the last one was a barrier, whether generic-proxy shared writes wait for
// a fence) is merged over the paths: a barrier only if every path ends in
// one, pending writes if any path leaves some.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

LogicalResult KernelLowering::lowerIf(IfOp op) {
  auto branch = scf::IfOp::create(b_, loc_, map_.lookupOrDefault(op.getCondition()),
                                  /*withElseRegion=*/op.hasElse());
  // The synchronization state before the branch, and at each path's end:
  // after the branch a barrier holds where both paths end with one, and
  // writes are pending where either path left some.
  struct State {
    bool barrier, writes, pending;
  };
  const State before{lastWasBarrier_, genericSharedWrites_, sharedWritesPending_};
  // Lowers `block` into `into`; returns the state at its end.
  auto lowerPath = [&](Block &block, Block *into, State &after) -> LogicalResult {
    lastWasBarrier_ = before.barrier;
    genericSharedWrites_ = before.writes;
    sharedWritesPending_ = before.pending;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(into->getTerminator());
    if (failed(lowerBlock(block)))
      return failure();
    after = {lastWasBarrier_, genericSharedWrites_, sharedWritesPending_};
    return success();
  };
  State thenState = before, elseState = before;
  if (failed(lowerPath(op.getThenBlock(), branch.thenBlock(), thenState)))
    return failure();
  if (op.hasElse() && failed(lowerPath(op.getElseBlock(), branch.elseBlock(), elseState)))
    return failure();
  lastWasBarrier_ = thenState.barrier && elseState.barrier;
  genericSharedWrites_ = thenState.writes || elseState.writes;
  sharedWritesPending_ = thenState.pending || elseState.pending;
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
  noteSharedAccess();
  genericSharedWrites_ |= writesInBody;
  if (failed(lowerBlock(op.getBodyBlock())))
    return failure();
  // After zero iterations the writes before the loop are still pending.
  noteSharedAccess();
  genericSharedWrites_ |= writesBefore || writesInBody;
  return success();
}

LogicalResult KernelLowering::lowerVariable(Operation *op) {
  Value zero = cst(0);
  if (auto var = dyn_cast<VarOp>(op)) {
    // At the function's entry, where LLVM promotes it to registers (an
    // alloca inside a loop would not be); initialized here.
    Type type = cast<VarType>(var.getType()).getValueType();
    Value slot;
    {
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(entry_);
      slot = memref::AllocaOp::create(b_, loc_, MemRefType::get({1}, type));
    }
    memref::StoreOp::create(b_, loc_, map_.lookupOrDefault(var.getInit()), slot, zero);
    map_.map(var.getResult(), slot);
    return success();
  }
  if (auto get = dyn_cast<VarGetOp>(op)) {
    map_.map(get.getResult(),
             memref::LoadOp::create(b_, loc_, map_.lookup(get.getVar()), zero).getResult());
    return success();
  }
  if (auto set = dyn_cast<VarSetOp>(op)) {
    memref::StoreOp::create(b_, loc_, map_.lookupOrDefault(set.getValue()),
                            map_.lookup(set.getVar()), zero);
    return success();
  }
  // tile.require: the runtime checks it at launch (the driver records it).
  return success();
}

} // namespace tessera::lowering
