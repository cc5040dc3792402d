//===- LowerWarpSpecialized.cpp - TMA warp-specialized pipelining --------===//
//
// The warp-specialized strategy of tile.pipelined, chosen where the target
// has bulk tensor copies and mbarriers and the body's MMA reads shared
// memory asynchronously (wgmma): a producer warpgroup fills a ring of
// stages with TMA copies (optionally multicast in a cluster), the
// consumers wait on each stage's "full" mbarrier and release it on its
// "empty" one, registers rebalanced with setmaxnreg.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"

#include "backends/NvvmOps.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

namespace tessera::lowering {

LogicalResult KernelLowering::lowerPipelinedSpecialized(
    PipelinedOp loop, Value count, const llvm::SmallPtrSetImpl<Operation *> &ahead,
    int64_t stages, int64_t barrierOffset) {
  // Under the ping-pong schedule two tiles' consumers (tile slots 0 and 1),
  // `threads` each, share the ring of stages: the producer fills tile 0's
  // iterations, then tile 1's; slot 1 starts its loop when slot 0 has left
  // its own (a named barrier), so each waits on phases at most one round
  // ahead, and its main loop runs while slot 0's epilogue does.
  int64_t threads = kernel_.getThreads();
  int64_t tiles = pingPong_ ? 2 : 1;
  int64_t consumers = threads * tiles;
  Type i32 = b_.getI32Type();

  // One tensor map per (tensor, box, swizzle), passed after the params.
  struct Map {
    Value tensor;
    int64_t rows, columns, swizzle;
    Value arg;
  };
  SmallVector<Map> maps;
  DenseMap<Operation *, unsigned> mapOf;
  int64_t stageBytes = 0;
  // Clusters of `clusterBlocks` blocks multicast the largest copy of at
  // least as many panels (see below).
  int64_t clusterBlocks = kernel_.getMulticastBlocks().value_or(2);
  CopyOp largestShared;
  int64_t largestSharedBytes = 0;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (!ahead.contains(&op))
      continue;
    auto copy = cast<CopyOp>(op);
    const BufferInfo &dst = buffers_[copy.getDst()];
    int64_t element = getElementBytes(dst.type.getElementType());
    int64_t rows = copy.getTileType().getShape()[0];
    int64_t columns = dst.swizzle.rowBytes / element;
    int64_t bytes = dst.type.getNumElements() * element;
    stageBytes += bytes;
    if (dst.swizzle.panels >= clusterBlocks && bytes > largestSharedBytes) {
      largestSharedBytes = bytes;
      largestShared = copy;
    }
    auto it = llvm::find_if(maps, [&](const Map &map) {
      return map.tensor == copy.getSrc() && map.rows == rows && map.columns == columns &&
             map.swizzle == dst.swizzle.rowBytes;
    });
    if (it == maps.end()) {
      Value arg = addTensorMap(copy.getSrc(), rows, columns, dst.swizzle.rowBytes);
      if (!arg)
        return failure();
      maps.push_back({copy.getSrc(), rows, columns, dst.swizzle.rowBytes, arg});
      it = std::prev(maps.end());
    }
    mapOf[&op] = it - maps.begin();
  }

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
  CopyOp multicastCopy;
  llvm::SetVector<Value> multicastKey;
  const char *noMulticast = nullptr;
  if (kernel_.getMulticast()) {
    if (!caps_.hasClusters)
      noMulticast = "the target has no thread block clusters";
    else if (pingPong_)
      noMulticast = "not with the ping-pong schedule";
    else if (!largestShared)
      noMulticast = "no copy of at least as many panels as the cluster has blocks";
    else if (persistent_ && dependsOnBlockIndices(loop.getCount()))
      noMulticast = "the iteration count depends on the tile (a persistent kernel)";
  }
  if (kernel_.getMulticast() && !noMulticast) {
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
  if (noMulticast)
    loop.emitRemark() << "multicast not applied: " << noMulticast;
  if (multicastCopy)
    func_->setAttr(kLoweredClusterXAttr, b_.getI64IntegerAttr(clusterBlocks));
  func_->setAttr(kLoweredBlockThreadsAttr, b_.getI64IntegerAttr(consumers + 128));
  func_.setKnownBlockSizeAttr(b_.getDenseI32ArrayAttr({int32_t(consumers + 128), 1, 1}));

  // What runs once per block (the barriers' setup, the producer, the
  // register rebalance) goes to onceAnchor_ at the kernel's start, or
  // before a persistent kernel's loop over tiles (its producer then loops
  // over the block's tiles itself); there every thread of the block still
  // runs, and synchronizes on the block's barrier. The consumers' part
  // stays where the loop is, after their code before it (run() planned this
  // loop, so that code ran on them alone, with their named barrier), whose
  // generic shared writes are fenced for the MMAs' async proxy here.
  if (genericSharedWrites_) {
    fenceProxyAsync();
    barrier();
  }
  OpBuilder::InsertPoint atLoop = b_.saveInsertionPoint();
  b_.setInsertionPoint(onceAnchor_ ? onceAnchor_ : tileLoop_.getOperation());
  auto blockBarrier = [&] { gpu::BarrierOp::create(b_, loc_); };
  // Shared buffers besides the stages move after the mbarriers (see
  // slotShift_) when the producer runs ahead of another tile's consumers,
  // or (relocateEarlyBuffers) of the code before the loop.
  keepRelocation_ = keepRelocation_ || pingPong_ || persistent_;

  // mbarriers after the planned buffers: full[s], then empty[s].
  func_->setAttr(kLoweredSharedBytesAttr,
                 b_.getI64IntegerAttr(keepRelocation_ ? std::max(relocatedSharedBytes_,
                                                                 barrierOffset + 16 * stages)
                                                      : barrierOffset + 16 * stages));
  Value sharedStart = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, sharedBase_);
  auto full = [&](Value stage) {
    return toI32(add(sharedStart, add(cst(barrierOffset), mul(stage, cst(8)))));
  };
  auto empty = [&](Value stage) {
    return toI32(add(sharedStart, add(cst(barrierOffset + 8 * stages), mul(stage, cst(8)))));
  };
  // Waits until the phase of parity `parity` of an mbarrier completed.
  auto wait = [&](Value barrier, Value parity) {
    // Inline PTX: nvvm.mbarrier.try_wait.parity has no intrinsic (only
    // convert-nvvm-to-llvm lowers it) and always adds a suspend-time hint.
    ptx("{\n.reg .pred done;\nwait:\nmbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@done bra ready;\nbra wait;\nready:\n}",
        "r,r", {barrier, parity});
  };
  Value zero = cst(0);
  // Ring position p (iteration k of a tile whose iterations start at
  // `base`): stage p mod S, filled for the (p / S)-th time.
  auto ring = [&](Value base, Value k) {
    Value position = base ? add(base, k) : k;
    return std::make_tuple(position, arith::RemUIOp::create(b_, loc_, position, cst(stages)),
                           arith::DivUIOp::create(b_, loc_, position, cst(stages)));
  };

  // Ping-pong: slot 1 runs tile y + 1 of the pair only when the grid has
  // it (an odd extent leaves the last block one tile); otherwise its
  // threads leave now (barriers over all threads stop counting them).
  Value slot, secondTile;
  if (pingPong_) {
    func_->setAttr(kLoweredTilesPerBlockAttr, b_.getI64IntegerAttr(tiles));
    slot = tileSlotOp_->getResult(0);
    secondTile = lt(add(mul(blockIdY_, cst(2)), cst(1)), gridExtent(1));
    Value alone = arith::XOrIOp::create(b_, loc_, secondTile,
                                        arith::ConstantIntOp::create(b_, loc_, 1, 1));
    // Inline PTX: nvvm.exit is noreturn to LLVM, which then duplicates the
    // paths around it (other branches, more exit instructions).
    ifThen(andi(eq(slot, cst(1)), alone), [&] { ptx("exit;", "", {}); });
  }

  // Thread 0 initializes the barriers; everyone sees them after the barrier.
  // In clusters, each stage's "empty" barrier counts the consumer warps of
  // all n blocks (any block's producer may write the stage in all): a tile
  // that multicasts releases it once here and once in each peer, one that
  // does not n times here.
  int64_t emptyCount = multicastCopy ? clusterBlocks * threads / 32 : threads;
  ifThen(isThread(0), [&] {
    for (int64_t s = 0; s < stages; ++s) {
      // Inline PTX: nvvm.mbarrier.init takes a 64-bit shared pointer and a
      // register count (mbarrier.init.shared.b64 [%rd], %r; 64-bit arithmetic).
      ptx("mbarrier.init.shared::cta.b64 [$0], 1;", "r", {full(cst(s))});
      ptx("mbarrier.init.shared::cta.b64 [$0], " + std::to_string(emptyCount) + ";", "r",
          {empty(cst(s))});
    }
    fenceMbarrierInit(b_, loc_);
  });
  // Multicasting: `multicast` says whether the tile at hand does (set per
  // tile below in a persistent kernel), `agree` computes it.
  Value multicast, rank;
  ArrayRef<BlockArgument> indices = kernel_.getBlockIndices();
  auto agree = [&](IRMapping &ownAt, IRMapping &peerAt, Value peerPresent) -> FailureOr<Value> {
    Value both = peerPresent;
    for (Value v : multicastKey) {
      FailureOr<Value> own = valueAt(v, ownAt);
      FailureOr<Value> theirs = succeeded(own) ? valueAt(v, peerAt) : own;
      if (failed(theirs))
        return loop.emitOpError() << "a value the multicast copy uses depends on more than the "
                                     "block coordinates and kernel arguments";
      both = andi(both, eq(*own, *theirs));
    }
    return both;
  };
  // Whether every peer j (0 < j < n) agrees: `peer` maps the block
  // coordinates to peer j's and returns whether that peer is present.
  auto agreeWithPeers = [&](IRMapping &ownAt,
                            llvm::function_ref<Value(int64_t, IRMapping &)> peer)
      -> FailureOr<Value> {
    Value all;
    for (int64_t j = 1; j < clusterBlocks; ++j) {
      IRMapping peerAt;
      Value present = peer(j, peerAt);
      FailureOr<Value> both = agree(ownAt, peerAt, present);
      if (failed(both))
        return failure();
      all = andi(all, *both);
    }
    return all;
  };
  // The peers of linear tile t (a persistent kernel): tiles t ^ j, if any.
  auto agreeOnTile = [&](IRMapping &ownAt, Value tile, Value tiles) -> FailureOr<Value> {
    return agreeWithPeers(ownAt, [&](int64_t j, IRMapping &peerAt) {
      Value peerTile = arith::XOrIOp::create(b_, loc_, tile, cst(j));
      for (auto [index, coord] : llvm::zip(indices, tileCoords(peerTile)))
        peerAt.map(index, coord);
      return lt(peerTile, tiles);
    });
  };
  if (multicastCopy)
    rank = clusterCtaRank(b_, loc_);
  auto clusterBarrier = [&] {
    clusterArrive(b_, loc_);
    clusterWait(b_, loc_);
  };
  if (multicastCopy && !persistent_) {
    // A grid launch: the block's one tile, and its peers' (blocks x ^ j; a
    // block past the grid's x leaves, its peers load alone). All blocks
    // agree, so all or none pass the cluster barrier that makes the peers'
    // barriers ready before anyone multicasts or arrives remotely.
    Value x = map_.lookup(indices[0]);
    Value present = lt(x, gridExtent(0));
    IRMapping ownAt;
    FailureOr<Value> all = agreeWithPeers(ownAt, [&](int64_t j, IRMapping &peerAt) {
      Value peerX = arith::XOrIOp::create(b_, loc_, x, cst(j));
      peerAt.map(indices[0], peerX);
      return lt(peerX, gridExtent(0));
    });
    if (failed(all))
      return failure();
    multicast = andi(present, *all);
    auto sync = scf::IfOp::create(b_, loc_, multicast, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard branch(b_);
      b_.setInsertionPoint(sync.thenBlock()->getTerminator());
      clusterBarrier();
      b_.setInsertionPoint(sync.elseBlock()->getTerminator());
      blockBarrier();
    }
    ifThen(arith::XOrIOp::create(b_, loc_, present,
                                 arith::ConstantIntOp::create(b_, loc_, 1, 1)),
           [&] { ptx("exit;", "", {}); }); // inline PTX: nvvm.exit is noreturn (above)
  } else if (multicastCopy) {
    // A persistent kernel: every block passes the cluster barrier once.
    clusterBarrier();
  } else {
    blockBarrier();
  }

  // Register budget: the producer gives registers back to the consumers
  // (setmaxnreg) when the block's default share would be tight.
  int64_t blockThreads = consumers + 128;
  int64_t share = std::min<int64_t>(caps_.registersPerThread,
                                    caps_.registersPerSM / blockThreads / 8 * 8);
  // setmaxnreg.inc takes registers only from the pool the block's own
  // setmaxnreg.dec released (the producer's 128 threads, share - 40 each):
  // asking the consumers for more than that pool holds blocks them forever
  // (four consumer warpgroups at 96 registers: 104, not the 112 the SM's
  // total would allow). ptxas gives a kernel with setmaxnreg exactly its
  // launch-bound share.
  int64_t producerRegs = 40;
  int64_t consumerRegs = std::min<int64_t>(
      240, (share + (share - producerRegs) * 128 / consumers) / 8 * 8);
  bool rebalance = caps_.hasWarpgroupMma && share < caps_.registersPerThread &&
                   consumerRegs > share;

  // The producer warpgroup: one thread issues every stage's copies.
  Value isProducer =
      arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::uge, rawThreadId_, cst(consumers));
  {
    auto producer = scf::IfOp::create(b_, loc_, isProducer, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(producer.thenBlock()->getTerminator());
    if (rebalance)
      setMaxRegisters(b_, loc_, producerRegs, /*increase=*/false);
    auto elected = scf::IfOp::create(b_, loc_, isThread(consumers), false);
    {
      OpBuilder::InsertionGuard inner(b_);
      b_.setInsertionPoint(elected.thenBlock()->getTerminator());
      // Waits until position k of the ring (from `base`) may be filled, and
      // returns its stage. The first round finds every stage free (the
      // phase before the barrier's first one counts as complete).
      auto waitFree = [&](Value base, Value k) {
        auto [position, stage, round] = ring(base, k);
        Value parity = toI32(arith::XOrIOp::create(
            b_, loc_, arith::AndIOp::create(b_, loc_, round, cst(1)), cst(1)));
        wait(empty(stage), parity);
        return stage;
      };
      // In clusters, the block stays until the consumers of all blocks have
      // released every stage (the peers' may still arrive on this block's
      // barriers): a wait for the ring's next round after position `end`.
      auto waitNextRound = [&](Value end) {
        auto next = scf::ForOp::create(b_, loc_, zero, cst(stages), cst(1));
        OpBuilder::InsertionGuard tailGuard(b_);
        b_.setInsertionPoint(next.getBody()->getTerminator());
        waitFree(end, next.getInductionVar());
      };
      // One tile's iterations [0, tileCount), at ring positions base + k.
      auto produce = [&](Value tileCount, Value base) {
        auto forOp = scf::ForOp::create(b_, loc_, zero, tileCount, cst(1));
        OpBuilder::InsertionGuard loopGuard(b_);
        b_.setInsertionPoint(forOp.getBody()->getTerminator());
        Value k = forOp.getInductionVar();
        Value stage = waitFree(base, k);
        // Inline PTX: nvvm.mbarrier.arrive.expect_tx takes a 64-bit shared
        // pointer and a register count, and returns the state (no `_` sink).
        ptx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], " + std::to_string(stageBytes) +
                ";",
            "r", {full(stage)});
        IRMapping saved = map_;
        mapIteration(loop, ahead, k, [&](CopyOp copy) {
          const BufferInfo &dst = buffers_[copy.getDst()];
          const Map &map = maps[mapOf[copy.getOperation()]];
          Value row = map_.lookupOrDefault(copy.getSrcOffsets()[0]);
          Value col = map_.lookupOrDefault(copy.getSrcOffsets()[1]);
          auto staged = useStage({copy.getDst()}, stage);
          Value tensorMap = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), map.arg);
          auto issue = [&](int64_t p, bool toBoth) {
            Value target = arith::TruncIOp::create(
                b_, loc_, i32, sharedAddress(dst, {zero, cst(p * map.columns)}));
            SmallVector<Value> operands = {target, tensorMap,
                                           toI32(add(col, cst(p * map.columns))), toI32(row),
                                           full(stage)};
            // Inline PTX: nvvm.cp.async.bulk.tensor.shared.cluster.global takes 64-bit
            // shared pointers and moves its unused cache-hint and mask into registers.
            if (!toBoth) {
              ptx("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                  "bytes [$0], [$1, {$2, $3}], [$4];",
                  "r,l,r,r,r", operands);
              return;
            }
            // Into the same offsets of all blocks' shared memory, completing
            // on the same barrier of each.
            operands.push_back(arith::ConstantIntOp::create(b_, loc_, b_.getI16Type(),
                                                            (1 << clusterBlocks) - 1));
            ptx("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                "bytes.multicast::cluster [$0], [$1, {$2, $3}], [$4], $5;",
                "r,l,r,r,r,h", operands);
          };
          if (copy != multicastCopy) {
            for (int64_t p = 0; p < dst.swizzle.panels; ++p)
              issue(p, false);
            return;
          }
          // This block's 1/n of the panels to all blocks (rank r the r-th
          // share, chosen by halving the ranks: constant offsets in each
          // branch), or all alone.
          auto all = scf::IfOp::create(b_, loc_, multicast, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard branch(b_);
          int64_t panels = dst.swizzle.panels;
          std::function<void(int64_t, int64_t)> issueShares = [&](int64_t first, int64_t end) {
            if (end - first == 1) {
              for (int64_t p = first * panels / clusterBlocks; p < end * panels / clusterBlocks;
                   ++p)
                issue(p, true);
              return;
            }
            int64_t middle = (first + end) / 2;
            Value upper = arith::CmpIOp::create(
                b_, loc_, arith::CmpIPredicate::uge, rank,
                arith::ConstantIntOp::create(b_, loc_, i32, middle));
            auto halves = scf::IfOp::create(b_, loc_, upper, /*withElseRegion=*/true);
            OpBuilder::InsertionGuard inHalf(b_);
            b_.setInsertionPoint(halves.thenBlock()->getTerminator());
            issueShares(middle, end);
            b_.setInsertionPoint(halves.elseBlock()->getTerminator());
            issueShares(first, middle);
          };
          b_.setInsertionPoint(all.thenBlock()->getTerminator());
          issueShares(0, clusterBlocks);
          b_.setInsertionPoint(all.elseBlock()->getTerminator());
          for (int64_t p = 0; p < dst.swizzle.panels; ++p)
            issue(p, false);
        });
        map_ = saved;
      };
      // Several tiles (the pair, a persistent block's tiles, or stream-K
      // work items): the values the loop takes from before it (offsets, the
      // count) recomputed with each tile's block coordinates.
      llvm::SetVector<Value> outside = valuesFromBefore(loop);
      auto dependsOnMore = [&](StringRef what) {
        return loop.emitOpError()
               << what << " depends on more than the block coordinates and kernel arguments "
               << "(ping-pong, persistent and stream-K kernels recompute it per tile)";
      };
      // In `tiles` (a loop whose one value is the ring position reached):
      // iterations [offset, offset + tileCount()) of the tile whose block
      // coordinates `at` holds.
      auto produceTile = [&](scf::ForOp tiles, IRMapping &at,
                             llvm::function_ref<FailureOr<Value>()> countOf,
                             Value offset) -> LogicalResult {
        IRMapping saved = map_;
        for (Value v : outside) {
          FailureOr<Value> value = valueAt(v, at);
          if (failed(value))
            return dependsOnMore("a value the loop uses");
          map_.map(v, *value);
        }
        FailureOr<Value> counted = countOf();
        if (failed(counted))
          return dependsOnMore("the iteration count");
        Value tileCount = *counted;
        Value base = tiles.getRegionIterArgs()[0];
        Value savedOffset = ivOffset_;
        ivOffset_ = offset;
        produce(tileCount, base);
        ivOffset_ = savedOffset;
        map_ = saved;
        tiles.getBody()->getTerminator()->setOperand(0, add(base, tileCount));
        return success();
      };
      auto produceTiles = [&](Value first, Value end, Value step,
                              llvm::function_ref<void(Value, IRMapping &)> seed)
          -> LogicalResult {
        auto tiles = scf::ForOp::create(
            b_, loc_, first, end, step, ValueRange{zero},
            [](OpBuilder &nested, Location at, Value, ValueRange args) {
              scf::YieldOp::create(nested, at, args);
            });
        {
          OpBuilder::InsertionGuard tileGuard(b_);
          b_.setInsertionPoint(tiles.getBody()->getTerminator());
          IRMapping at;
          seed(tiles.getInductionVar(), at);
          if (multicastCopy && persistent_) {
            FailureOr<Value> both = agreeOnTile(at, tiles.getInductionVar(), end);
            if (failed(both))
              return failure();
            multicast = *both;
          }
          if (failed(produceTile(
                  tiles, at, [&] { return valueAt(loop.getCount(), at); }, Value())))
            return failure();
        }
        if (multicastCopy)
          waitNextRound(tiles.getResult(0));
        return success();
      };
      // Stream-K: the same work items as the consumers', each a tile's
      // iterations [begin, end).
      auto produceItems = [&]() -> LogicalResult {
        OpBuilder::InsertionGuard itemGuard(b_);
        // The decomposition recomputed here, after setmaxnreg.dec: values
        // from before the branch would stay live into the producer's 40
        // registers (and spill).
        SmallVector<Value> savedExtents = gridExtents_;
        Value savedParams[] = {skIters_, skGrid_, skDp_, skSplit_, skQ_};
        emitStreamKParams(loop);
        auto restoreParams = llvm::make_scope_exit([&] {
          gridExtents_ = savedExtents;
          std::tie(skIters_, skGrid_, skDp_, skSplit_, skQ_) =
              std::make_tuple(savedParams[0], savedParams[1], savedParams[2], savedParams[3],
                              savedParams[4]);
        });
        Value tile, begin, end;
        scf::ForOp items = emitWorkItems(ValueRange{zero}, tile, begin, end);
        IRMapping at;
        for (auto [index, coord] : llvm::zip(indices, tileCoords(tile)))
          at.map(index, coord);
        if (multicastCopy) {
          // Whole tiles multicast as a persistent kernel's do (the cluster's
          // blocks run them in the same rounds, at the same ring positions);
          // pieces of split tiles load alone.
          FailureOr<Value> all = agreeOnTile(at, tile, skDp_);
          if (failed(all))
            return failure();
          multicast = andi(lt(tile, skDp_), *all);
        }
        if (failed(produceTile(
                items, at,
                [&]() -> FailureOr<Value> {
                  return arith::SubIOp::create(b_, loc_, end, begin).getResult();
                },
                begin)))
          return failure();
        b_.setInsertionPointAfter(items);
        if (multicastCopy)
          waitNextRound(items.getResult(0));
        return success();
      };
      if (pingPong_) {
        // The pair: y = 2 blockIdx.y + t.
        Value tilesHere = arith::SelectOp::create(b_, loc_, secondTile, cst(2), cst(1));
        if (failed(produceTiles(zero, tilesHere, cst(1), [&](Value t, IRMapping &at) {
              at.map(indices[1], add(mul(blockIdY_, cst(2)), t));
            })))
          return failure();
      } else if (streamK_) {
        // This block's work items: whole tiles, then pieces of tiles (the
        // iteration index offset by the piece's start).
        if (failed(produceItems()))
          return failure();
      } else if (persistent_) {
        if (failed(produceTiles(tileLoop_.getLowerBound(), tileLoop_.getUpperBound(),
                                tileLoop_.getStep(), [&](Value t, IRMapping &at) {
                                  for (auto [index, coord] : llvm::zip(indices, tileCoords(t)))
                                    at.map(index, coord);
                                })))
          return failure();
      } else {
        // The block's one tile: what the loop takes from the consumers'
        // code (which follows) recomputed here.
        if (failed(produceTiles(zero, cst(1), cst(1), [](Value, IRMapping &) {})))
          return failure();
      }
    }
    ptx("exit;", "", {}); // inline PTX: nvvm.exit is noreturn (above)
  }

  // The consumers: the kernel's own threads.
  if (rebalance)
    setMaxRegisters(b_, loc_, consumerRegs, /*increase=*/true);
  b_.restoreInsertionPoint(atLoop);
  lastWasBarrier_ = false;
  // Ping-pong: slot 1's iterations follow slot 0's in the ring, and it
  // starts when slot 0 has left its loop (named barrier 3, both slots).
  // Persistent: this tile's iterations follow the block's earlier tiles'.
  Value base;
  if (persistent_)
    base = memref::LoadOp::create(b_, loc_, ringBase_, ValueRange{zero});
  // The named barrier ordering the slots (1 and 2 are their consumers').
  constexpr int64_t kOrderBarrier = 3;
  if (pingPong_) {
    IRMapping at;
    at.map(kernel_.getBlockIndices()[1], mul(blockIdY_, cst(2)));
    FailureOr<Value> firstCount = valueAt(loop.getCount(), at);
    if (failed(firstCount))
      return loop.emitOpError() << "ping-pong: the iteration count depends on more than the "
                                   "block coordinates and kernel arguments";
    base = mul(slot, *firstCount);
    ifThen(eq(slot, cst(1)), [&] { namedBarrierSync(b_, loc_, kOrderBarrier, consumers); });
  }
  // A stage goes back to the producer: in clusters, with one arrival per
  // consumer warp, to all blocks' producers where the tile multicasts (any
  // writes it here), n times to this block's otherwise.
  SmallVector<Value> peerOffsets;
  Value firstLane;
  if (multicastCopy && persistent_) {
    // This tile (stream-K: a whole one) and its peers'.
    IRMapping ownAt;
    Value tile = streamK_ ? skTile_ : tileLoop_.getInductionVar();
    Value tiles = streamK_ ? skDp_ : tileLoop_.getUpperBound();
    FailureOr<Value> all = agreeOnTile(ownAt, tile, tiles);
    if (failed(all))
      return failure();
    multicast = streamK_ ? andi(lt(tile, tiles), *all) : *all;
  }
  if (multicastCopy) {
    Value local = full(zero);
    for (int64_t j = 1; j < clusterBlocks; ++j) {
      Value peer =
          arith::XOrIOp::create(b_, loc_, rank, arith::ConstantIntOp::create(b_, loc_, i32, j));
      // Inline PTX: nvvm.mapa maps pointers (64-bit mapa.shared::cluster.u64
      // and conversions), not the 32-bit shared addresses used here.
      Value remote = emitPtx(b_, loc_, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r",
                             {local, peer}, {i32}, /*sideEffects=*/false)[0];
      peerOffsets.push_back(arith::SubIOp::create(b_, loc_, remote, local));
    }
    firstLane = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq,
                                      arith::RemUIOp::create(b_, loc_, rawThreadId_, cst(32)),
                                      zero);
  }
  auto release = [&](Value stage) {
    if (!multicastCopy) {
      // Inline PTX (the three arrives): nvvm.mbarrier.arrive takes 64-bit
      // pointers; on shared::cta it also returns the state (no `_` sink).
      ptx("mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {empty(stage)});
      return;
    }
    // Each warp's first lane, once the warp's MMAs are done.
    ifThen(firstLane, [&] {
      Value arrivals = arith::SelectOp::create(
          b_, loc_, multicast, arith::ConstantIntOp::create(b_, loc_, i32, 1),
          arith::ConstantIntOp::create(b_, loc_, i32, clusterBlocks));
      ptx("mbarrier.arrive.shared::cta.b64 _, [$0], $1;", "r,r", {empty(stage), arrivals});
      ifThen(multicast, [&] {
        for (Value peerOffset : peerOffsets)
          ptx("mbarrier.arrive.shared::cluster.b64 _, [$0];", "r",
              {arith::AddIOp::create(b_, loc_, empty(stage), peerOffset)});
      });
    });
  };
  auto forOp = scf::ForOp::create(b_, loc_, zero, count, cst(1));
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    auto [position, stage, round] = ring(base, k);
    wait(full(stage), toI32(arith::AndIOp::create(b_, loc_, round, cst(1))));
    lastWasBarrier_ = true; // the full barrier orders this stage's reads
    if (failed(lowerStagedBody(loop, ahead, k, stage, /*inFlight=*/1)))
      return failure();
    // The MMAs of iteration k - 1 are complete (one group stays in flight):
    // its stage goes back to the producer.
    Value positive = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ugt, k, zero);
    auto afterFirst = scf::IfOp::create(b_, loc_, positive, false);
    b_.setInsertionPoint(afterFirst.thenBlock()->getTerminator());
    Value previousStage =
        arith::RemUIOp::create(b_, loc_, add(position, cst(stages - 1)), cst(stages));
    release(previousStage);
  }
  if (pingPong_)
    // Inline PTX: nvvm.barrier.arrive has no intrinsic; only the
    // convert-nvvm-to-llvm pass (not in this pipeline) lowers it, to this PTX.
    ifThen(andi(eq(slot, cst(0)), secondTile), [&] {
      ptx("bar.arrive " + std::to_string(kOrderBarrier) + ", " + std::to_string(consumers) + ";",
          "", {});
    });
  wgmmaWaitGroup(b_, loc_, 0);
  // Ping-pong and persistent: the last stage goes back too (iterations of
  // another tile follow in the ring).
  // Multicasting, the last too (the producers' tails wait for it).
  if (pingPong_ || persistent_ || multicastCopy)
    ifThen(arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ugt, count, zero), [&] {
      Value end = add(count, cst(stages - 1));
      Value last = arith::RemUIOp::create(b_, loc_, base ? add(base, end) : end, cst(stages));
      release(last);
    });
  if (persistent_)
    memref::StoreOp::create(b_, loc_, add(base, count), ringBase_, ValueRange{zero});
  for (auto [fragment, regs] : asyncAccumulators_)
    fenceRegisters(fragment, regs);
  asyncAccumulators_.clear();
  lastWasBarrier_ = false;
  return success();
}

} // namespace tessera::lowering
