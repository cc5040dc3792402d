//===- SharedMemoryLayout.cpp - Where shared buffers go ---------------===//
//
// This file implements the placement of a kernel's shared buffers
// (SharedMemoryLayout.h): first fit by live range, at the stage counts the
// buffers carry; the two branches of a top-level tile.if share their space.
//
//===----------------------------------------------------------------------===//

#include "passes/SharedMemoryLayout.h"

#include "lowering/TileQueries.h"
#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace tessera::tile;

namespace tessera {

namespace {

/// The size of a shared memory line according to NV documentation; buffers
/// start on a line so that vector accesses and swizzles line up.
constexpr int64_t kSharedMemoryLineSizeBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 1024;

/// When `alloc` holds data: the span of top-level kernel operations from its
/// first use to its last (a use nested in a loop counts as the whole loop),
/// and, when every use lies in one branch of one top-level tile.if, that
/// branch (a block takes one branch: buffers of the other are never live
/// beside it). A buffer nothing uses is kept for the rest of the kernel.
struct LiveRange {
  int64_t first, last;
  Region *branch = nullptr;

  bool overlaps(const LiveRange &other) const {
    if (branch && other.branch && branch != other.branch &&
        branch->getParentOp() == other.branch->getParentOp())
      return false;
    return first <= other.last && other.first <= last;
  }
};

LiveRange liveRange(KernelOp kernel, AllocSharedOp alloc,
                    const DenseMap<Operation *, int64_t> &position) {
  LiveRange range{std::numeric_limits<int64_t>::max(), -1};
  bool oneBranch = true;
  for (Operation *user : alloc->getUsers()) {
    Operation *top = kernel.getBodyBlock().findAncestorOpInBlock(*user);
    if (!top)
      continue;
    int64_t at = position.lookup(top);
    range.first = std::min(range.first, at);
    range.last = std::max(range.last, at);
    Region *branch = nullptr;
    if (auto ifOp = dyn_cast<IfOp>(top))
      for (Region &region : ifOp->getRegions())
        if (region.isAncestor(user->getParentRegion()))
          branch = &region;
    oneBranch &= branch && (!range.branch || range.branch == branch);
    range.branch = branch;
  }
  if (range.last < 0)
    return {position.lookup(alloc), std::numeric_limits<int64_t>::max()};
  if (!oneBranch)
    range.branch = nullptr;
  return range;
}

} // namespace

void addReductionScratch(KernelOp kernel) {
  int64_t warps = kernel.getThreads() / 32;
  if (warps <= 1)
    return;
  kernel.walk([&](ReduceOp reduce) {
    if (reduce.getScratch())
      return;
    if (auto alloc = reduce.getDst().getDefiningOp<AllocFragmentOp>())
      if (alloc.getRowSlice() && alloc.getMmaLayoutAttr().getWarpsN() == 1)
        return;
    auto dst = cast<BufferType>(reduce.getDst().getType());
    OpBuilder builder(&kernel.getBodyBlock(), kernel.getBodyBlock().begin());
    auto type =
        BufferType::get(kernel.getContext(), {warps, dst.getNumElements()},
                        getReduceScratchElementType(dst.getElementType()), MemoryScope::shared);
    auto scratch =
        AllocSharedOp::create(builder, reduce.getLoc(), type,
                              builder.getStringAttr("reduce_scratch"), nullptr, nullptr, nullptr);
    reduce.getScratchMutable().assign(scratch.getResult());
  });
}

int64_t placeSharedBuffers(KernelOp kernel, SharedBufferList *placedBuffers) {
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(kernel.getBodyBlock()))
    position[&op] = i;
  struct Placed {
    int64_t offset, bytes;
    LiveRange live;
  };
  SmallVector<Placed> placed;
  int64_t total = 0;
  if (placedBuffers)
    placedBuffers->clear();
  kernel.walk([&](AllocSharedOp alloc) {
    int64_t bytes = getBufferBytes(alloc.getType()) * alloc.getStages().value_or(1);
    LiveRange live = liveRange(kernel, alloc, position);
    // Swizzled buffers start on a 1024-byte boundary: the XOR pattern
    // repeats every eight 128-byte rows, and wgmma descriptors and TMA
    // assume it starts at address bits 7..9 zero.
    int64_t alignment = alloc.getSwizzled() ? kSwizzleAtomBytes : kSharedMemoryLineSizeBytes;
    // The lowest aligned offset clear of every buffer live at the same time.
    int64_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Placed &other : placed) {
        bool liveTogether = live.overlaps(other.live);
        bool overlap = offset < other.offset + other.bytes && other.offset < offset + bytes;
        if (liveTogether && overlap) {
          offset = llvm::alignTo(other.offset + other.bytes, alignment);
          moved = true;
        }
      }
    }
    alloc.setOffset(offset);
    placed.push_back({offset, bytes, live});
    if (placedBuffers)
      placedBuffers->emplace_back(alloc, bytes);
    total = std::max(total, offset + bytes);
  });
  kernel->setAttr(kSharedMemoryBytesAttr,
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), total));
  return total;
}

} // namespace tessera
