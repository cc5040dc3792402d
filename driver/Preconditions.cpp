//===- Preconditions.cpp - tile.require for the runtime -------------------===//
//
// A precondition is an i1 built from constants, tensor dimensions, integer
// scalar arguments and integer arithmetic and comparisons (what
// tile.require's verifier admits). Here it becomes a runtime::Expr: a
// dynamic dimension a symbol numbered as the runtime numbers them (in
// parameter order), a scalar argument a parameter, and comparisons 1 or 0.
//
//===----------------------------------------------------------------------===//

#include "driver/Preconditions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace tessera::compiler {

namespace {

/// The runtime's number of dynamic dimension `axis` of kernel argument
/// `argument`: the dynamic dimensions of the arguments before it first.
int64_t dynamicDimNumber(tile::KernelOp kernel, unsigned argument, int64_t axis) {
  int64_t number = 0;
  for (unsigned i = 0; i <= argument; ++i) {
    auto tensor = dyn_cast<tile::TileTensorType>(kernel.getKernelArgument(i).getType());
    if (!tensor)
      continue;
    ArrayRef<int64_t> shape = tensor.getShape();
    int64_t end = i == argument ? axis : int64_t(shape.size());
    for (int64_t d = 0; d < end; ++d)
      number += ShapedType::isDynamic(shape[d]) ? 1 : 0;
  }
  return number;
}

using Op = runtime::Expr::Op;

LogicalResult toExpr(tile::RequireOp require, tile::KernelOp kernel, Value value,
                     runtime::Expr *out);

LogicalResult binary(tile::RequireOp require, tile::KernelOp kernel, Op op, Value lhs, Value rhs,
                     runtime::Expr *out) {
  out->set_op(op);
  if (failed(toExpr(require, kernel, lhs, out->mutable_lhs())))
    return failure();
  return toExpr(require, kernel, rhs, out->mutable_rhs());
}

LogicalResult comparison(tile::RequireOp require, tile::KernelOp kernel, arith::CmpIOp cmp,
                         runtime::Expr *out) {
  Value a = cmp.getLhs(), b = cmp.getRhs();
  using P = arith::CmpIPredicate;
  switch (cmp.getPredicate()) {
  case P::eq:
    return binary(require, kernel, runtime::Expr::OP_EQ, a, b, out);
  case P::ne:
    return binary(require, kernel, runtime::Expr::OP_NE, a, b, out);
  case P::slt:
  case P::ult:
    return binary(require, kernel, runtime::Expr::OP_LT, a, b, out);
  case P::sle:
  case P::ule:
    return binary(require, kernel, runtime::Expr::OP_LE, a, b, out);
  case P::sgt:
  case P::ugt:
    return binary(require, kernel, runtime::Expr::OP_LT, b, a, out);
  case P::sge:
  case P::uge:
    return binary(require, kernel, runtime::Expr::OP_LE, b, a, out);
  }
  return failure();
}

LogicalResult toExpr(tile::RequireOp require, tile::KernelOp kernel, Value value,
                     runtime::Expr *out) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    out->set_op(runtime::Expr::OP_PARAM);
    out->set_value(argument.getArgNumber());
    return success();
  }
  Operation *op = value.getDefiningOp();
  auto bin = [&](Op kind) {
    return binary(require, kernel, kind, op->getOperand(0), op->getOperand(1), out);
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp cst) -> LogicalResult {
        auto attr = dyn_cast<IntegerAttr>(cst.getValue());
        if (!attr)
          return require.emitOpError() << "takes integer constants only";
        out->set_op(runtime::Expr::OP_CONSTANT);
        out->set_value(attr.getType().isInteger(1) ? attr.getValue().getZExtValue()
                                                   : attr.getValue().getSExtValue());
        return success();
      })
      .Case<tile::DimOp>([&](tile::DimOp dim) -> LogicalResult {
        auto argument = cast<BlockArgument>(dim.getTensor());
        auto type = cast<tile::TileTensorType>(dim.getTensor().getType());
        int64_t axis = dim.getIndex();
        if (!ShapedType::isDynamic(type.getShape()[axis])) {
          out->set_op(runtime::Expr::OP_CONSTANT);
          out->set_value(type.getShape()[axis]);
          return success();
        }
        out->set_op(runtime::Expr::OP_SYMBOL);
        out->set_value(dynamicDimNumber(kernel, argument.getArgNumber(), axis));
        return success();
      })
      .Case<arith::AddIOp>([&](auto) { return bin(runtime::Expr::OP_ADD); })
      .Case<arith::SubIOp>([&](auto) { return bin(runtime::Expr::OP_SUB); })
      .Case<arith::MulIOp>([&](auto) { return bin(runtime::Expr::OP_MUL); })
      // Unsigned division and remainder: the frontend gives them
      // non-negative operands, for which floor and truncation agree.
      .Case<arith::DivUIOp, arith::FloorDivSIOp>(
          [&](auto) { return bin(runtime::Expr::OP_FLOOR_DIV); })
      .Case<arith::DivSIOp>([&](auto) { return bin(runtime::Expr::OP_DIV); })
      .Case<arith::CeilDivUIOp, arith::CeilDivSIOp>(
          [&](auto) { return bin(runtime::Expr::OP_CEIL_DIV); })
      .Case<arith::RemUIOp>([&](auto) { return bin(runtime::Expr::OP_MOD); })
      .Case<arith::RemSIOp>([&](auto) { return bin(runtime::Expr::OP_REM); })
      .Case<arith::MinUIOp, arith::MinSIOp>([&](auto) { return bin(runtime::Expr::OP_MIN); })
      .Case<arith::MaxUIOp, arith::MaxSIOp>([&](auto) { return bin(runtime::Expr::OP_MAX); })
      .Case<arith::AndIOp>([&](auto) { return bin(runtime::Expr::OP_AND); })
      .Case<arith::OrIOp>([&](auto) { return bin(runtime::Expr::OP_OR); })
      // Of booleans: true when they differ (Not is an xor with true).
      .Case<arith::XOrIOp>([&](auto) { return bin(runtime::Expr::OP_NE); })
      .Case<arith::CmpIOp>([&](arith::CmpIOp cmp) { return comparison(require, kernel, cmp, out); })
      .Case<arith::IndexCastOp, arith::ExtSIOp>(
          [&](Operation *cast) { return toExpr(require, kernel, cast->getOperand(0), out); })
      .Default([&](Operation *other) {
        return require.emitOpError() << "cannot evaluate '" << other->getName() << "' at launch";
      });
}

} // namespace

LogicalResult describePreconditions(tile::KernelOp kernel, runtime::CompiledKernel &desc) {
  for (auto require : kernel.getBodyBlock().getOps<tile::RequireOp>()) {
    runtime::Precondition *precondition = desc.add_preconditions();
    if (failed(toExpr(require, kernel, require.getCondition(), precondition->mutable_condition())))
      return failure();
    if (auto file = dyn_cast<FileLineColLoc>(require.getLoc()))
      precondition->set_where(file.getFilename().str() + ":" + std::to_string(file.getLine()));
  }
  return success();
}

} // namespace tessera::compiler
