//===- Variables.cpp - Block variables and preconditions in the frontend --===//
//
// This file implements Var and ScalarVar (tile.var, read with tile.var_get
// and assigned with tile.var_set) and KernelBuilder::Require (tile.require).
// A variable is read where the author reads it, except inside a Parallel
// body: there the read goes before the outermost Parallel loop, since no
// thread assigns a variable while one runs.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;

namespace {

/// Whether an operation of type OpT encloses the insertion point.
template <typename OpT> bool enclosing(BuilderState &s) {
  mlir::Block *block = s.b().getInsertionBlock();
  for (mlir::Operation *op = block ? block->getParentOp() : nullptr; op; op = op->getParentOp())
    if (mlir::isa<OpT>(op))
      return true;
  return false;
}

/// The state in which variable `handle` of `owner` may be used by `what`,
/// or null after an error: inside the Launch body of the variable's own
/// builder, within the region that declared it.
BuilderState *variableState(const HandleOwner *owner, void *handle, const std::string &what) {
  BuilderState *s = BuilderState::current;
  if (!s) {
    recordMisuse("tessera: " + what + " is only valid inside KernelBuilder::Launch's body");
    return nullptr;
  }
  if (!s->belongs(owner, s->here(), [] { return std::string("Var"); }))
    return nullptr;
  if (!handle) {
    s->error(what + " of a variable whose declaration failed");
    return nullptr;
  }
  auto declared = BuilderState::value(handle).getDefiningOp<tile::VarOp>();
  if (!declared->getParentRegion()->isAncestor(s->b().getInsertionBlock()->getParent())) {
    s->error(what + " outside the If or Serial body that declared the variable; declare it "
                    "before the branch or loop");
    return nullptr;
  }
  return s;
}

/// Reads the variable. Inside Parallel and Pipelined bodies, where no
/// thread assigns it, the read goes before the outermost such loop: a
/// Parallel's threads then share it, and a Pipelined loop's copies issued
/// ahead read the same value.
mlir::Value readVariable(BuilderState &s, void *handle) {
  mlir::OpBuilder::InsertionGuard guard(s.b());
  mlir::Operation *outermost = nullptr;
  mlir::Block *block = s.b().getInsertionBlock();
  for (mlir::Operation *op = block->getParentOp(); op; op = op->getParentOp())
    if (mlir::isa<tile::ParallelOp, tile::PipelinedOp>(op))
      outermost = op;
  if (outermost)
    s.b().setInsertionPoint(outermost);
  return tile::VarGetOp::create(s.b(), s.here(), BuilderState::value(handle));
}

/// Assigns `value` to the variable unless the insertion point forbids it
/// (an error naming why).
void assignVariable(BuilderState &s, void *handle, mlir::Value value) {
  mlir::Value var = BuilderState::value(handle);
  std::string name = "variable";
  if (std::optional<llvm::StringRef> given = var.getDefiningOp<tile::VarOp>().getName())
    name += " '" + given->str() + "'";
  if (enclosing<tile::ParallelOp>(s)) {
    s.error("assigning " + name +
            " inside a Parallel body, where each thread would assign its own; use a fragment");
    return;
  }
  if (enclosing<tile::PipelinedOp>(s)) {
    s.error("assigning " + name +
            " inside a Pipelined body, whose copies run iterations ahead of it; compute the "
            "value from the loop index, or loop with Serial");
    return;
  }
  tile::VarSetOp::create(s.b(), s.here(), var, value);
}

/// Whether a variable may be declared here (`what` names the call).
bool declarable(BuilderState &s, const char *what, mlir::Location at) {
  if (BuilderState::current != &s) {
    s.error(std::string(what) + " is only valid inside KernelBuilder::Launch's body", at);
    return false;
  }
  if (enclosing<tile::ParallelOp>(s) || enclosing<tile::PipelinedOp>(s)) {
    s.error(std::string(what) + " inside a " +
                (enclosing<tile::ParallelOp>(s) ? "Parallel" : "Pipelined") +
                " body; a variable is the block's and is read before such a loop: declare it "
                "before the loop",
            at);
    return false;
  }
  return true;
}

} // namespace

Var::operator Index() const {
  BuilderState *s = variableState(owner_.get(), handle_, "reading a Var");
  if (!s)
    return Index(0);
  return s->index(readVariable(*s, handle_));
}

Var &Var::operator=(const Index &value) {
  BuilderState *s = variableState(owner_.get(), handle_, "assigning a Var");
  if (s && s->takes(value, s->here()))
    assignVariable(*s, handle_, s->materialize(value));
  return *this;
}

ScalarVar::operator Scalar() const {
  BuilderState *s = variableState(owner_.get(), handle_, "reading a ScalarVar");
  if (!s)
    return Scalar(0.0);
  return s->scalar(readVariable(*s, handle_));
}

ScalarVar &ScalarVar::operator=(const Scalar &value) {
  BuilderState *s = variableState(owner_.get(), handle_, "assigning a ScalarVar");
  if (!s || !s->takes(value, s->here()))
    return *this;
  mlir::Type type =
      mlir::cast<tile::VarType>(BuilderState::value(handle_).getType()).getValueType();
  mlir::Value v = s->materialize(value, type);
  if (v.getType() != type) {
    s->error("assigning a scalar of type " + BuilderState::stringify(v.getType()) +
             " to a ScalarVar of " + BuilderState::stringify(type) + "; Cast it");
    return *this;
  }
  assignVariable(*s, handle_, v);
  return *this;
}

Var KernelBuilder::Var(const Index &initial, const std::string &name, SourceLoc loc) {
  BuilderState &s = *state_;
  mlir::Location at = s.loc(loc);
  if (!declarable(s, "Var", at) || !s.takes(initial, at))
    return s.var(mlir::Value());
  auto statement = s.enter(loc);
  mlir::Value init = s.materialize(initial);
  auto op = tile::VarOp::create(s.b(), at, tile::VarType::get(s.context.get(), init.getType()),
                                init, name.empty() ? nullptr : s.b().getStringAttr(name));
  return s.var(op.getResult());
}

ScalarVar KernelBuilder::ScalarVar(const Scalar &initial, DType dtype, const std::string &name,
                                   SourceLoc loc) {
  BuilderState &s = *state_;
  mlir::Location at = s.loc(loc);
  if (!declarable(s, "ScalarVar", at) || !s.takes(initial, at))
    return s.scalarVar(mlir::Value());
  auto statement = s.enter(loc);
  mlir::Type type = toMlirType(s.context.get(), dtype);
  if (!tile::VarType::holds(type) || type.isIndex()) {
    s.error("a ScalarVar holds i8, i32, i64, f32 or f64, not " + BuilderState::stringify(type), at);
    return s.scalarVar(mlir::Value());
  }
  mlir::Value init = s.materialize(initial, type);
  if (init.getType() != type) {
    s.error("a ScalarVar of " + BuilderState::stringify(type) + " starting from a scalar of type " +
                BuilderState::stringify(init.getType()) + "; Cast it",
            at);
    return s.scalarVar(mlir::Value());
  }
  auto op = tile::VarOp::create(s.b(), at, tile::VarType::get(s.context.get(), type), init,
                                name.empty() ? nullptr : s.b().getStringAttr(name));
  return s.scalarVar(op.getResult());
}

void KernelBuilder::Error(const std::string &message, SourceLoc loc) {
  BuilderState &s = *state_;
  s.error(message, s.loc(loc));
}

void KernelBuilder::Require(const Scalar &condition, SourceLoc loc) {
  BuilderState &s = *state_;
  mlir::Location at = s.loc(loc);
  if (BuilderState::current != &s) {
    s.error("Require is only valid inside KernelBuilder::Launch's body", at);
    return;
  }
  if (!s.takes(condition, at))
    return;
  if (!mlir::isa<tile::KernelOp>(s.b().getInsertionBlock()->getParentOp())) {
    s.error("Require inside a loop or branch; a precondition is the kernel's: state it in "
            "Launch's body, outside them",
            at);
    return;
  }
  auto statement = s.enter(loc);
  if (isConstant(condition)) {
    if (condition.constant() == 0)
      s.error("Require of a condition that is always false", at);
    return;
  }
  if (mlir::Value cond = booleanValue(s, condition, "Require"))
    tile::RequireOp::create(s.b(), at, cond);
}

} // namespace tessera
