//===- PipelineLoweringContext.h - What lowering lends a strategy -*- C++ -*-===//
//
// This file declares the services the shared lowering driver lends a
// pipelining strategy (contract/PipelineStrategy.h) while it plans and emits
// one tile.pipelined loop, as GemmLoweringContext (contract/AtomLowering.h)
// does for an MMA atom: the builder and index helpers, the mapping of tile
// values to lowered ones, lowering a staged body, copy helpers, shared-memory
// addressing and reservation, the kernel's schedules (ping-pong, persistent,
// stream-K), code at the kernel's start, the launch shape and tensor maps.
// A strategy reaches the lowering through this interface alone: it never
// names the lowering's class or its members. tile-lower-to-gpu implements it
// for the kernel it lowers (lowering/KernelLowering.h).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONTRACT_PIPELINELOWERINGCONTEXT_H
#define TESSERA_CONTRACT_PIPELINELOWERINGCONTEXT_H

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "contract/AtomLowering.h"
#include "contract/Backend.h"
#include "ir/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

namespace tessera::lowering {

/// A lowered tensor argument.
struct TensorInfo {
  tile::TileTensorType type;
  mlir::Value ptr;
  /// One index value per dimension (constants for static dimensions).
  llvm::SmallVector<mlir::Value> dims;
  /// A known divisor of each dimension: the size when static, the promised
  /// divisibility (checked by the runtime at launch) when dynamic. For a
  /// slice, 1 but for the innermost dimension's (which divides every other
  /// stride and the slice's start).
  llvm::SmallVector<int64_t> divisors;
  /// A slice's element stride per dimension (the lowering's copyTensor);
  /// empty for a whole tensor, which is row-major over `dims`.
  llvm::SmallVector<mlir::Value> strides;
  /// A tile.view's: its address was read from data, so no tensor map (built
  /// by the host from the address) can describe it.
  bool addressFromData = false;
};

/// A lane's place in its quad (the 4 lanes that share an m16n8 accumulator
/// row): its index 0-3, and whether bit 0 / bit 1 of it is set.
struct QuadLanes {
  mlir::Value index;
  mlir::Value bit[2];
};

/// An async MMA's accumulator left in flight, and its register count.
using AsyncAccumulator = std::pair<mlir::Value, int64_t>;

/// What the shared lowering driver lends a pipelining strategy: the atom's
/// services and those below.
class PipelineLoweringContext : public GemmLoweringContext {
public:
  // The kernel and its target.
  virtual tile::KernelOp kernel() = 0;
  virtual const Backend &backend() = 0;
  virtual const ComputeCapability &computeCapability() = 0;
  virtual const TargetCapabilities &capabilities() = 0;

  // Index arithmetic and control flow beyond the atom's.
  virtual mlir::Value lt(mlir::Value x, mlir::Value y) = 0;
  virtual mlir::Value le(mlir::Value x, mlir::Value y) = 0;
  virtual mlir::Value eq(mlir::Value x, mlir::Value y) = 0;
  /// `x` and `y` (i1); `y` alone when `x` is null.
  virtual mlir::Value andi(mlir::Value x, mlir::Value y) = 0;
  /// An index as the i32 inline PTX takes, and an i32 constant.
  virtual mlir::Value toI32(mlir::Value index) = 0;
  virtual mlir::Value cst32(int64_t v) = 0;
  /// Whether this is thread `t` of the block as launched (producers too).
  virtual mlir::Value isThread(int64_t t) = 0;
  /// Emits `body` in a new scf.if on `condition` (no else), then continues
  /// after it.
  virtual void ifThen(mlir::Value condition, llvm::function_ref<void()> body) = 0;
  /// The lowered kernel's entry block (values hoisted to the kernel's start).
  virtual mlir::Block *entryBlock() = 0;

  // Tile values and their lowered forms.
  /// The mapping of tile IR values to lowered ones at the insertion point
  /// (callers that remap save and restore it).
  virtual mlir::IRMapping &valueMap() = 0;
  /// The lowered form of a tensor argument of the kernel.
  virtual const TensorInfo &tensor(mlir::Value tileTensor) = 0;
  /// Points staged `buffer` at `stage` (what shared addressing reads).
  virtual void setStage(mlir::Value tileBuffer, mlir::Value stage) = 0;
  /// Points staged `buffers` at `stage` until the returned guard goes out
  /// of scope.
  [[nodiscard]] auto useStage(llvm::ArrayRef<mlir::Value> buffers, mlir::Value stage) {
    llvm::SmallVector<std::pair<mlir::Value, mlir::Value>> saved;
    for (mlir::Value tileBuffer : buffers) {
      saved.emplace_back(tileBuffer, buffer(tileBuffer).stage);
      setStage(tileBuffer, stage);
    }
    return llvm::scope_exit([this, saved = std::move(saved)] {
      for (auto &[tileBuffer, previous] : saved)
        setStage(tileBuffer, previous);
    });
  }
  /// Added to a pipelined loop's iteration index where the body reads its
  /// induction variable (a stream-K piece's start); null for none.
  virtual mlir::Value iterationOffset() = 0;
  virtual void setIterationOffset(mlir::Value offset) = 0;
  /// `k` plus the iteration offset: what the body's induction variable is.
  mlir::Value inductionValue(mlir::Value k) {
    mlir::Value offset = iterationOffset();
    return offset ? add(k, offset) : k;
  }
  /// What lowering iteration `k` of `loop`'s body on stage `stage` starts
  /// with: the staged buffers `ahead` copies into point at `stage` (until
  /// the returned guard goes out of scope), and the induction variable maps
  /// to inductionValue(k).
  [[nodiscard]] auto useIteration(tile::PipelinedOp loop,
                                  const llvm::SmallPtrSetImpl<mlir::Operation *> &ahead,
                                  mlir::Value k, mlir::Value stage) {
    llvm::SmallVector<mlir::Value> staged;
    for (mlir::Operation *op : ahead)
      staged.push_back(llvm::cast<tile::CopyOp>(op).getDst());
    valueMap().map(loop.getInductionVar(), inductionValue(k));
    return useStage(staged, stage);
  }
  /// The value `value` (tile IR before the pipelined loop) has in another
  /// tile: its pure arithmetic cloned with `at` (seeded with that tile's
  /// block coordinates); failure when it depends on anything else.
  virtual mlir::FailureOr<mlir::Value> valueAt(mlir::Value value, mlir::IRMapping &at) = 0;
  /// Whether `value` is pure arithmetic of the kernel's arguments, block
  /// coordinates and tensor dimensions (what valueAt can recompute).
  virtual bool isRecomputable(mlir::Value value) = 0;
  /// The values (not tensors or buffers) `loop`'s body takes from before it.
  virtual llvm::SetVector<mlir::Value> valuesFromBefore(tile::PipelinedOp loop) = 0;
  /// Whether `value` (tile IR) depends on the block coordinates / on any of
  /// `roots`.
  virtual bool dependsOnBlockIndices(mlir::Value value) = 0;
  virtual bool dependsOnAny(mlir::Value value, llvm::ArrayRef<mlir::Value> roots) = 0;

  // Lowering the loop's body.
  /// Lowers one op / the ops of a block at the insertion point.
  virtual mlir::LogicalResult lowerOp(mlir::Operation &op) = 0;
  virtual mlir::LogicalResult lowerBlock(mlir::Block &block) = 0;
  /// Maps `loop`'s induction variable to `iteration`, then walks the body:
  /// clones its index arithmetic and calls `onCopy` for each copy in
  /// `ahead`, in body order. The caller saves and restores valueMap().
  virtual void mapIteration(tile::PipelinedOp loop,
                            const llvm::SmallPtrSetImpl<mlir::Operation *> &ahead,
                            mlir::Value iteration,
                            llvm::function_ref<void(tile::CopyOp)> onCopy) = 0;
  /// Lowers `loop`'s body for iteration `k` on stage `stage` of its staged
  /// buffers (the copies in `ahead` were issued earlier). `inFlight` >= 0:
  /// the body's async MMA keeps that many groups in flight (the loop fenced
  /// the proxies); -1: no async MMA.
  virtual mlir::LogicalResult lowerStagedBody(tile::PipelinedOp loop,
                                              const llvm::SmallPtrSetImpl<mlir::Operation *> &ahead,
                                              mlir::Value k, mlir::Value stage,
                                              int64_t inFlight) = 0;

  // Synchronization bookkeeping beyond the atom's.
  /// The code just emitted ends with a barrier (or a wait that orders the
  /// stage's reads as one): a barrier right after it is elided.
  virtual void noteBarrier() = 0;
  /// Sets what the body's gemms see of the async MMA pipeline
  /// (inAsyncMmaPipeline, asyncMmaInFlight): whether the loop fenced the
  /// proxies, and how many groups stay in flight (or kMmaWaitByStrategy).
  virtual void setAsyncMmaPipeline(bool inPipeline, int64_t inFlight) = 0;
  /// The accumulators async MMAs left in flight (addAsyncAccumulator).
  virtual llvm::ArrayRef<AsyncAccumulator> asyncAccumulators() = 0;
  /// Fences the accumulators left in flight (after the final wait) and
  /// forgets them.
  virtual void fenceAsyncAccumulators() = 0;
  /// Fences the first `regs` slots of a fragment in place (fenceValues).
  virtual void fenceRegisters(mlir::Value fragment, int64_t regs) = 0;
  /// Held accumulators (MmaAtomLowering::holdsAccumulatorAcrossLoop): what
  /// the body's gemms see of them (GemmLoweringContext::accumulatorHeld,
  /// mmaCompletionBarrier), and the gemm services the strategy lends the
  /// atom when it moves them in and out.
  virtual void holdAccumulator(mlir::Value fragment, bool held) = 0;
  virtual void setMmaCompletionBarrier(mlir::Value barrier) = 0;
  virtual GemmLoweringContext &gemmContext() = 0;
  /// The fragments the strategy prefetches for the body's gemm (null: none).
  virtual void setFragmentPrefetch(FragmentPrefetch *prefetch) = 0;
  /// Copies the body's gemm issues after its first fragment loads
  /// (issueDeferredCopies); null to forget them.
  virtual void deferCopies(std::function<void()> issue) = 0;

  // Copies.
  /// The tensor a copy reads or writes as its tile addresses it (a view for
  /// a slice), and the tile's origin in it.
  virtual TensorInfo copyTensor(tile::CopyOp copy) = 0;
  virtual llvm::SmallVector<mlir::Value> copyOffsets(tile::CopyOp copy) = 0;
  /// A distribution for cooperative copies of a tile through shared memory.
  virtual tile::DistributionAttr copyDistribution(tile::BufferType tile,
                                                  mlir::Type globalElementType) = 0;
  /// True when every vector of `vector` elements the copy touches in
  /// `tensor` at `offsets` (tile-level values) is aligned to its size.
  virtual bool isVectorAligned(const TensorInfo &tensor, mlir::ValueRange offsets,
                               int64_t vector) = 0;
  /// Element address in a tensor (or `coords` further than address `from`).
  virtual mlir::Value elementAddress(const TensorInfo &tensor, llvm::ArrayRef<mlir::Value> coords,
                                     mlir::Value from = {}) = 0;
  virtual llvm::SmallVector<mlir::Value> loadGlobal(const TensorInfo &tensor,
                                                    llvm::ArrayRef<mlir::Value> coords,
                                                    int64_t vector, bool aligned) = 0;
  /// This thread's elements of a tensor -> shared copy's source tile, in a
  /// per-thread array, and their store to the copy's destination.
  virtual mlir::Value loadTileToRegisters(tile::CopyOp copy) = 0;
  virtual void storeRegistersToTile(tile::CopyOp copy, mlir::Value registers) = 0;
  /// The tensor coordinates of a chunk of a tile whose origin is `offsets`.
  llvm::SmallVector<mlir::Value> tensorCoords(llvm::ArrayRef<mlir::Value> offsets,
                                              const Chunk &chunk) {
    llvm::SmallVector<mlir::Value> coords;
    for (auto [off, coord] : llvm::zip(offsets, chunk.coords))
      coords.push_back(add(off, coord));
    return coords;
  }
  /// The shared lowering of a copy, without a strategy's epilogue form.
  virtual mlir::LogicalResult lowerCopyDirectly(tile::CopyOp copy) = 0;
  /// The quad-transposed store of an m16n8 fragment to a 16-bit tensor;
  /// false (nothing emitted) for any other copy.
  virtual bool lowerMmaFragmentStore(tile::CopyOp copy) = 0;
  /// This lane's quad index and its bits.
  virtual QuadLanes quadLanes() = 0;
  /// Columns 64 g + 16 t .. + 15 of row 16 mi + 8 h + lane / 4 of the
  /// warp's tile of an m16n8 fragment, converted to the 1-byte `dstElt`, as
  /// a vector<4xi32>.
  virtual mlir::Value byteFragmentChunk(const BufferInfo &frag, mlir::Type dstElt,
                                        const QuadLanes &quad, int64_t mi, int64_t h,
                                        int64_t g) = 0;
  /// stmatrix.x4 of columns [colBegin, colBegin + cols) of each warp's tile
  /// of an m16n8 fragment to the same rows of `dst`.
  virtual void storeMatrices(const BufferInfo &frag, const BufferInfo &dst, int64_t colBegin,
                             int64_t cols) = 0;

  // Shared memory.
  /// The kernel's dynamic shared memory (a memref of bytes).
  virtual mlir::Value sharedBase() = 0;
  /// The shared-window byte address (i64) of a shared buffer element.
  virtual mlir::Value sharedAddress(const BufferInfo &info, llvm::ArrayRef<mlir::Value> coords) = 0;
  /// sharedAddress32 of a chunk of a 2-D tile: its first chunk's offset
  /// plus its row shift where forEachChunk found one.
  mlir::Value chunkSharedAddress(const BufferInfo &info, const Chunk &chunk) {
    if (chunk.shift.size() == 2)
      return sharedAddress32(info, chunk.base, chunk.shift);
    return sharedAddress32(info, chunk.coords);
  }
  /// Where a warp-specialized loop's mbarriers start: after the buffers
  /// tile-plan-shared-memory placed, 8-byte aligned; whether it placed any.
  virtual int64_t mbarrierOffset() = 0;
  bool hasSharedMemory() { return mbarrierOffset() > 0; }
  /// The unstaged shared buffers the code before `loop` accesses that share
  /// bytes with the stages, and where they end once packed after the
  /// mbarriers.
  virtual llvm::SetVector<tile::AllocSharedOp> earlyBuffers(tile::PipelinedOp loop) = 0;
  virtual int64_t packedEnd(llvm::ArrayRef<tile::AllocSharedOp> buffers) = 0;
  /// The shared memory the block needs with the unstaged buffers packed
  /// after the mbarriers (ping-pong, persistent kernels).
  virtual int64_t relocatedSharedBytes() = 0;
  /// Keeps the unstaged buffers packed after the mbarriers (a producer runs
  /// ahead of the code that uses them); whether they are.
  virtual void keepRelocation() = 0;
  virtual bool keepsRelocation() = 0;
  /// The dynamic shared memory the lowered kernel launches with so far.
  virtual int64_t launchSharedBytes() = 0;
  virtual void setLaunchSharedBytes(int64_t bytes) = 0;
  /// Reserves `bytes` of shared memory after what the kernel uses so far,
  /// aligned to `alignment`: their offset, or nullopt when the block's
  /// shared memory cannot hold them.
  std::optional<int64_t> reserveSharedMemory(int64_t bytes, int64_t alignment) {
    int64_t offset = llvm::alignTo(launchSharedBytes(), alignment);
    if (offset + bytes > capabilities().sharedMemoryPerBlock)
      return std::nullopt;
    setLaunchSharedBytes(offset + bytes);
    return offset;
  }

  // The launch.
  /// The block's threads as launched (producers included), fixed by a
  /// strategy that adds warps.
  virtual void setBlockThreads(int64_t threads) = 0;
  /// Thread block clusters of `x` x `y` blocks (the runtime rounds the
  /// grid up to whole clusters; the kernel makes the extra blocks leave).
  virtual void setClusterBlocks(int64_t x, int64_t y) = 0;
  /// Tiles of the grid one block runs (ping-pong: 2).
  virtual void setTilesPerBlock(int64_t tiles) = 0;
  /// A tensor-map parameter for kernel argument `tensor` (`box` outermost
  /// first, `swizzle` bytes), encoded by the runtime; null on failure.
  virtual mlir::Value addTensorMap(mlir::Value tensor, llvm::ArrayRef<int64_t> box,
                                   int64_t swizzle) = 0;
  /// Bulk tensor stores were issued: thread 0 waits for them at the end.
  virtual void noteBulkStoresPending() = 0;

  // The kernel's schedules (tile.kernel's ping-pong, persistent, stream-K)
  // and the warp-specialized loop.
  virtual bool pingPong() = 0;
  virtual bool persistent() = 0;
  virtual bool streamK() = 0;
  /// The thread's index in the launched block (threadId() is its index
  /// among its tile's threads; they differ under ping-pong).
  virtual mlir::Value launchedThreadId() = 0;
  /// The consumers' thread count in a kernel with a warp-specialized loop;
  /// 0 otherwise. The loop, if any.
  virtual int64_t consumerThreads() = 0;
  virtual tile::PipelinedOp specializedLoop() = 0;
  /// Where the once-per-block code of a warp-specialized loop goes (null:
  /// before tileLoop()).
  virtual mlir::Operation *onceAnchor() = 0;
  /// Ping-pong: blockIdx.y, and the tile slot (0 or 1) of this thread.
  virtual mlir::Value blockIdY() = 0;
  virtual mlir::Value tileSlot() = 0;
  /// A persistent kernel's loop over the grid's tiles, and the per-thread
  /// counter of the ring positions its earlier tiles used.
  virtual mlir::scf::ForOp tileLoop() = 0;
  virtual mlir::Value ringBase() = 0;
  /// The grid's extent along `dim`, and the block coordinates of linear
  /// tile `t` (x fastest).
  virtual mlir::Value gridExtent(unsigned dim) = 0;
  virtual llvm::SmallVector<mlir::Value> tileCoords(mlir::Value t) = 0;
  /// Stream-K: the consumers' current tile, and the grid's tiles that run
  /// whole.
  virtual mlir::Value workTile() = 0;
  virtual mlir::Value streamKWholeTiles() = 0;
  /// Stream-K: runs `body` with the decomposition recomputed at the
  /// insertion point (values from before a branch would stay live into it),
  /// then restores it.
  virtual mlir::LogicalResult
  withStreamKRecomputed(tile::PipelinedOp loop, llvm::function_ref<mlir::LogicalResult()> body) = 0;
  /// The loop over this block's stream-K work items (iteration values
  /// `iterArgs`), the insertion point inside it; `tile`, `begin`, `end` the
  /// item's.
  virtual mlir::scf::ForOp emitWorkItems(mlir::ValueRange iterArgs, mlir::Value &tile,
                                         mlir::Value &begin, mlir::Value &end) = 0;
};

} // namespace tessera::lowering

#endif // TESSERA_CONTRACT_PIPELINELOWERINGCONTEXT_H
