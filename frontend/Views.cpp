//===- Views.cpp - Tensors at addresses read from data --------------------===//
//
// KernelBuilder::TensorAt (tile.view): a tensor whose address is an entry of
// a pointer array, e.g. a grouped GEMM's per-group operands, each in its own
// allocation.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;

tessera::Tensor KernelBuilder::TensorAt(const tessera::Tensor &pointers,
                                        const std::vector<Index> &at,
                                        const std::vector<Index> &shape, DType dtype,
                                        const std::string &name, const ViewLayout &layout,
                                        SourceLoc loc) {
  BuilderState &s = *state_;
  mlir::Location where = s.loc(loc);
  std::string what = "TensorAt '" + name + "'";
  // A failed view names no tensor (-1): its handle's uses then build
  // nothing and report nothing further (the first error is the one to read).
  auto refuse = [&](const std::string &why) {
    s.error(what + ": " + why, where);
    return s.tensor(-1);
  };
  if (BuilderState::current != &s)
    return refuse("only valid inside KernelBuilder::Launch's body");
  if (!s.takes(pointers, where) || !s.takes(at, where) || !s.takes(shape, where) ||
      !s.takes(layout.strides, where))
    return s.tensor(-1);
  for (mlir::Operation *op = s.b().getInsertionBlock()->getParentOp(); op; op = op->getParentOp())
    if (mlir::isa<tile::ParallelOp, tile::PipelinedOp>(op))
      return refuse(std::string("inside a ") +
                    (mlir::isa<tile::ParallelOp>(op) ? "Parallel" : "Pipelined") +
                    " body; a view is the block's: make it before the loop");
  if (shape.empty())
    return refuse("a view has at least one dimension");
  mlir::Value pointerTensor = s.tensorValue(pointers.argument());
  auto pointerType = mlir::cast<tile::TileTensorType>(pointerTensor.getType());
  if (!pointerType.getElementType().isSignlessInteger(64))
    return refuse("the pointer tensor '" + s.arguments[pointers.argument()].name + "' holds " +
                  BuilderState::stringify(pointerType.getElementType()) +
                  "; addresses are i64 elements");
  if (int64_t(at.size()) != pointerType.getRank())
    return refuse("the pointer tensor '" + s.arguments[pointers.argument()].name + "' has rank " +
                  std::to_string(pointerType.getRank()) + " but " + std::to_string(at.size()) +
                  " indices are given");
  if (!layout.strides.empty() && layout.strides.size() + 1 != shape.size())
    return refuse("a view of rank " + std::to_string(shape.size()) + " takes " +
                  std::to_string(shape.size() - 1) +
                  " strides (every dimension but the innermost), not " +
                  std::to_string(layout.strides.size()));
  auto statement = s.enter(loc);
  llvm::SmallVector<int64_t> dims;
  llvm::SmallVector<mlir::Value> indices, sizes, strides;
  std::vector<Dim> argumentShape;
  for (const Index &extent : shape) {
    if (!extent.handle()) {
      if (extent.constant() <= 0)
        return refuse("a static extent of " + std::to_string(extent.constant()) +
                      "; a constant extent must be positive (a size read from data may be 0)");
      dims.push_back(extent.constant());
      argumentShape.push_back(Dim(extent.constant()));
      continue;
    }
    dims.push_back(mlir::ShapedType::kDynamic);
    argumentShape.push_back(Dim::Dynamic(name + "." + std::to_string(argumentShape.size())));
    sizes.push_back(s.materialize(extent));
  }
  for (const Index &i : at)
    indices.push_back(s.materialize(i));
  for (const Index &stride : layout.strides)
    strides.push_back(s.materialize(stride));
  mlir::Type element = toMlirType(s.context.get(), dtype);
  auto type = tile::TileTensorType::get(s.context.get(), dims, element);
  auto view = tile::ViewOp::create(s.b(), where, type, pointerTensor, indices, sizes, strides,
                                   layout.align ? s.b().getI64IntegerAttr(layout.align)
                                                : mlir::IntegerAttr());
  s.arguments.push_back({name, type, argumentShape, where, view.getResult()});
  s.owner->arguments.push_back(name);
  return s.tensor(int(s.arguments.size()) - 1);
}

} // namespace tessera
