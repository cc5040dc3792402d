//===- TmaWarpSpecializedPlan.cpp - When sm90 warp-specializes a loop -----===//
//
// Whether the TMA warp-specialized strategy can run a tile.pipelined loop,
// and with which schedule (ping-pong): the producer warpgroup must be able
// to issue every staged copy as a bulk tensor copy, recompute what the loop
// takes from before it, and find room for its mbarriers and for the shared
// buffers moved out of the stages' way.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/TmaWarpSpecialized.h"

#include "backends/sm90/MmaOverlap.h"
#include "lowering/TileQueries.h"

namespace tessera::sm90 {

using namespace mlir;
using namespace tessera::lowering;
using namespace tessera::tile;
using lowering::PipelineLoweringContext;

namespace {

/// Why a 1-D tile of a 1-D tensor (a mask, a bias) cannot be one bulk
/// tensor copy of a 1-D tensor map without swizzle, or "": no conversion,
/// at most 256 elements, a multiple of 16 bytes (TMA's box), a tensor whose
/// base the runtime aligns to 16 bytes.
std::string whyNoLinearBulkTensorCopy(PipelineLoweringContext &kl, CopyOp copy) {
  const lowering::TensorInfo &tensor = kl.tensor(copy.getSrc());
  auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>();
  if (!alloc)
    return "its destination is not a shared buffer";
  if (tensor.type.getElementType() != alloc.getType().getElementType())
    return "it converts the element type";
  int64_t elements = copy.getTileType().getShape()[0];
  int64_t bytes = elements * getElementBytes(tensor.type.getElementType());
  if (elements > 256)
    return "its box exceeds 256 elements";
  if (bytes % 16 != 0)
    return "its 1-D tile of " + std::to_string(bytes) + " bytes is not a multiple of 16 bytes";
  return "";
}

/// The most dimensions a tensor map has (cuTensorMapEncodeTiled).
constexpr int64_t kMaxTensorMapRank = 5;

/// Why `copy` (tensor -> staged shared buffer) cannot be one bulk tensor
/// copy (TMA) per panel, or "": a 2-D tile of a 2-D tensor, or of a tensor
/// of rank up to 5 that it slices (tensor_dims: the map's box is 1 on the
/// fixed dimensions, whose offsets become coordinates), no conversion, a
/// swizzled buffer (or one without swizzle whose rows are whole 16-byte
/// units: the box lands as dense rows, the buffer's own layout, so small
/// tiles beside the operands, a k-block's row of scales, travel in the
/// operands' stages), a row pitch the tensor's divisibility proves a
/// multiple of 16 bytes, boxes of at most 256 rows and columns.
std::string whyNoBulkTensorCopy(PipelineLoweringContext &kl, CopyOp copy) {
  if (copy.getUntil())
    return "its tile ends early ('until'), which a tensor map's bounds cannot express";
  const lowering::TensorInfo &tensor = kl.tensor(copy.getSrc());
  if (tensor.addressFromData)
    return "its tensor is a tile.view, whose address is read from data, and a tensor map is "
           "built by the host from a known address";
  int64_t rank = tensor.type.getRank();
  if (copy.getTileType().getRank() == 1 && rank == 1)
    return whyNoLinearBulkTensorCopy(kl, copy);
  if (copy.getTileType().getRank() != 2)
    return "its tile is rank " + std::to_string(copy.getTileType().getRank()) +
           ", and bulk tensor copies here move 2-D tiles";
  if (rank != 2 && !copy.getTensorDims())
    return "its tensor is rank " + std::to_string(rank) + ", and the tile does not slice it";
  if (rank > kMaxTensorMapRank)
    return "its tensor is rank " + std::to_string(rank) + ", over the " +
           std::to_string(kMaxTensorMapRank) + " dimensions of a tensor map";
  auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>();
  if (!alloc)
    return "its destination is not a shared buffer";
  BufferType dst = alloc.getType();
  bool swizzled = alloc.getSwizzled();
  SharedSwizzle swizzle = getSharedSwizzle(dst);
  if (swizzled && swizzle.rowBytes == 0)
    return "its buffer's rows are not a multiple of 32 bytes";
  if (tensor.type.getElementType() != dst.getElementType())
    return "it converts the element type";
  int64_t element = getElementBytes(tensor.type.getElementType());
  ArrayRef<int64_t> tile = copy.getTileType().getShape();
  if (!swizzled && (tile[1] * element) % 16 != 0)
    return "its destination is not swizzled, and its rows of " + std::to_string(tile[1] * element) +
           " bytes are not a multiple of 16 bytes";
  // Every stride is a multiple of the innermost dimension's size.
  if ((tensor.divisors.back() * element) % 16 != 0)
    return "the tensor's row pitch is not known to be a multiple of 16 bytes";
  // A swizzled box is one panel wide; an unswizzled one the whole tile.
  int64_t boxColumns = swizzled ? swizzle.rowBytes / element : tile[1];
  if (tile[0] > 256 || boxColumns > 256)
    return "its box exceeds 256 rows or columns";
  return "";
}

/// The name of the shared buffer a copy writes, for messages.
std::string destinationName(CopyOp copy) {
  auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>();
  return alloc && alloc.getName() ? ("'" + alloc.getName()->str() + "'") : "a shared buffer";
}

/// Whether `v` is a fragment (registers of the consumer threads).
bool isFragment(Value v) {
  auto type = dyn_cast<BufferType>(v.getType());
  return type && type.isFragment();
}

/// Why the consumers cannot run `op` between the stages, or "". They run
/// everything but the copies ahead: the async MMA, plain arithmetic, and
/// computation whose results stay in their registers (clears, fills,
/// reductions and parallel loops writing fragments; a parallel loop may read
/// shared buffers, the staged ones included, which the full barrier orders).
/// Writes to shared memory between the stages would need the async proxy's
/// fences before the MMAs read it, and copies other than the staged ones are
/// the producer's or the kernel's business, not the ring's.
std::string whyConsumersCannotRun(Operation &op) {
  auto name = [&] { return "'" + op.getName().getStringRef().str() + "'"; };
  if (isa<GemmOp, DimOp, ReadOp>(op) || lowering::isPlainArithmetic(&op))
    return "";
  if (auto branch = dyn_cast<IfOp>(op)) {
    // The consumers take the branch: what it holds, they must run.
    for (Region &region : branch->getRegions())
      for (Block &block : region)
        for (Operation &inner : block.without_terminator())
          if (std::string why = whyConsumersCannotRun(inner); !why.empty())
            return why;
    return "";
  }
  if (auto clear = dyn_cast<ClearOp>(op))
    return isFragment(clear.getBuffer()) ? "" : name() + " clears a shared buffer";
  if (auto fill = dyn_cast<FillOp>(op))
    return isFragment(fill.getBuffer()) ? "" : name() + " fills a shared buffer";
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return isFragment(reduce.getSrc()) && isFragment(reduce.getDst())
               ? ""
               : name() + " reduces to or from a shared buffer";
  if (auto parallel = dyn_cast<ParallelOp>(op)) {
    std::string why;
    parallel.walk([&](Operation *inner) {
      if (auto store = dyn_cast<StoreOp>(inner)) {
        if (!isFragment(store.getBuffer()))
          why = name() + " stores into a shared buffer";
      } else if (!isa<LoadOp, YieldOp, CastOp>(inner) && inner != parallel.getOperation() &&
                 !lowering::isPlainArithmetic(inner)) {
        why = name() + " holds '" + inner->getName().getStringRef().str() + "'";
      }
    });
    return why;
  }
  if (isa<CopyOp>(op))
    return name() + " is not a copy from global memory into a staged shared buffer";
  return name() + " is not a gemm, arithmetic, or a clear, fill, reduction or parallel loop "
                  "on fragments";
}

/// Why a loop's body cannot run between a producer's stages, or "": the
/// copies ahead must be bulk tensor copies, the rest what the consumers can
/// run (whyConsumersCannotRun), and what the loop takes from before it
/// recomputable by the producer.
std::string whyBodyNotSpecializable(PipelineLoweringContext &kl, PipelinedOp loop,
                                    const PipelineLoopPlan &plan) {
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (plan.ahead.contains(&op)) {
      auto copy = cast<CopyOp>(op);
      std::string why = whyNoBulkTensorCopy(kl, copy);
      if (!why.empty())
        return "the copy into " + destinationName(copy) + " cannot be a bulk tensor copy: " + why;
    } else if (std::string why = whyConsumersCannotRun(op); !why.empty()) {
      return "the consumers cannot run the body between the stages: " + why;
    }
  }
  // The producer leaves before the kernel's own code and computes what the
  // loop takes from before it anew (per tile under ping-pong, persistence
  // and stream-K): that must be arithmetic of the block coordinates and the
  // kernel's arguments.
  for (Value v : kl.valuesFromBefore(loop))
    if (!kl.isRecomputable(v))
      return "a value the body takes from before the loop is not arithmetic of the block "
             "coordinates and kernel arguments (the producer recomputes it)";
  if (!kl.isRecomputable(loop.getCount()))
    return "the iteration count is not arithmetic of the block coordinates and kernel "
           "arguments (the producer recomputes it)";
  return "";
}

/// Clusters of n = `multicast_blocks` blocks along x (tile.kernel's
/// `multicast`) share the loads of the loop's largest copy of at least n
/// panels: each block loads 1/n of its panels and multicasts them to all
/// (TmaWarpSpecialized.cpp). Not on targets without clusters, under
/// ping-pong, or in a persistent kernel whose iteration count depends on the
/// tile (the cluster's blocks must share ring positions).
void planMulticast(PipelineLoweringContext &kl, PipelinedOp loop, PipelineLoopPlan &plan,
                   WarpSpecializedParams &params) {
  KernelOp kernel = kl.kernel();
  if (!kernel.getMulticast())
    return;
  int64_t blocks = kernel.getMulticastBlocks().value_or(2);
  bool wideEnough = false;
  for (Operation *op : plan.ahead)
    if (auto alloc = cast<CopyOp>(op).getDst().getDefiningOp<AllocSharedOp>())
      wideEnough |= getSharedSwizzle(alloc.getType()).panels >= blocks;
  const char *why = nullptr;
  if (!kl.capabilities().hasClusters)
    why = "the target has no thread block clusters";
  else if (params.pingPong)
    why = "not with the ping-pong schedule";
  else if (!wideEnough)
    why = "no copy of at least as many panels as the cluster has blocks";
  else if (kl.persistent() && kl.dependsOnBlockIndices(loop.getCount()))
    why = "the iteration count depends on the tile (a persistent kernel)";
  if (why)
    plan.remarks.push_back(std::string("multicast not applied: ") + why);
  else
    params.multicastBlocks = blocks;
}

/// The rotated two-gemm schedule (MmaOverlap.h) for a body that takes it,
/// with the consumer warpgroups taking turns when there are several: while
/// one runs the work between its gemms, the tensor cores run the others'.
/// Not with the ping-pong schedule, persistence or multicast, whose rings
/// release stages by their own rules; not with an MMA group in flight
/// across iterations (the rotation places every wait itself).
void planMmaOverlap(PipelineLoweringContext &kl, PipelinedOp loop, PipelineLoopPlan &plan,
                    WarpSpecializedParams &params) {
  std::string why;
  MmaOverlapSplit split = splitForMmaOverlap(loop, plan.ahead, why);
  if (!split.last) {
    if (split.twoGemms)
      plan.remarks.push_back("the two gemms do not overlap across iterations: " + why);
    return;
  }
  if (params.pingPong || kl.persistent() || params.multicastBlocks || plan.inFlight != 0)
    return;
  // The strategy's waits count MMA groups: both gemms must be async MMAs
  // whose groups outlive the gemm (wgmma's).
  for (GemmOp gemm : {split.first, split.last}) {
    std::optional<MmaAtom> atom =
        findMmaAtom(gemm, kl.backend(), kl.computeCapability(), kl.kernel().getThreads());
    if (!atom || !atom->readsSharedAsync || !atom->lowering ||
        !atom->lowering->keepsMmaInFlight()) {
      plan.remarks.push_back("the two gemms do not overlap across iterations: a gemm's atom does "
                             "not leave asynchronous MMA groups in flight");
      return;
    }
  }
  params.mmaOverlap = true;
  int64_t warpgroups = kl.kernel().getThreads() / 128;
  // Named barriers kFirstTurnBarrier + w, at most 16 in all.
  if (warpgroups >= 2 && kFirstTurnBarrier + warpgroups <= 16 && split.turnsSafe)
    params.warpgroupTurns = warpgroups;
  else if (warpgroups >= 2 && !split.turnsSafe)
    plan.remarks.push_back("the consumer warpgroups do not take turns: the ops issued beside "
                           "the gemms read shared memory or reduce across warps");
}

} // namespace

std::string TmaWarpSpecializedPipeline::tryPlan(PipelineLoweringContext &kl, PipelinedOp loop,
                                                PipelineLoopPlan &plan) const {
  const TargetCapabilities &caps = kl.capabilities();
  KernelOp kernel = kl.kernel();
  int64_t threads = kernel.getThreads();
  if (plan.ahead.empty())
    return "the loop copies nothing into staged shared buffers";
  if (!caps.hasBulkTensorCopy || !caps.hasMbarrier)
    return "the target has no bulk tensor copies and mbarriers";
  if (!plan.asyncMma)
    return "no gemm of the body reads shared memory asynchronously (a wgmma or tcgen05 atom)";
  auto topLevel = kernel.getBodyBlock().getOps<PipelinedOp>();
  if (loop->getBlock() != &kernel.getBodyBlock() || *topLevel.begin() != loop)
    return "only the kernel's first top-level pipelined loop can run on a producer warpgroup";
  if (threads % 128 != 0)
    return "the kernel's " + std::to_string(threads) + " threads are not whole warpgroups";
  if (threads + 128 > caps.maxThreadsPerBlock)
    return "a producer warpgroup beside the kernel's " + std::to_string(threads) +
           " threads exceeds the limit of " + std::to_string(caps.maxThreadsPerBlock);
  if (plan.stages < 2)
    return "the loop has fewer than 2 stages";
  // The mbarriers (16 bytes a stage) go after the planned buffers.
  if (kl.mbarrierOffset() + 16 * plan.stages > caps.sharedMemoryPerBlock)
    return "the stages' mbarriers (16 bytes each) after the planned " +
           std::to_string(kl.mbarrierOffset()) + " bytes exceed the " +
           std::to_string(caps.sharedMemoryPerBlock) + "-byte per-block limit";
  std::string why = whyBodyNotSpecializable(kl, loop, plan);
  if (!why.empty())
    return why;
  // The ping-pong schedule doubles the consumers and the shared buffers
  // other than this loop's stages (the ring the two tiles share), and needs
  // this loop to be the kernel's only one; so does a persistent kernel's
  // producer, which runs its own loop over the block's tiles. Their other
  // shared buffers move after the mbarriers.
  int64_t loops = 0;
  kernel.walk([&](PipelinedOp) { ++loops; });
  bool relocatedFits = kl.relocatedSharedBytes() <= caps.sharedMemoryPerBlock;
  if (kl.persistent() && loops != 1)
    return "a persistent kernel's producer needs this loop to be the kernel's only one";
  if (kl.persistent() && !relocatedFits)
    return "the persistent kernel's shared buffers moved after the mbarriers need " +
           std::to_string(kl.relocatedSharedBytes()) + " bytes, over the " +
           std::to_string(caps.sharedMemoryPerBlock) + "-byte per-block limit";
  // The consumers keep one wgmma group in flight (iteration k releases
  // iteration k - 1's stage) unless the body reads the accumulators or A
  // from registers; then every group completes within its iteration, which
  // releases its own stage.
  plan.inFlight = plan.mayKeepMmaInFlight ? 1 : 0;
  WarpSpecializedParams params;
  params.pingPong =
      kl.pingPong() && loops == 1 && 2 * threads + 128 <= caps.maxThreadsPerBlock && relocatedFits;
  planMulticast(kl, loop, plan, params);
  planMmaOverlap(kl, loop, plan, params);
  // Held accumulators release each stage from the MMAs' own completion,
  // which signals this block's barrier only: not with multicast, nor with
  // ping-pong (both tiles' consumers would share one accumulator's storage).
  params.holdAccumulators =
      plan.accumulatorsHoldable && !params.pingPong && params.multicastBlocks == 0;
  plan.params = std::make_shared<WarpSpecializedParams>(params);
  if (params.pingPong || kl.persistent() || !kl.hasSharedMemory())
    return "";
  // A grid-launched kernel's producer fills the stages from the kernel's
  // start, while the consumers run the code before the loop: the buffers
  // that code uses move after the mbarriers, where they must fit.
  llvm::SetVector<AllocSharedOp> early = kl.earlyBuffers(loop);
  if (early.empty())
    return "";
  int64_t end = kl.packedEnd(early.getArrayRef());
  if (end <= caps.sharedMemoryPerBlock)
    return "";
  std::string uses;
  llvm::raw_string_ostream os(uses);
  llvm::interleaveComma(early, os, [&](AllocSharedOp alloc) {
    os << (alloc.getName() ? *alloc.getName() : StringRef("<unnamed>")) << " ("
       << getBufferBytes(alloc.getType()) << " bytes)";
  });
  return "the producer fills the stages while the code before the loop uses " + uses +
         ", planned on the stages' bytes, and after the mbarriers they would need " +
         std::to_string(end) + " bytes, over the " + std::to_string(caps.sharedMemoryPerBlock) +
         "-byte per-block limit";
}

} // namespace tessera::sm90
