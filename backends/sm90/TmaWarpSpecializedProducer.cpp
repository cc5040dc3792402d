//===- TmaWarpSpecializedProducer.cpp - The producer warpgroup ------------===//
//
// The producer of the TMA warp-specialized strategy: one elected thread
// acquires each stage of the ring, arms its "full" mbarrier with the
// stage's bytes and issues the iteration's bulk tensor copies (per panel,
// multicast to the cluster where planned); in persistent and stream-K
// kernels it walks the block's tiles or work items in its own loop.
//
//===----------------------------------------------------------------------===//

#include "contract/NvvmOps.h"
#include "backends/sm90/WarpSpecializedLoop.h"

#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera::sm90::detail {

void WarpSpecializedLoop::issuePanel(const BufferInfo &dst, int64_t columns, Value tensorMap,
                                     ArrayRef<Value> coords, Value stage, int64_t panel,
                                     bool toCluster) {
  // Panel `panel` of a copy's tile (`columns` wide) with its tensor map, at
  // `coords` (innermost first, the columns' first).
  Value target = arith::TruncIOp::create(
      b, loc, i32,
      dst.type.getRank() == 1 ? kl.sharedAddress(dst, {zero})
                              : kl.sharedAddress(dst, {zero, kl.cst(panel * columns)}));
  SmallVector<Value> operands = {target, tensorMap,
                                 kl.toI32(kl.add(coords[0], kl.cst(panel * columns)))};
  for (Value coord : coords.drop_front())
    operands.push_back(kl.toI32(coord));
  operands.push_back(ring->full(stage));
  // The instruction's shape and operands: cp.async.bulk.tensor.<rank>d with
  // one coordinate per dimension of the tensor map.
  int64_t rank = coords.size();
  std::string shape = ".tensor." + std::to_string(rank) + "d.", list, constraints = "r,l";
  for (int64_t d = 0; d < rank; ++d) {
    list += (d ? ", $" : "$") + std::to_string(2 + d);
    constraints += ",r";
  }
  std::string barrier = "[$" + std::to_string(2 + rank) + "]";
  constraints += ",r";
  // Inline PTX: nvvm.cp.async.bulk.tensor.shared.cluster.global takes 64-bit
  // shared pointers and moves its unused cache-hint and mask into registers.
  if (!toCluster) {
    kl.ptx("cp.async.bulk" + shape +
               "shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {" + list +
               "}], " + barrier + ";",
           constraints, operands);
    return;
  }
  // Into the same offsets of all blocks' shared memory, completing on the
  // same barrier of each.
  operands.push_back(
      arith::ConstantIntOp::create(b, loc, b.getI16Type(), (1 << clusterBlocks) - 1));
  kl.ptx("cp.async.bulk" + shape +
             "shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], "
             "[$1, {" + list + "}], " + barrier + ", $" + std::to_string(3 + rank) + ";",
         constraints + ",h", operands);
}

void WarpSpecializedLoop::issueCopy(CopyOp copy, Value stage) {
  const BufferInfo &dst = kl.buffer(copy.getDst());
  const Map &map = maps[mapOf[copy.getOperation()]];
  // The box's coordinates, innermost first: the columns (the innermost
  // dimension, which a slice always spans), then the rows and a slice's
  // fixed offsets.
  SmallVector<Value> coords;
  for (Value offset : llvm::reverse(copy.getSrcOffsets()))
    coords.push_back(kl.valueMap().lookupOrDefault(offset));
  auto staged = kl.useStage({copy.getDst()}, stage);
  Value tensorMap = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), map.arg);
  if (copy != multicastCopy) {
    for (int64_t p = 0; p < dst.swizzle.panels; ++p)
      issuePanel(dst, map.columns, tensorMap, coords, stage, p, false);
    return;
  }
  // This block's 1/n of the panels to all blocks (rank r the r-th share,
  // chosen by halving the ranks: constant offsets in each branch), or all
  // alone.
  auto all = scf::IfOp::create(b, loc, multicast, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard branch(b);
  int64_t panels = dst.swizzle.panels;
  std::function<void(int64_t, int64_t)> issueShares = [&](int64_t first, int64_t end) {
    if (end - first == 1) {
      for (int64_t p = first * panels / clusterBlocks; p < end * panels / clusterBlocks; ++p)
        issuePanel(dst, map.columns, tensorMap, coords, stage, p, true);
      return;
    }
    int64_t middle = (first + end) / 2;
    Value upper = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, rank,
                                        arith::ConstantIntOp::create(b, loc, i32, middle));
    auto halves = scf::IfOp::create(b, loc, upper, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard inHalf(b);
    b.setInsertionPoint(halves.thenBlock()->getTerminator());
    issueShares(middle, end);
    b.setInsertionPoint(halves.elseBlock()->getTerminator());
    issueShares(first, middle);
  };
  b.setInsertionPoint(all.thenBlock()->getTerminator());
  issueShares(0, clusterBlocks);
  b.setInsertionPoint(all.elseBlock()->getTerminator());
  for (int64_t p = 0; p < dst.swizzle.panels; ++p)
    issuePanel(dst, map.columns, tensorMap, coords, stage, p, false);
}

void WarpSpecializedLoop::produce(Value tileCount, Value base) {
  // One tile's iterations [0, tileCount), at ring positions base + k.
  auto forOp = scf::ForOp::create(b, loc, zero, tileCount, kl.cst(1));
  OpBuilder::InsertionGuard loopGuard(b);
  b.setInsertionPoint(forOp.getBody()->getTerminator());
  Value k = forOp.getInductionVar();
  StageRing::Position pos = ring->at(base, k);
  ring->producerAcquire(pos);
  ring->producerArm(pos.stage, stageBytes);
  IRMapping saved = kl.valueMap();
  kl.mapIteration(loop, ahead, k, [&](CopyOp copy) { issueCopy(copy, pos.stage); });
  kl.valueMap() = saved;
}

void WarpSpecializedLoop::waitNextRound(Value end) {
  // In clusters, the block stays until the consumers of all blocks have
  // released every stage (the peers' may still arrive on this block's
  // barriers): a wait for the ring's next round after position `end`.
  auto next = scf::ForOp::create(b, loc, zero, kl.cst(stages), kl.cst(1));
  OpBuilder::InsertionGuard tailGuard(b);
  b.setInsertionPoint(next.getBody()->getTerminator());
  ring->producerAcquire(ring->at(end, next.getInductionVar()));
}

LogicalResult WarpSpecializedLoop::produceTile(scf::ForOp tileLoop, IRMapping &at,
                                               llvm::function_ref<FailureOr<Value>()> countOf,
                                               Value offset) {
  // In `tileLoop` (a loop whose one value is the ring position reached):
  // iterations [offset, offset + tileCount) of the tile whose block
  // coordinates `at` holds.
  auto dependsOnMore = [&](StringRef what) {
    return loop.emitOpError()
           << what << " depends on more than the block coordinates and kernel arguments "
           << "(ping-pong, persistent and stream-K kernels recompute it per tile)";
  };
  IRMapping saved = kl.valueMap();
  for (Value v : outside) {
    FailureOr<Value> value = kl.valueAt(v, at);
    if (failed(value))
      return dependsOnMore("a value the loop uses");
    kl.valueMap().map(v, *value);
  }
  FailureOr<Value> counted = countOf();
  if (failed(counted))
    return dependsOnMore("the iteration count");
  Value tileCount = *counted;
  Value base = tileLoop.getRegionIterArgs()[0];
  Value savedOffset = kl.iterationOffset();
  kl.setIterationOffset(offset);
  produce(tileCount, base);
  kl.setIterationOffset(savedOffset);
  kl.valueMap() = saved;
  tileLoop.getBody()->getTerminator()->setOperand(0, kl.add(base, tileCount));
  return success();
}

LogicalResult
WarpSpecializedLoop::produceTiles(Value first, Value end, Value step,
                                  llvm::function_ref<void(Value, IRMapping &)> seed) {
  // Tiles [first, end) by `step`, their coordinates seeded by `seed`.
  auto tileLoop = scf::ForOp::create(b, loc, first, end, step, ValueRange{zero},
                                     [](OpBuilder &nested, Location at, Value, ValueRange args) {
                                       scf::YieldOp::create(nested, at, args);
                                     });
  {
    OpBuilder::InsertionGuard tileGuard(b);
    b.setInsertionPoint(tileLoop.getBody()->getTerminator());
    IRMapping at;
    seed(tileLoop.getInductionVar(), at);
    if (multicastCopy && kl.persistent()) {
      FailureOr<Value> both = agreeOnTile(at, tileLoop.getInductionVar(), end);
      if (failed(both))
        return failure();
      multicast = *both;
    }
    if (failed(produceTile(
            tileLoop, at, [&] { return kl.valueAt(loop.getCount(), at); }, Value())))
      return failure();
  }
  if (multicastCopy)
    waitNextRound(tileLoop.getResult(0));
  return success();
}

LogicalResult WarpSpecializedLoop::produceItems() {
  // Stream-K: the same work items as the consumers', each a tile's
  // iterations [begin, end).
  OpBuilder::InsertionGuard itemGuard(b);
  // The decomposition recomputed here, after setmaxnreg.dec: values from
  // before the branch would stay live into the producer's 40 registers (and
  // spill).
  return kl.withStreamKRecomputed(loop, [&]() -> LogicalResult {
    Value tile, begin, end;
    scf::ForOp items = kl.emitWorkItems(ValueRange{zero}, tile, begin, end);
    IRMapping at;
    for (auto [index, coord] : llvm::zip(kl.kernel().getBlockIndices(), kl.tileCoords(tile)))
      at.map(index, coord);
    if (multicastCopy) {
      // Whole tiles multicast as a persistent kernel's do (the cluster's
      // blocks run them in the same rounds, at the same ring positions);
      // pieces of split tiles load alone.
      FailureOr<Value> all = agreeOnTile(at, tile, kl.streamKWholeTiles());
      if (failed(all))
        return failure();
      multicast = kl.andi(kl.lt(tile, kl.streamKWholeTiles()), *all);
    }
    if (failed(produceTile(
            items, at,
            [&]() -> FailureOr<Value> {
              return arith::SubIOp::create(b, loc, end, begin).getResult();
            },
            begin)))
      return failure();
    b.setInsertionPointAfter(items);
    if (multicastCopy)
      waitNextRound(items.getResult(0));
    return success();
  });
}

LogicalResult WarpSpecializedLoop::emitProducer() {
  // The producer warpgroup: one thread issues every stage's copies.
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, kl.launchedThreadId(),
                                           kl.cst(consumers));
  auto producer = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(producer.thenBlock()->getTerminator());
  if (rebalance)
    setMaxRegisters(b, loc, kProducerRegisters, /*increase=*/false);
  auto elected = scf::IfOp::create(b, loc, kl.isThread(consumers), false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(elected.thenBlock()->getTerminator());
    // Several tiles (the pair, a persistent block's tiles, or stream-K work
    // items): the values the loop takes from before it (offsets, the count)
    // recomputed with each tile's block coordinates.
    outside = kl.valuesFromBefore(loop);
    ArrayRef<BlockArgument> indices = kl.kernel().getBlockIndices();
    LogicalResult produced = success();
    if (kl.pingPong()) {
      // The pair: y = 2 blockIdx.y + t.
      Value tilesHere = arith::SelectOp::create(b, loc, secondTile, kl.cst(2), kl.cst(1));
      produced = produceTiles(zero, tilesHere, kl.cst(1), [&](Value t, IRMapping &at) {
        at.map(indices[1], kl.add(kl.mul(kl.blockIdY(), kl.cst(2)), t));
      });
    } else if (kl.streamK()) {
      // This block's work items: whole tiles, then pieces of tiles (the
      // iteration index offset by the piece's start).
      produced = produceItems();
    } else if (kl.persistent()) {
      scf::ForOp tileLoop = kl.tileLoop();
      produced = produceTiles(tileLoop.getLowerBound(), tileLoop.getUpperBound(),
                              tileLoop.getStep(), [&](Value t, IRMapping &at) {
                                for (auto [index, coord] : llvm::zip(indices, kl.tileCoords(t)))
                                  at.map(index, coord);
                              });
    } else {
      // The block's one tile: what the loop takes from the consumers' code
      // (which follows) recomputed here.
      produced = produceTiles(zero, kl.cst(1), kl.cst(1), [](Value, IRMapping &) {});
    }
    if (failed(produced))
      return failure();
  }
  kl.ptx("exit;", "", {}); // inline PTX: nvvm.exit is noreturn (emitPingPongSlots)
  return success();
}

} // namespace tessera::sm90::detail
