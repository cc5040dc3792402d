//===- TileStateOps.cpp - Variables, preconditions, kernel ordering ------===//
//
// This file implements the checks of the tile dialect's block-uniform
// variables (!tile.var, tile.var, tile.var_get, tile.var_set), of
// tile.require, the preconditions a kernel declares on its dimensions and
// integer scalar arguments for the runtime to check at launch, and of the
// ops that let a kernel's start overlap the previous kernel's end
// (tile.wait_prior_kernels, tile.launch_dependents).
//
//===----------------------------------------------------------------------===//

#include "ir/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace tessera::tile;

bool VarType::holds(Type type) {
  return type.isIndex() || type.isSignlessInteger(8) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64) || type.isF32() || type.isF64();
}

LogicalResult VarType::verify(function_ref<InFlightDiagnostic()> emitError, Type valueType) {
  if (holds(valueType))
    return success();
  return emitError() << "a variable holds index, i8, i32, i64, f32 or f64, not " << valueType;
}

namespace {

/// Variables are the block's: every thread assigns and reads them alike,
/// which a tile.parallel body (one element per thread) would break.
LogicalResult verifyOutsideParallel(Operation *op, StringRef why) {
  if (op->getParentOfType<ParallelOp>())
    return op->emitOpError() << "is not valid inside tile.parallel: " << why;
  return success();
}

/// The variable's name for diagnostics, or "".
std::string describeVar(Value var) {
  if (auto decl = var.getDefiningOp<VarOp>())
    if (std::optional<StringRef> name = decl.getName())
      return " '" + name->str() + "'";
  return "";
}

} // namespace

LogicalResult VarOp::verify() {
  return verifyOutsideParallel(*this, "a variable is the block's; declare it before the loop");
}

LogicalResult VarGetOp::verify() {
  return verifyOutsideParallel(
      *this, "read the variable before the loop (no thread assigns it while the loop runs)");
}

LogicalResult VarSetOp::verify() {
  if (failed(verifyOutsideParallel(*this, "each thread would assign its own value to variable" +
                                              describeVar(getVar()))))
    return failure();
  if ((*this)->getParentOfType<PipelinedOp>())
    return emitOpError() << "assigns variable" << describeVar(getVar())
                         << " inside tile.pipelined, whose copies are issued iterations ahead "
                            "of the body; compute the value from the loop index, or use "
                            "tile.serial";
  return success();
}

namespace {

/// The most terms a precondition may have (counted as the runtime's
/// expression tree, shared subexpressions once per use), and its deepest
/// nesting (the runtime's limit on a kernel file's expressions).
constexpr int64_t kMaxPreconditionTerms = 256;
constexpr int64_t kMaxPreconditionDepth = 32;

/// The size of a precondition's tree below a value.
struct TermCount {
  int64_t terms = 1, depth = 1;
};

/// Checks what a precondition may be built from: constants, tensor
/// dimensions, the kernel's integer scalar arguments, and the arithmetic
/// and comparisons of them that the runtime evaluates the same way (the
/// driver converts exactly these). Arithmetic is on index or i64 values
/// (narrower ones could wrap), comparisons signed (or == and !=), logic on
/// booleans. Returns the size of `value`'s tree (memoized in `terms`), or
/// failure after an error on `require`. `level` is `value`'s depth in the
/// tree: past the limit the walk stops with a count over it, so neither a
/// long chain nor a use before its definition (a cycle, which the dominance
/// check reports only after this verifier) can exhaust the stack.
FailureOr<TermCount> checkPreconditionTerm(RequireOp require, KernelOp kernel, Value value,
                                           llvm::DenseMap<Value, TermCount> &terms,
                                           int64_t level = 1) {
  if (auto known = terms.find(value); known != terms.end())
    return known->second;
  if (level > kMaxPreconditionDepth)
    return TermCount{kMaxPreconditionTerms + 1, kMaxPreconditionDepth + 1};
  auto refuse = [&](Operation *op, StringRef why) {
    return require.emitOpError() << "cannot evaluate '" << op->getName() << "' at launch: " << why;
  };
  TermCount count;
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    bool scalar = argument.getOwner() == &kernel.getBodyBlock() &&
                  argument.getArgNumber() < kernel.getNumKernelArguments() &&
                  argument.getType().isSignlessInteger();
    if (!scalar)
      return require.emitOpError() << "uses a value that is not an integer kernel argument; a "
                                      "precondition is built from dimensions, integer scalar "
                                      "arguments and constants";
    return terms[value] = count;
  }
  Operation *op = value.getDefiningOp();
  Type type = value.getType();
  bool wide = type.isIndex() || type.isSignlessInteger(64);
  if (auto dim = dyn_cast<DimOp>(op); dim && dim.getTensor().getDefiningOp<ViewOp>())
    return refuse(op, "its tensor is a tile.view, whose sizes come from data");
  if (isa<DimOp, arith::ConstantOp>(op))
    return terms[value] = count;
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp, arith::DivSIOp,
          arith::RemUIOp, arith::RemSIOp, arith::FloorDivSIOp, arith::CeilDivUIOp,
          arith::CeilDivSIOp, arith::MinUIOp, arith::MaxUIOp, arith::MinSIOp, arith::MaxSIOp>(op)) {
    if (!wide)
      return refuse(op, "arithmetic on " + std::to_string(type.getIntOrFloatBitWidth()) +
                            "-bit values may wrap; convert them to indices first");
  } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    bool equality = pred == P::eq || pred == P::ne;
    if (!equality && (pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge))
      return refuse(op, "comparisons are signed (or == and !=)");
    if (!equality && cmp.getLhs().getType().isInteger(1))
      return refuse(op, "booleans compare only with == and !=");
  } else if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op)) {
    if (!type.isInteger(1))
      return refuse(op, "and, or and xor combine booleans only");
  } else if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
    Type from = op->getOperand(0).getType();
    if (!wide || from.isInteger(1))
      return refuse(op, "only widening integers (not booleans) to index or i64");
  } else {
    return refuse(op, "a precondition is built from dimensions, integer scalar arguments, "
                      "constants and integer arithmetic and comparisons");
  }
  for (Value operand : op->getOperands()) {
    FailureOr<TermCount> sub = checkPreconditionTerm(require, kernel, operand, terms, level + 1);
    if (failed(sub))
      return failure();
    count.terms = std::min(count.terms + sub->terms, kMaxPreconditionTerms + 1);
    count.depth = std::max(count.depth, sub->depth + 1);
  }
  return terms[value] = count;
}

} // namespace

LogicalResult RequireOp::verify() {
  auto kernel = dyn_cast<KernelOp>((*this)->getParentOp());
  if (!kernel)
    return emitOpError() << "is a precondition of the kernel and only valid at the top level of "
                            "its body (outside loops and branches)";
  llvm::DenseMap<Value, TermCount> terms;
  FailureOr<TermCount> count = checkPreconditionTerm(*this, kernel, getCondition(), terms);
  if (failed(count))
    return failure();
  if (count->terms > kMaxPreconditionTerms || count->depth > kMaxPreconditionDepth)
    return emitOpError() << "has more than " << kMaxPreconditionTerms << " terms or "
                         << kMaxPreconditionDepth
                         << " levels of nesting; state it as several preconditions";
  return success();
}

//===----------------------------------------------------------------------===//
// tile.wait_prior_kernels, tile.launch_dependents
//===----------------------------------------------------------------------===//

/// The first operation in `op` (or nested in it) that uses a tensor of
/// global memory other than for its dimensions, or null.
static Operation *firstGlobalAccess(Operation *op) {
  Operation *found = nullptr;
  op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    if (isa<DimOp>(inner))
      return WalkResult::advance();
    for (Value operand : inner->getOperands())
      if (isa<TileTensorType>(operand.getType())) {
        found = inner;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return found;
}

LogicalResult WaitPriorKernelsOp::verify() {
  if (!isa<KernelOp>((*this)->getParentOp()))
    return emitOpError() << "is only valid at the top level of the kernel's body (outside loops "
                            "and branches): every thread waits before the kernel's first access "
                            "to global memory";
  for (Operation *before = (*this)->getPrevNode(); before; before = before->getPrevNode()) {
    if (isa<WaitPriorKernelsOp>(before))
      return emitOpError() << "appears twice in one kernel";
    if (Operation *access = firstGlobalAccess(before)) {
      InFlightDiagnostic diag = emitOpError()
                                << "follows an access to global memory ('"
                                << access->getName().getStringRef()
                                << "'): the kernels before this one may still be writing it; "
                                   "wait before the first access";
      diag.attachNote(access->getLoc()) << "the access";
      return diag;
    }
  }
  return success();
}

LogicalResult LaunchDependentsOp::verify() {
  if (!isa<KernelOp>((*this)->getParentOp()))
    return emitOpError() << "is only valid at the top level of the kernel's body (outside loops "
                            "and branches)";
  return success();
}
