//===- SharedMemoryLayout.cpp - Where shared buffers go ---------------===//
//
// This file implements the placement of a kernel's shared buffers
// (SharedMemoryLayout.h): first fit by live range, at the stage counts the
// buffers carry.
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

/// The span of top-level kernel operations during which `alloc` holds data:
/// from its first use to its last (a use nested in a loop counts as the
/// whole loop). A buffer nothing uses is kept for the rest of the kernel.
std::pair<int64_t, int64_t> liveRange(KernelOp kernel, AllocSharedOp alloc,
                                      const DenseMap<Operation *, int64_t> &position) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
  for (Operation *user : alloc->getUsers()) {
    Operation *top = kernel.getBodyBlock().findAncestorOpInBlock(*user);
    if (!top)
      continue;
    int64_t at = position.lookup(top);
    first = std::min(first, at);
    last = std::max(last, at);
  }
  if (last < 0)
    return {position.lookup(alloc), std::numeric_limits<int64_t>::max()};
  return {first, last};
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
    int64_t offset, bytes, first, last;
  };
  SmallVector<Placed> placed;
  int64_t total = 0;
  if (placedBuffers)
    placedBuffers->clear();
  kernel.walk([&](AllocSharedOp alloc) {
    int64_t bytes = getBufferBytes(alloc.getType()) * alloc.getStages().value_or(1);
    auto [first, last] = liveRange(kernel, alloc, position);
    // Swizzled buffers start on a 1024-byte boundary: the XOR pattern
    // repeats every eight 128-byte rows, and wgmma descriptors and TMA
    // assume it starts at address bits 7..9 zero.
    int64_t alignment = alloc.getSwizzled() ? kSwizzleAtomBytes : kSharedMemoryLineSizeBytes;
    // The lowest aligned offset clear of every buffer live at the same time.
    int64_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Placed &other : placed) {
        bool liveTogether = first <= other.last && other.first <= last;
        bool overlap = offset < other.offset + other.bytes && other.offset < offset + bytes;
        if (liveTogether && overlap) {
          offset = llvm::alignTo(other.offset + other.bytes, alignment);
          moved = true;
        }
      }
    }
    alloc.setOffset(offset);
    placed.push_back({offset, bytes, first, last});
    if (placedBuffers)
      placedBuffers->emplace_back(alloc, bytes);
    total = std::max(total, offset + bytes);
  });
  kernel->setAttr(kSharedMemoryBytesAttr,
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), total));
  return total;
}

} // namespace tessera
