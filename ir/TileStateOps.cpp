//===- TileStateOps.cpp - Block-uniform variables and preconditions ------===//
//
// This file implements the checks of the tile dialect's block-uniform
// variables (!tile.var, tile.var, tile.var_get, tile.var_set) and of
// tile.require, the preconditions a kernel declares on its dimensions and
// integer scalar arguments for the runtime to check at launch.
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

/// Whether `value` is what a precondition may be built from: constants,
/// tensor dimensions, the kernel's integer scalar arguments, and the
/// integer arithmetic and comparisons of them that the runtime evaluates
/// (the driver's conversion takes exactly these). Otherwise an error on
/// `require` naming the operation.
LogicalResult verifyPreconditionTerm(RequireOp require, KernelOp kernel, Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    bool scalar = argument.getOwner() == &kernel.getBodyBlock() &&
                  argument.getArgNumber() < kernel.getNumKernelArguments() &&
                  argument.getType().isSignlessInteger();
    if (scalar)
      return success();
    return require.emitOpError() << "uses a value that is not an integer kernel argument; a "
                                    "precondition is built from dimensions, integer scalar "
                                    "arguments and constants";
  }
  Operation *op = value.getDefiningOp();
  if (isa<DimOp, arith::ConstantOp>(op))
    return success();
  bool arithmetic = isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp, arith::DivSIOp,
                        arith::RemUIOp, arith::RemSIOp, arith::FloorDivSIOp, arith::CeilDivUIOp,
                        arith::CeilDivSIOp, arith::MinUIOp, arith::MaxUIOp, arith::MinSIOp,
                        arith::MaxSIOp, arith::CmpIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp,
                        arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp>(op);
  // and, or and xor only as the logic of conditions.
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op) && !value.getType().isInteger(1))
    arithmetic = false;
  if (!arithmetic)
    return require.emitOpError() << "cannot evaluate '" << op->getName()
                                 << "' at launch; a precondition is built from dimensions, "
                                    "integer scalar arguments, constants and integer "
                                    "arithmetic and comparisons";
  for (Value operand : op->getOperands())
    if (failed(verifyPreconditionTerm(require, kernel, operand)))
      return failure();
  return success();
}

} // namespace

LogicalResult RequireOp::verify() {
  auto kernel = dyn_cast<KernelOp>((*this)->getParentOp());
  if (!kernel)
    return emitOpError() << "is a precondition of the kernel and only valid at the top level of "
                            "its body (outside loops and branches)";
  return verifyPreconditionTerm(*this, kernel, getCondition());
}
