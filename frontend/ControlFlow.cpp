//===- ControlFlow.cpp - If, Serial and Unroll in the frontend ------------===//
//
// This file implements the frontend's block-uniform control flow: If builds
// tile.if (or, for a constant condition, only the branch it takes), Serial
// and Unroll build tile.serial. Their bodies are lambdas, like Pipelined's.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;

namespace {

/// Whether a control-flow statement `what` may be built here: inside
/// Launch's body and outside Parallel bodies (whose indices differ per
/// thread); otherwise an error naming the author's line.
bool controlFlowHere(BuilderState &s, const char *what, const SourceLoc &loc) {
  if (BuilderState::current != &s) {
    s.error(std::string(what) + " is only valid inside KernelBuilder::Launch's body", s.loc(loc));
    return false;
  }
  if (s.inParallel()) {
    s.error(std::string(what) +
                " inside a Parallel body; conditions there differ per element: use Select",
            s.loc(loc));
    return false;
  }
  return true;
}

} // namespace

void KernelBuilder::If(const Scalar &condition, std::function<void()> then,
                       std::function<void()> otherwise, SourceLoc loc) {
  BuilderState &s = *state_;
  if (!controlFlowHere(s, "If", loc) || !s.takes(condition, s.loc(loc)) ||
      !s.nestable("If", s.loc(loc)))
    return;
  if (!then) {
    s.error("If without a then-body (an empty std::function)", s.loc(loc));
    return;
  }
  auto statement = s.enter(loc);
  if (isConstant(condition)) {
    if (condition.constant() != 0)
      then();
    else if (otherwise)
      otherwise();
    return;
  }
  mlir::Value cond = booleanValue(s, condition, "If's condition");
  if (!cond)
    return;
  auto op = tile::IfOp::create(s.b(), s.loc(loc), cond, /*withElse=*/bool(otherwise));
  {
    mlir::OpBuilder::InsertionGuard guard(s.b());
    s.b().setInsertionPoint(op.getThenBlock().getTerminator());
    then();
  }
  if (otherwise) {
    mlir::OpBuilder::InsertionGuard guard(s.b());
    s.b().setInsertionPoint(op.getElseBlock().getTerminator());
    otherwise();
  }
}

void KernelBuilder::Serial(const Index &count, std::function<void(Index)> body, SourceLoc loc) {
  BuilderState &s = *state_;
  if (!controlFlowHere(s, "Serial", loc) || !s.takes(count, s.loc(loc)) ||
      !s.nestable("Serial", s.loc(loc)))
    return;
  if (!body) {
    s.error("Serial without a body (an empty std::function)", s.loc(loc));
    return;
  }
  if (!count.handle() && count.constant() < 0) {
    s.error("Serial count " + std::to_string(count.constant()) + " is negative", s.loc(loc));
    return;
  }
  auto op = tile::SerialOp::create(s.b(), s.loc(loc), s.materialize(count), /*unroll=*/false);
  mlir::OpBuilder::InsertionGuard guard(s.b());
  s.b().setInsertionPoint(op.getBodyBlock().getTerminator());
  auto statement = s.enter(loc);
  body(s.index(op.getInductionVar()));
}

void KernelBuilder::Unroll(int64_t count, std::function<void(Index)> body, SourceLoc loc) {
  BuilderState &s = *state_;
  if (!controlFlowHere(s, "Unroll", loc) || !s.nestable("Unroll", s.loc(loc)))
    return;
  if (!body) {
    s.error("Unroll without a body (an empty std::function)", s.loc(loc));
    return;
  }
  auto op = tile::SerialOp::create(s.b(), s.loc(loc), s.materialize(Index(count)),
                                   /*unroll=*/true);
  mlir::OpBuilder::InsertionGuard guard(s.b());
  s.b().setInsertionPoint(op.getBodyBlock().getTerminator());
  auto statement = s.enter(loc);
  body(s.index(op.getInductionVar()));
}

} // namespace tessera
