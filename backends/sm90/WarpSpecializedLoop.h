//===- WarpSpecializedLoop.h - A warp-specialized loop's state -*- C++ -*-===//
//
// The state one TMA warp-specialized loop's emission shares between its
// parts: the tensor maps and the stage ring (TmaWarpSpecialized.cpp), the
// producer warpgroup (TmaWarpSpecializedProducer.cpp) and the consumers
// (TmaWarpSpecialized.cpp). Private to the sm90 backend.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_WARPSPECIALIZEDLOOP_H_
#define TESSERA_BACKENDS_SM90_WARPSPECIALIZEDLOOP_H_

#include "contract/PipelineLoweringContext.h"
#include "contract/PipelineStrategy.h"
#include "backends/sm90/StageRing.h"
#include "backends/sm90/TmaWarpSpecialized.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace tessera::sm90::detail {

using namespace mlir;
using namespace tessera::lowering;
using namespace tessera::tile;
using lowering::PipelineLoweringContext;

/// The named barrier ordering the ping-pong slots (1 and 2 are their
/// consumers').
constexpr int64_t kOrderBarrier = 3;
/// The producer warpgroup's registers after it gives the rest back.
constexpr int64_t kProducerRegisters = 40;

/// One warp-specialized loop being emitted: what its parts share.
class WarpSpecializedLoop {
public:
  WarpSpecializedLoop(PipelineLoweringContext &kernel, PipelinedOp loop, Value count,
                      const PipelineLoopPlan &plan)
      : kl(kernel), b(kernel.builder()), loc(kernel.loc()), loop(loop), count(count),
        ahead(plan.ahead), stages(plan.stages), inFlight(plan.inFlight),
        mmaOutlivesGemm(plan.mmaOutlivesGemm),
        holdAccumulators(warpSpecializedParams(plan).holdAccumulators),
        mmaOverlap(warpSpecializedParams(plan).mmaOverlap),
        turns(warpSpecializedParams(plan).warpgroupTurns), barrierOffset(kernel.mbarrierOffset()) {
    // Under the ping-pong schedule two tiles' consumers (tile slots 0 and
    // 1), `threads` each, share the ring of stages: the producer fills tile
    // 0's iterations, then tile 1's; slot 1 starts its loop when slot 0 has
    // left its own (a named barrier), so each waits on phases at most one
    // round ahead, and its main loop runs while slot 0's epilogue does.
    threads = kl.kernel().getThreads();
    tiles = kl.pingPong() ? 2 : 1;
    consumers = threads * tiles;
    i32 = b.getI32Type();
    clusterBlocks = kl.kernel().getMulticastBlocks().value_or(2);
    multicastPlanned = warpSpecializedParams(plan).multicastBlocks > 0;
  }

  LogicalResult emit();

private:
  LogicalResult collectTensorMaps();
  void chooseMulticast();
  void emitPingPongSlots();
  LogicalResult synchronizeBlocks();
  // Multicast agreement: whether the peers' tiles load the same data.
  FailureOr<Value> agree(IRMapping &ownAt, IRMapping &peerAt, Value peerPresent);
  FailureOr<Value> agreeWithPeers(IRMapping &ownAt,
                                  llvm::function_ref<Value(int64_t, IRMapping &)> peer);
  FailureOr<Value> agreeOnTile(IRMapping &ownAt, Value tile, Value tileCount);
  // The producer.
  LogicalResult emitProducer();
  void issueCopy(CopyOp copy, Value stage);
  void issuePanel(const BufferInfo &dst, int64_t columns, Value tensorMap,
                  ArrayRef<Value> coords, Value stage, int64_t panel, bool toCluster);
  void produce(Value tileCount, Value base);
  void waitNextRound(Value end);
  LogicalResult produceTile(scf::ForOp tileLoop, IRMapping &at,
                            llvm::function_ref<FailureOr<Value>()> countOf, Value offset);
  LogicalResult produceTiles(Value first, Value end, Value step,
                             llvm::function_ref<void(Value, IRMapping &)> seed);
  LogicalResult produceItems();
  // The consumers.
  LogicalResult emitConsumers();
  LogicalResult finishConsumers(Value count, Value base);
  // The consumers under the rotated two-gemm schedule (MmaOverlap.cpp).
  LogicalResult emitOverlappedConsumers(Value base);
  LogicalResult lowerPart(ArrayRef<Operation *> ops, Value k, Value stage,
                          Operation *waitBefore = nullptr,
                          llvm::function_ref<void()> wait = nullptr);
  Value previousStage(Value position);
  void fenceAccumulator(Value fragment);
  void takeTurn();
  void passTurn();
  void release(Value stage);

  PipelineLoweringContext &kl;
  OpBuilder &b;
  Location loc;
  PipelinedOp loop;
  Value count;
  const llvm::SmallPtrSetImpl<Operation *> &ahead;
  int64_t stages;
  /// MMA groups in flight across iterations: 1 (iteration k releases stage
  /// k - 1) or 0 (iteration k releases its own).
  int64_t inFlight;
  /// The body's MMAs outlive their gemm (wgmma groups): the consumers wait
  /// for the last after their loop. Otherwise (tcgen05) each gemm completes
  /// its own.
  bool mmaOutlivesGemm;
  /// The gemms' accumulators stay in their MMAs' storage through the loop
  /// (WarpSpecializedParams::holdAccumulators).
  bool holdAccumulators;
  /// The rotated two-gemm schedule, and the consumer warpgroups taking
  /// turns under it (0: none).
  bool mmaOverlap;
  int64_t turns;
  int64_t barrierOffset;
  int64_t threads, tiles, consumers, clusterBlocks;
  /// The schedule multicasts the largest copy (PipelineLoopPlan).
  bool multicastPlanned = false;
  Type i32;

  /// One tensor map per (tensor, box, swizzle), passed after the params:
  /// the box outermost first, one extent per dimension of the tensor
  /// (rows and columns on the dimensions a slice spans, 1 on the others).
  struct Map {
    Value tensor;
    SmallVector<int64_t> box;
    int64_t columns, swizzle;
    Value arg;
  };
  SmallVector<Map> maps;
  DenseMap<Operation *, unsigned> mapOf;
  int64_t stageBytes = 0;
  CopyOp largestShared;
  /// The copy multicast in clusters, and the values its tile depends on.
  CopyOp multicastCopy;
  llvm::SetVector<Value> multicastKey;

  std::optional<StageRing> ring;
  Value zero;
  /// Ping-pong: this thread's tile slot, and whether the block has a second
  /// tile.
  Value slot, secondTile;
  /// Multicasting: whether the tile at hand does, and this block's rank.
  Value multicast, rank;
  bool rebalance = false;
  int64_t consumerRegs = 0;
  /// The values the loop takes from before it.
  llvm::SetVector<Value> outside;
  /// The consumers' releases in clusters: the peers' barrier offsets, and
  /// whether the thread is its warp's first lane.
  SmallVector<Value> peerOffsets;
  Value firstLane;
  /// The consumers' loop over the iterations, and their last op (the loop,
  /// or what follows it under the rotated schedule).
  scf::ForOp consumerLoop;
  Operation *consumersEnd = nullptr;
  /// Taking turns: the named barriers this warpgroup waits on and the next
  /// one waits on (i32), and whether this is the last warpgroup.
  Value ownTurn, nextTurn, lastWarpgroup;
};

} // namespace tessera::sm90::detail

#endif // TESSERA_BACKENDS_SM90_WARPSPECIALIZEDLOOP_H_
