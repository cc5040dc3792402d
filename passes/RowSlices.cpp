//===- RowSlices.cpp - Reduction results in an accumulator's rows ---------===//
//
// This file implements findRowSliceGroups: which 1-D fragments hold
// per-row values of 2-D fragments in a way that a row-slice layout can
// serve (each thread holding only the rows it owns in the accumulator).
//
//===----------------------------------------------------------------------===//

#include "passes/RowSlices.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

/// A 1-D fragment allocated by tile.alloc_fragment with `rows` elements.
bool isRowVector(Value buffer, int64_t rows) {
  auto type = dyn_cast<BufferType>(buffer.getType());
  return type && type.isFragment() && type.getRank() == 1 && type.getShape()[0] == rows &&
         buffer.getDefiningOp<AllocFragmentOp>();
}

/// The buffer and indices of a tile.load or tile.store, or null.
Value accessed(Operation *op, OperandRange &indices) {
  if (auto load = dyn_cast<LoadOp>(op)) {
    indices = load.getIndices();
    return load.getBuffer();
  }
  if (auto store = dyn_cast<StoreOp>(op)) {
    indices = store.getIndices();
    return store.getBuffer();
  }
  return {};
}

/// Grows one group from a reduction's destination.
class GroupBuilder {
public:
  GroupBuilder(RowSliceGroup &group, DenseMap<Value, unsigned> &groupOf, unsigned id)
      : group_(group), groupOf_(groupOf), id_(id) {}

  void grow(Value seed) {
    add(seed);
    for (size_t next = 0; next < group_.members.size() && group_.whyNot.empty(); ++next)
      for (Operation *user : group_.members[next].getUsers())
        visitUse(group_.members[next], user);
  }

private:
  void fail(const Twine &why) {
    if (group_.whyNot.empty())
      group_.whyNot = why.str();
  }

  void add(Value member) {
    auto [it, inserted] = groupOf_.try_emplace(member, id_);
    if (inserted)
      group_.members.push_back(member);
    else if (it->second != id_)
      fail("it is used with the result of another reduction group");
  }

  void visitUse(Value member, Operation *user) {
    if (isa<FillOp, ClearOp>(user))
      return;
    if (auto reduce = dyn_cast<ReduceOp>(user)) {
      auto src = cast<BufferType>(reduce.getSrc().getType());
      if (reduce.getDst() != member || !src.isFragment() || src.getRank() != 2)
        return fail("it is reduced itself, or reduced into from a fragment that is not 2-D");
      if (!llvm::is_contained(group_.reductions, reduce))
        group_.reductions.push_back(reduce);
      return;
    }
    // A copy of the member to a tile of a global tensor: each row's value
    // is written once, by one of the threads that hold it.
    if (auto copy = dyn_cast<CopyOp>(user)) {
      if (copy.getSrc() == member && isa<TileTensorType>(copy.getDst().getType()))
        return;
      return fail("it is copied into a buffer, or from somewhere; only copies of it to a "
                  "tensor tile keep the row slice");
    }
    auto loop = dyn_cast<ParallelOp>(user->getParentOp());
    if (!loop || !isa<LoadOp, StoreOp>(user))
      return fail(Twine("it is used by '") + user->getName().getStringRef() +
                  "', not only by reductions, fills and tile.parallel loops");
    ArrayRef<int64_t> extents = loop.getExtents();
    if (extents.size() == 1 && extents[0] == group_.rows)
      return visitRowLoop(loop);
    if (extents.size() == 2 && extents[0] == group_.rows)
      return visitBroadcastLoop(loop);
    fail("it is used in a tile.parallel that is neither over its rows nor over rows x columns");
  }

  /// Every fragment a 1-D loop touches joins the group.
  void visitRowLoop(ParallelOp loop) {
    if (llvm::is_contained(group_.rowLoops, loop))
      return;
    group_.rowLoops.push_back(loop);
    Value iv = loop.getInductionVars()[0];
    loop.getBody().walk([&](Operation *op) {
      OperandRange indices = op->getOperands();
      Value buffer = accessed(op, indices);
      if (!buffer || !cast<BufferType>(buffer.getType()).isFragment())
        return;
      if (!isRowVector(buffer, group_.rows) || indices.size() != 1 || indices[0] != iv)
        return fail("a tile.parallel over its rows touches another kind of fragment");
      add(buffer);
    });
  }

  /// A 2-D loop only reads 1-D fragments, at the row index.
  void visitBroadcastLoop(ParallelOp loop) {
    if (llvm::is_contained(group_.broadcastLoops, loop))
      return;
    group_.broadcastLoops.push_back(loop);
    Value row = loop.getInductionVars()[0];
    loop.getBody().walk([&](Operation *op) {
      OperandRange indices = op->getOperands();
      Value buffer = accessed(op, indices);
      auto type = buffer ? cast<BufferType>(buffer.getType()) : BufferType();
      if (type && type.isFragment() && type.getRank() == 2 &&
          !llvm::is_contained(group_.broadcastFragments, buffer))
        group_.broadcastFragments.push_back(buffer);
      if (!type || !type.isFragment() || type.getRank() != 1)
        return;
      if (isa<StoreOp>(op) || !isRowVector(buffer, group_.rows) || indices[0] != row)
        return fail("a tile.parallel over rows x columns writes it, or reads a 1-D fragment "
                    "at another index than its row");
      add(buffer);
    });
  }

  RowSliceGroup &group_;
  DenseMap<Value, unsigned> &groupOf_;
  unsigned id_;
};

} // namespace

std::vector<RowSliceGroup> tessera::findRowSliceGroups(KernelOp kernel) {
  std::vector<RowSliceGroup> groups;
  DenseMap<Value, unsigned> groupOf;
  SmallVector<ReduceOp> seeds;
  kernel.walk([&](ReduceOp reduce) { seeds.push_back(reduce); });
  for (ReduceOp reduce : seeds) {
    auto src = cast<BufferType>(reduce.getSrc().getType());
    if (!src.isFragment() || src.getRank() != 2 || !isRowVector(reduce.getDst(), src.getShape()[0]))
      continue;
    if (groupOf.count(reduce.getDst()))
      continue;
    RowSliceGroup group;
    group.rows = src.getShape()[0];
    groups.push_back(std::move(group));
    GroupBuilder(groups.back(), groupOf, groups.size() - 1).grow(reduce.getDst());
  }
  return groups;
}
