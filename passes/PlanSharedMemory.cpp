//===- PlanSharedMemory.cpp - Place shared buffers, check the limit -------===//
//
// This file implements tile-plan-shared-memory: every shared buffer gets an
// offset in the block's dynamic shared memory, and the total is checked
// against the backend's per-block limit at compile time, naming the buffers.
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "contract/PipelineStrategy.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include <limits>

namespace tessera {
#define GEN_PASS_DEF_TILEPLANSHAREDMEMORY
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

/// The size of a shared memory line according to NV documentation; buffers
/// start on a line so that vector accesses and swizzles line up.
constexpr int64_t kSharedMemoryLineSizeBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 1024;

struct PlanSharedMemory : tessera::impl::TilePlanSharedMemoryBase<PlanSharedMemory> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](KernelOp kernel) -> WalkResult {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return WalkResult::interrupt();
      return failed(planKernel(kernel, cc, *backend))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// Shared buffers that a pipelined loop fills from global memory, and how
  /// many copies of them it keeps: the most any pipelining strategy of the
  /// backend keeps for the loop (PipelineStrategy::stagesFor: with
  /// asynchronous copies one per stage in flight; with register double
  /// buffering two), told how many fit the per-block limit beside each other
  /// (planKernel then takes one away at a time until everything fits), so an
  /// absurd count costs no time.
  static void markStagedBuffers(KernelOp kernel, const TargetCapabilities &caps,
                                ArrayRef<const PipelineStrategy *> strategies) {
    kernel.walk([&](AllocSharedOp alloc) { alloc.removeStagesAttr(); });
    kernel.walk([&](PipelinedOp loop) {
      if (loop.getStages() < 2)
        return;
      // Staged: a buffer the loop copies into from a tensor, used only
      // inside the loop, and allocated before it (a buffer allocated in the
      // body is a new buffer each iteration: nothing can be copied into it
      // ahead, and the strategies would read it before the body made it).
      SmallVector<AllocSharedOp> staged;
      int64_t stageBytes = 0;
      for (Operation &op : loop.getBodyBlock()) {
        auto copy = dyn_cast<CopyOp>(op);
        if (!copy || !isa<TileTensorType>(copy.getSrc().getType()))
          continue;
        auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>();
        if (!alloc || loop->isAncestor(alloc) || llvm::is_contained(staged, alloc) ||
            !llvm::all_of(alloc->getUsers(),
                          [&](Operation *user) { return loop->isProperAncestor(user); }))
          continue;
        staged.push_back(alloc);
        stageBytes += getBufferBytes(alloc.getType());
      }
      int64_t fitting = caps.sharedMemoryPerBlock / std::max<int64_t>(1, stageBytes);
      int64_t stages = 1;
      for (const PipelineStrategy *strategy : strategies)
        stages = std::max(stages, strategy->stagesFor(loop.getStages(), fitting));
      for (AllocSharedOp alloc : staged)
        alloc.setStages(stages);
    });
  }

  /// The span of top-level kernel operations during which `alloc` holds data:
  /// from its first use to its last (a use nested in a loop counts as the
  /// whole loop). A buffer nothing uses is kept for the rest of the kernel.
  static std::pair<int64_t, int64_t> liveRange(KernelOp kernel, AllocSharedOp alloc,
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

  /// Offsets (first fit, 128-byte aligned) and the total for the current
  /// stage counts. Buffers whose live ranges do not overlap share space: the
  /// lowering puts a barrier before every operation that touches shared
  /// memory, so a buffer's first writer waits until the previous tenant's
  /// last reader is done.
  static int64_t layOut(KernelOp kernel,
                        SmallVectorImpl<std::pair<AllocSharedOp, int64_t>> &buffers) {
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(kernel.getBodyBlock()))
      position[&op] = i;
    struct Placed {
      int64_t offset, bytes, first, last;
    };
    SmallVector<Placed> placed;
    int64_t total = 0;
    buffers.clear();
    kernel.walk([&](AllocSharedOp alloc) {
      int64_t bytes = getBufferBytes(alloc.getType()) * alloc.getStages().value_or(1);
      auto [first, last] = liveRange(kernel, alloc, position);
      // Swizzled buffers start on a 1024-byte boundary: the XOR pattern
      // repeats every eight 128-byte rows, and wgmma descriptors and TMA
      // assume it starts at address bits 7..9 zero.
      int64_t alignment =
          alloc.getSwizzled() ? kSwizzleAtomBytes : kSharedMemoryLineSizeBytes;
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
      buffers.emplace_back(alloc, bytes);
      total = std::max(total, offset + bytes);
    });
    return total;
  }

  /// Cross-warp reductions combine the warps' partial results through a
  /// small shared buffer: one f32 (f64 for an f64 reduction) per warp and
  /// result element. A reduction into a row slice needs it only where
  /// warps split the columns (warps_n > 1).
  static void addReductionScratch(KernelOp kernel) {
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
      auto type = BufferType::get(kernel.getContext(), {warps, dst.getNumElements()},
                                  getReduceScratchElementType(dst.getElementType()),
                                  MemoryScope::shared);
      auto scratch = AllocSharedOp::create(builder, reduce.getLoc(), type,
                                           builder.getStringAttr("reduce_scratch"), nullptr,
                                           nullptr, nullptr);
      reduce.getScratchMutable().assign(scratch.getResult());
    });
  }

  LogicalResult planKernel(KernelOp kernel, const ComputeCapability &cc, const Backend &backend) {
    const TargetCapabilities &caps = backend.getCapabilities(cc);
    SmallVector<std::pair<AllocSharedOp, int64_t>> buffers;
    addReductionScratch(kernel);
    markStagedBuffers(kernel, caps, backend.getPipelineStrategies(cc));
    int64_t total = layOut(kernel, buffers);
    // Fewer stages until the buffers fit. Taken down to one, a loop's
    // buffers lose the attribute: unstaged, the loop runs as written (the
    // strategies that asked for more cannot run on one). A `stages = 1` left
    // by markStagedBuffers is a strategy's own choice of one staged copy.
    while (total > caps.sharedMemoryPerBlock) {
      bool reduced = false;
      kernel.walk([&](AllocSharedOp alloc) {
        if (alloc.getStages() && *alloc.getStages() > 1) {
          int64_t stages = *alloc.getStages() - 1;
          if (stages > 1)
            alloc.setStages(stages);
          else
            alloc.removeStagesAttr();
          reduced = true;
        }
      });
      if (!reduced)
        break;
      total = layOut(kernel, buffers);
    }
    OpBuilder builder(kernel);
    kernel->setAttr(kSharedMemoryBytesAttr, builder.getI64IntegerAttr(total));
    if (total <= caps.sharedMemoryPerBlock)
      return success();
    InFlightDiagnostic diag = kernel.emitError()
                              << "kernel '" << kernel.getSymName() << "' needs " << total
                              << " bytes of shared memory, over the " << caps.sharedMemoryPerBlock
                              << "-byte per-block limit of " << cc.str() << ": ";
    llvm::interleaveComma(buffers, diag, [&](const auto &entry) {
      auto [alloc, bytes] = entry;
      diag << (alloc.getName() ? *alloc.getName() : StringRef("<unnamed>")) << " ("
           << alloc.getType() << ", " << bytes << " bytes)";
    });
    for (auto &[alloc, bytes] : buffers)
      diag.attachNote(alloc.getLoc())
          << "shared buffer of " << bytes << " bytes allocated here ("
          << (alloc.getName() ? *alloc.getName() : StringRef("<unnamed>")) << ")";
    return failure();
  }
};

} // namespace
