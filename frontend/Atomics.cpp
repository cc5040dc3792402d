//===- Atomics.cpp - Element atomics in Parallel bodies -------------------===//
//
// This file implements KernelBuilder::AtomicAdd/AtomicMax/AtomicMin of one
// element of a global tensor inside a Parallel body (tile.atomic). The
// tile-level AtomicAdd (a buffer into a tensor tile) is in Tessera.cpp,
// beside Copy.
//
//===----------------------------------------------------------------------===//

#include "frontend/internal/BuilderState.h"

namespace tessera {

using namespace detail;

namespace {

/// tile.atomic `kind` of `value` into `tensor` at `indices`, inside a
/// Parallel body; the old value, or 0 after an error.
Scalar atomicElement(BuilderState &s, tile::AtomicKind kind, const char *what, const Tensor &tensor,
                     const std::vector<Index> &indices, const Scalar &value, const SourceLoc &loc) {
  mlir::Location at = s.loc(loc);
  if (BuilderState::current != &s || !s.takes(tensor, at) || !s.takes(indices, at) ||
      !s.takes(value, at))
    return Scalar(0.0);
  if (!s.inParallel()) {
    s.error(std::string(what) + " of one element belongs in a Parallel body (a whole tile: "
                                "AtomicAdd(buffer, tile))",
            at);
    return Scalar(0.0);
  }
  mlir::Value t = s.tensorValue(tensor.argument());
  mlir::Type element = mlir::cast<tile::TileTensorType>(t.getType()).getElementType();
  llvm::SmallVector<mlir::Value> positions;
  for (const Index &i : indices)
    positions.push_back(s.materialize(i));
  mlir::Value v = s.materialize(value, element);
  if (v.getType() != element) {
    s.error(std::string(what) + " of a value of type " + BuilderState::stringify(v.getType()) +
                " into a tensor of " + BuilderState::stringify(element) + "; Cast it",
            at);
    return Scalar(0.0);
  }
  return s.scalar(tile::AtomicOp::create(s.b(), at, element, kind, v, t, positions));
}

} // namespace

Scalar KernelBuilder::AtomicAdd(const tessera::Tensor &tensor, std::vector<Index> indices,
                                const Scalar &value, SourceLoc loc) {
  return atomicElement(*state_, tile::AtomicKind::add, "AtomicAdd", tensor, indices, value, loc);
}
Scalar KernelBuilder::AtomicMax(const tessera::Tensor &tensor, std::vector<Index> indices,
                                const Scalar &value, SourceLoc loc) {
  return atomicElement(*state_, tile::AtomicKind::max, "AtomicMax", tensor, indices, value, loc);
}
Scalar KernelBuilder::AtomicMin(const tessera::Tensor &tensor, std::vector<Index> indices,
                                const Scalar &value, SourceLoc loc) {
  return atomicElement(*state_, tile::AtomicKind::min, "AtomicMin", tensor, indices, value, loc);
}

} // namespace tessera
