//===- TmaWarpSpecialized.cpp - sm90's warp-specialized pipelining --------===//
//
// The TMA warp-specialized strategy of tile.pipelined: a producer warpgroup
// fills a ring of stages (StageRing.h) with bulk tensor copies, optionally
// multicast in a cluster; the kernel's own threads (the consumers) wait on
// each stage's "full" mbarrier, run the body, and release the stage on its
// "empty" one once the MMAs reading it are done. No block barrier per
// iteration; registers move from the producer to the consumers with
// setmaxnreg. Under the ping-pong schedule two tiles' consumers share the
// ring; in persistent and stream-K kernels the producer runs its own loop
// over the block's tiles or work items.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/TmaWarpSpecialized.h"

#include "contract/NvvmOps.h"
#include "backends/sm90/StageRing.h"
#include "backends/sm90/WarpSpecializedLoop.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"

#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include <functional>
#include <optional>

namespace tessera::sm90 {

using namespace mlir;
using namespace tessera::lowering;
using namespace tessera::tile;
using lowering::PipelineLoweringContext;

namespace detail {


LogicalResult WarpSpecializedLoop::collectTensorMaps() {
  // Clusters of `clusterBlocks` blocks multicast the largest copy of at
  // least as many panels (chooseMulticast).
  int64_t largestSharedBytes = 0;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (!ahead.contains(&op))
      continue;
    auto copy = cast<CopyOp>(op);
    const BufferInfo &dst = kl.buffer(copy.getDst());
    int64_t element = getElementBytes(dst.type.getElementType());
    int64_t rows = copy.getTileType().getShape()[0];
    int64_t columns = dst.swizzle.rowBytes / element;
    int64_t bytes = dst.type.getNumElements() * element;
    // A 1-D tile (TmaWarpSpecializedPlan.cpp): one box of the whole tile,
    // no swizzle; a 2-D tile of a buffer without swizzle: one box of the
    // whole tile, its rows dense.
    bool linear = dst.type.getRank() == 1;
    if (linear)
      columns = rows;
    else if (dst.swizzle.rowBytes == 0)
      columns = dst.type.getShape()[1];
    stageBytes += bytes;
    if (dst.swizzle.panels >= clusterBlocks && bytes > largestSharedBytes) {
      largestSharedBytes = bytes;
      largestShared = copy;
    }
    SmallVector<int64_t> box = {rows, columns};
    if (linear)
      box = {columns};
    else if (std::optional<ArrayRef<int64_t>> spanned = copy.getTensorDims()) {
      box.assign(kl.tensor(copy.getSrc()).type.getRank(), 1);
      box[(*spanned)[0]] = rows;
      box[(*spanned)[1]] = columns;
    }
    auto it = llvm::find_if(maps, [&](const Map &map) {
      return map.tensor == copy.getSrc() && map.box == box && map.columns == columns &&
             map.swizzle == dst.swizzle.rowBytes;
    });
    if (it == maps.end()) {
      Value arg = kl.addTensorMap(copy.getSrc(), box, dst.swizzle.rowBytes);
      if (!arg)
        return failure();
      maps.push_back({copy.getSrc(), box, columns, dst.swizzle.rowBytes, arg});
      it = std::prev(maps.end());
    }
    mapOf[&op] = it - maps.begin();
  }
  return success();
}

void WarpSpecializedLoop::chooseMulticast() {
  // Clusters of n = `clusterBlocks` blocks along x (KernelOp `multicast`
  // and `multicast_blocks`; the runtime launches a multiple of n blocks):
  // where all blocks of a cluster load the same tile of the largest copy
  // (whole panels, at least n) in every iteration, each loads 1/n of its
  // panels (rank r panels [rP/n, (r+1)P/n)) and multicasts them to all,
  // which cuts that copy's traffic from L2 to 1/n. Whether they do is
  // decided per tile, by all blocks alike: each recomputes the values the
  // copy's offsets and the iteration count take from before the loop
  // (`multicastKey`) at its peers' coordinates (blocks x ^ j, 0 < j < n, of
  // a grid launch, linear tiles t ^ j of a persistent one; stream-K: whole
  // tiles only) and compares them with its own. A raster order that puts
  // tile rows of one column side by side groups most tiles; the rest load
  // alone. A persistent kernel's blocks share ring positions only if every
  // tile runs the same iteration count.
  // Whether it applies was planned (TmaWarpSpecializedPlan.cpp).
  if (multicastPlanned && largestShared) {
    multicastCopy = largestShared;
    SmallVector<Value> work(multicastCopy.getSrcOffsets().begin(),
                            multicastCopy.getSrcOffsets().end());
    work.push_back(loop.getCount());
    llvm::DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second || v == loop.getInductionVar() ||
          matchPattern(v, m_Constant()))
        continue;
      Operation *def = v.getDefiningOp();
      if (def && loop->isProperAncestor(def))
        llvm::append_range(work, def->getOperands());
      else
        multicastKey.insert(v);
    }
  }
  if (multicastCopy)
    kl.setClusterBlocks(clusterBlocks, 1);
  kl.setBlockThreads(consumers + 128);
}

void WarpSpecializedLoop::emitPingPongSlots() {
  // Ping-pong: slot 1 runs tile y + 1 of the pair only when the grid has
  // it (an odd extent leaves the last block one tile); otherwise its
  // threads leave now (barriers over all threads stop counting them).
  kl.setTilesPerBlock(tiles);
  slot = kl.tileSlot();
  secondTile = kl.lt(kl.add(kl.mul(kl.blockIdY(), kl.cst(2)), kl.cst(1)), kl.gridExtent(1));
  Value alone =
      arith::XOrIOp::create(b, loc, secondTile, arith::ConstantIntOp::create(b, loc, 1, 1));
  // Inline PTX: nvvm.exit is noreturn to LLVM, which then duplicates the
  // paths around it (other branches, more exit instructions).
  kl.ifThen(kl.andi(kl.eq(slot, kl.cst(1)), alone), [&] { kl.ptx("exit;", "", {}); });
}

FailureOr<Value> WarpSpecializedLoop::agree(IRMapping &ownAt, IRMapping &peerAt,
                                            Value peerPresent) {
  Value both = peerPresent;
  for (Value v : multicastKey) {
    FailureOr<Value> own = kl.valueAt(v, ownAt);
    FailureOr<Value> theirs = succeeded(own) ? kl.valueAt(v, peerAt) : own;
    if (failed(theirs))
      return loop.emitOpError() << "a value the multicast copy uses depends on more than the "
                                   "block coordinates and kernel arguments";
    both = kl.andi(both, kl.eq(*own, *theirs));
  }
  return both;
}

FailureOr<Value>
WarpSpecializedLoop::agreeWithPeers(IRMapping &ownAt,
                                    llvm::function_ref<Value(int64_t, IRMapping &)> peer) {
  // Whether every peer j (0 < j < n) agrees: `peer` maps the block
  // coordinates to peer j's and returns whether that peer is present.
  Value all;
  for (int64_t j = 1; j < clusterBlocks; ++j) {
    IRMapping peerAt;
    Value present = peer(j, peerAt);
    FailureOr<Value> both = agree(ownAt, peerAt, present);
    if (failed(both))
      return failure();
    all = kl.andi(all, *both);
  }
  return all;
}

FailureOr<Value> WarpSpecializedLoop::agreeOnTile(IRMapping &ownAt, Value tile,
                                                  Value tileCount) {
  // The peers of linear tile t (a persistent kernel): tiles t ^ j, if any.
  ArrayRef<BlockArgument> indices = kl.kernel().getBlockIndices();
  return agreeWithPeers(ownAt, [&](int64_t j, IRMapping &peerAt) {
    Value peerTile = arith::XOrIOp::create(b, loc, tile, kl.cst(j));
    for (auto [index, coord] : llvm::zip(indices, kl.tileCoords(peerTile)))
      peerAt.map(index, coord);
    return kl.lt(peerTile, tileCount);
  });
}

LogicalResult WarpSpecializedLoop::synchronizeBlocks() {
  // After the barriers' initialization: the block's threads, or a
  // cluster's blocks, synchronize before anyone uses them.
  if (multicastCopy)
    rank = clusterCtaRank(b, loc);
  auto clusterBarrier = [&] {
    clusterArrive(b, loc);
    clusterWait(b, loc);
  };
  if (multicastCopy && !kl.persistent()) {
    // A grid launch: the block's one tile, and its peers' (blocks x ^ j; a
    // block past the grid's x leaves, its peers load alone). All blocks
    // agree, so all or none pass the cluster barrier that makes the peers'
    // barriers ready before anyone multicasts or arrives remotely.
    ArrayRef<BlockArgument> indices = kl.kernel().getBlockIndices();
    Value x = kl.valueMap().lookup(indices[0]);
    Value present = kl.lt(x, kl.gridExtent(0));
    IRMapping ownAt;
    FailureOr<Value> all = agreeWithPeers(ownAt, [&](int64_t j, IRMapping &peerAt) {
      Value peerX = arith::XOrIOp::create(b, loc, x, kl.cst(j));
      peerAt.map(indices[0], peerX);
      return kl.lt(peerX, kl.gridExtent(0));
    });
    if (failed(all))
      return failure();
    multicast = kl.andi(present, *all);
    auto sync = scf::IfOp::create(b, loc, multicast, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard branch(b);
      b.setInsertionPoint(sync.thenBlock()->getTerminator());
      clusterBarrier();
      b.setInsertionPoint(sync.elseBlock()->getTerminator());
      gpu::BarrierOp::create(b, loc);
    }
    kl.ifThen(arith::XOrIOp::create(b, loc, present, arith::ConstantIntOp::create(b, loc, 1, 1)),
              [&] { kl.ptx("exit;", "", {}); }); // inline PTX: nvvm.exit is noreturn
  } else if (multicastCopy) {
    // A persistent kernel: every block passes the cluster barrier once.
    clusterBarrier();
  } else {
    gpu::BarrierOp::create(b, loc);
  }
  return success();
}

LogicalResult WarpSpecializedLoop::emit() {
  if (failed(collectTensorMaps()))
    return failure();
  chooseMulticast();

  // What runs once per block (the barriers' setup, the producer, the
  // register rebalance) goes to onceAnchor() at the kernel's start, or
  // before a persistent kernel's loop over tiles (its producer then loops
  // over the block's tiles itself); there every thread of the block still
  // runs, and synchronizes on the block's barrier. The consumers' part
  // stays where the loop is, after their code before it (planning chose
  // this loop before the kernel was lowered, so that code ran on them
  // alone, with their named barrier), whose generic shared writes are
  // fenced for the MMAs' async proxy here.
  if (kl.genericSharedWrites()) {
    kl.fenceProxyAsync();
    kl.barrier();
  }
  OpBuilder::InsertPoint atLoop = b.saveInsertionPoint();
  b.setInsertionPoint(kl.onceAnchor() ? kl.onceAnchor() : kl.tileLoop().getOperation());
  // Shared buffers besides the stages move after the mbarriers
  // (keepRelocation) when the producer runs ahead of another
  // tile's consumers, or (relocateEarlyBuffers) of the code before the loop.
  if (kl.pingPong() || kl.persistent())
    kl.keepRelocation();

  // mbarriers after the planned buffers: full[s], then empty[s].
  kl.setLaunchSharedBytes(kl.keepsRelocation()
                              ? std::max(kl.relocatedSharedBytes(), barrierOffset + 16 * stages)
                              : barrierOffset + 16 * stages);
  Value sharedStart = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, kl.sharedBase());
  ring.emplace(kl, sharedStart, barrierOffset, stages);
  zero = kl.cst(0);
  if (kl.pingPong())
    emitPingPongSlots();

  // Thread 0 initializes the barriers; everyone sees them after the barrier.
  // In clusters, each stage's "empty" barrier counts the consumer warps of
  // all n blocks (any block's producer may write the stage in all): a tile
  // that multicasts releases it once here and once in each peer, one that
  // does not n times here.
  // Held accumulators: the issuing thread's MMA completion arrives once.
  int64_t emptyCount = holdAccumulators ? 1
                       : multicastCopy  ? clusterBlocks * threads / 32
                                        : threads;
  kl.ifThen(kl.isThread(0), [&] { ring->init(emptyCount); });
  if (failed(synchronizeBlocks()))
    return failure();

  // Register budget: the producer gives registers back to the consumers
  // (setmaxnreg) when the block's default share would be tight.
  int64_t blockThreads = consumers + 128;
  int64_t share = std::min<int64_t>(kl.capabilities().registersPerThread,
                                    kl.capabilities().registersPerSM / blockThreads / 8 * 8);
  // setmaxnreg.inc takes registers only from the pool the block's own
  // setmaxnreg.dec released (the producer's 128 threads, share - 40 each):
  // asking the consumers for more than that pool holds blocks them forever
  // (four consumer warpgroups at 96 registers: 104, not the 112 the SM's
  // total would allow). ptxas gives a kernel with setmaxnreg exactly its
  // launch-bound share.
  consumerRegs = std::min<int64_t>(
      240, (share + (share - kProducerRegisters) * 128 / consumers) / 8 * 8);
  rebalance = kl.capabilities().hasWarpgroupMma && share < kl.capabilities().registersPerThread &&
              consumerRegs > share;
  if (failed(emitProducer()))
    return failure();

  // The consumers: the kernel's own threads.
  if (rebalance)
    setMaxRegisters(b, loc, consumerRegs, /*increase=*/true);
  b.restoreInsertionPoint(atLoop);
  return emitConsumers();
}


void WarpSpecializedLoop::release(Value stage) {
  // A stage goes back to the producer: in clusters, with one arrival per
  // consumer warp, to all blocks' producers where the tile multicasts (any
  // writes it here), n times to this block's otherwise.
  if (!multicastCopy) {
    ring->consumerRelease(stage);
    return;
  }
  // Each warp's first lane, once the warp's MMAs are done.
  kl.ifThen(firstLane, [&] {
    Value arrivals = arith::SelectOp::create(
        b, loc, multicast, arith::ConstantIntOp::create(b, loc, i32, 1),
        arith::ConstantIntOp::create(b, loc, i32, clusterBlocks));
    ring->consumerRelease(stage, arrivals);
    kl.ifThen(multicast, [&] {
      for (Value peerOffset : peerOffsets)
        ring->consumerReleaseRemote(stage, peerOffset);
    });
  });
}

LogicalResult WarpSpecializedLoop::emitConsumers() {
  kl.noteSharedAccess();
  // Ping-pong: slot 1's iterations follow slot 0's in the ring, and it
  // starts when slot 0 has left its loop (named barrier kOrderBarrier, both
  // slots). Persistent: this tile's iterations follow the block's earlier
  // tiles'.
  Value base;
  if (kl.persistent())
    base = memref::LoadOp::create(b, loc, kl.ringBase(), ValueRange{zero});
  if (kl.pingPong()) {
    IRMapping at;
    at.map(kl.kernel().getBlockIndices()[1], kl.mul(kl.blockIdY(), kl.cst(2)));
    FailureOr<Value> firstCount = kl.valueAt(loop.getCount(), at);
    if (failed(firstCount))
      return loop.emitOpError() << "ping-pong: the iteration count depends on more than the "
                                   "block coordinates and kernel arguments";
    base = kl.mul(slot, *firstCount);
    kl.ifThen(kl.eq(slot, kl.cst(1)),
              [&] { namedBarrierSync(b, loc, kOrderBarrier, consumers); });
  }
  if (multicastCopy && kl.persistent()) {
    // This tile (stream-K: a whole one) and its peers'.
    IRMapping ownAt;
    Value tile = kl.streamK() ? kl.workTile() : kl.tileLoop().getInductionVar();
    Value tileCount = kl.streamK() ? kl.streamKWholeTiles() : kl.tileLoop().getUpperBound();
    FailureOr<Value> all = agreeOnTile(ownAt, tile, tileCount);
    if (failed(all))
      return failure();
    multicast = kl.streamK() ? kl.andi(kl.lt(tile, tileCount), *all) : *all;
  }
  if (multicastCopy) {
    Value local = ring->full(zero);
    for (int64_t j = 1; j < clusterBlocks; ++j) {
      Value peer =
          arith::XOrIOp::create(b, loc, rank, arith::ConstantIntOp::create(b, loc, i32, j));
      Value remote = mapaShared(b, loc, local, peer);
      peerOffsets.push_back(arith::SubIOp::create(b, loc, remote, local));
    }
    firstLane = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, kl.launchedThreadId(), kl.cst(32)), zero);
  }
  if (mmaOverlap)
    return emitOverlappedConsumers(base);
  if (holdAccumulators && failed(moveHeldAccumulators(kl, loop, /*enter=*/true)))
    return failure();
  auto forOp = scf::ForOp::create(b, loc, zero, count, kl.cst(1));
  consumerLoop = forOp;
  {
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    StageRing::Position pos = ring->at(base, k);
    ring->consumerWait(pos);
    kl.noteBarrier(); // the full barrier orders this stage's reads
    // Held accumulators: the MMAs release the stage themselves when they
    // complete (and keep no group in flight).
    if (holdAccumulators)
      kl.setMmaCompletionBarrier(ring->empty(pos.stage));
    LogicalResult lowered = kl.lowerStagedBody(loop, ahead, k, pos.stage, inFlight);
    kl.setMmaCompletionBarrier(Value());
    if (failed(lowered))
      return failure();
    if (inFlight == 0) {
      // Every MMA of iteration k is complete, and the body's other reads of
      // the stage were synchronous: it goes back to the producer now.
      if (!holdAccumulators)
        release(pos.stage);
      return finishConsumers(count, base);
    }
    // The MMAs of iteration k - 1 are complete (one group stays in flight):
    // its stage goes back to the producer.
    Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, k, zero);
    auto afterFirst = scf::IfOp::create(b, loc, positive, false);
    b.setInsertionPoint(afterFirst.thenBlock()->getTerminator());
    Value previousStage = arith::RemUIOp::create(
        b, loc, kl.add(pos.position, kl.cst(stages - 1)), kl.cst(stages));
    release(previousStage);
  }
  return finishConsumers(count, base);
}

LogicalResult WarpSpecializedLoop::finishConsumers(Value count, Value base) {
  // After the consumers' loop.
  b.setInsertionPointAfter(consumersEnd ? consumersEnd : consumerLoop.getOperation());
  if (kl.pingPong())
    // Inline PTX: nvvm.barrier.arrive has no intrinsic; only the
    // convert-nvvm-to-llvm pass (not in this pipeline) lowers it, to this PTX.
    kl.ifThen(kl.andi(kl.eq(slot, kl.cst(0)), secondTile), [&] {
      kl.ptx("bar.arrive " + std::to_string(kOrderBarrier) + ", " + std::to_string(consumers) +
                 ";",
             "", {});
    });
  if (mmaOutlivesGemm)
    wgmmaWaitGroup(b, loc, 0);
  // Ping-pong and persistent: the last stage goes back too (iterations of
  // another tile follow in the ring). Multicasting, the last too (the
  // producers' tails wait for it). Without a group in flight it went back
  // in its iteration.
  if (inFlight == 1 && (kl.pingPong() || kl.persistent() || multicastCopy))
    kl.ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, count, zero), [&] {
      Value end = kl.add(count, kl.cst(stages - 1));
      Value last = arith::RemUIOp::create(b, loc, base ? kl.add(base, end) : end, kl.cst(stages));
      release(last);
    });
  if (kl.persistent())
    memref::StoreOp::create(b, loc, kl.add(base, count), kl.ringBase(), ValueRange{zero});
  if (holdAccumulators && failed(moveHeldAccumulators(kl, loop, /*enter=*/false)))
    return failure();
  kl.fenceAsyncAccumulators();
  kl.noteSharedAccess();
  return success();
}

} // namespace detail

LogicalResult moveHeldAccumulators(PipelineLoweringContext &kl, PipelinedOp loop, bool enter) {
  llvm::SmallPtrSet<Value, 4> seen;
  for (Operation &op : loop.getBodyBlock()) {
    auto gemm = dyn_cast<GemmOp>(op);
    if (!gemm || !seen.insert(gemm.getC()).second)
      continue;
    std::optional<MmaAtom> atom =
        findMmaAtom(gemm, kl.backend(), kl.computeCapability(), kl.kernel().getThreads());
    if (!atom || !atom->lowering)
      return gemm.emitOpError() << "has no atom to hold its accumulator through the loop";
    LogicalResult moved = enter
                              ? atom->lowering->enterHeldAccumulator(kl.gemmContext(), gemm, *atom)
                              : atom->lowering->leaveHeldAccumulator(kl.gemmContext(), gemm, *atom);
    if (failed(moved))
      return failure();
    kl.holdAccumulator(gemm.getC(), enter);
  }
  return success();
}

LogicalResult TmaWarpSpecializedPipeline::lower(PipelineLoweringContext &kernel, PipelinedOp loop,
                                                Value count, const PipelineLoopPlan &plan) const {
  if (plan.inFlight != 0 && plan.inFlight != 1)
    return loop.emitOpError() << "schedule '" << getName()
                              << "' keeps zero or one MMA group in flight, not " << plan.inFlight;
  return detail::WarpSpecializedLoop(kernel, loop, count, plan).emit();
}

bool TmaWarpSpecializedPipeline::lowerEpilogueCopy(PipelineLoweringContext &kernel,
                                                   CopyOp copy) const {
  return lowerBulkStoreEpilogue(kernel, copy);
}

const PipelineStrategy &tmaWarpSpecializedPipeline() {
  static const TmaWarpSpecializedPipeline strategy;
  return strategy;
}

} // namespace tessera::sm90
