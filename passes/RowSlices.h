//===- RowSlices.h - Reduction results in an accumulator's rows -*- C++ -*-===//
//
// This file declares what tile-layout-inference uses to give a reduction's
// result the row slice of its source's MMA accumulator layout instead of
// replicating it in every thread: the groups of 1-D fragments that could
// take it, found from the IR's structure before layouts are chosen.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_PASSES_ROWSLICES_H
#define TESSERA_PASSES_ROWSLICES_H

#include <string>
#include <vector>

#include "ir/TileDialect.h"
#include "llvm/ADT/SmallVector.h"

namespace tessera {

/// 1-D fragments of `rows` elements that hold per-row values of 2-D
/// fragments (a row maximum, a running sum, a rescale factor), connected
/// by the ops that use them together.
struct RowSliceGroup {
  int64_t rows = 0;
  llvm::SmallVector<mlir::Value> members;
  /// Reductions of 2-D fragments of `rows` rows into a member.
  llvm::SmallVector<tile::ReduceOp> reductions;
  /// 1-D tile.parallel loops over `rows` that touch members only.
  llvm::SmallVector<tile::ParallelOp> rowLoops;
  /// 2-D tile.parallel loops of `rows` rows that read members at their row.
  llvm::SmallVector<tile::ParallelOp> broadcastLoops;
  /// The 2-D fragments those loops read or write (an accumulator rescaled
  /// by a row's value).
  llvm::SmallVector<mlir::Value> broadcastFragments;
  /// Why the group cannot take a row slice whatever the layouts; empty when
  /// it can, once its reductions' sources are MMA accumulators.
  std::string whyNot;
};

/// The groups of `kernel`, each grown from a reduction of a 2-D fragment
/// into a 1-D one: a member may be a reduction's destination, filled or
/// cleared, and read or written in 1-D loops over its rows (with the other
/// 1-D fragments those loops touch, which join the group) or read at
/// index [i] in 2-D loops over [i, j], or copied to a tile of a global
/// tensor. Any other use (another copy, a gemm, a write in a 2-D loop, a
/// reduction of the member) sets `whyNot`.
std::vector<RowSliceGroup> findRowSliceGroups(tile::KernelOp kernel);

} // namespace tessera

#endif // TESSERA_PASSES_ROWSLICES_H
