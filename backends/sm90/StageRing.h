//===- StageRing.h - A ring of shared-memory stages on mbarriers -*- C++ -*-===//
//
// The producer/consumer handshake of a warp-specialized pipeline, in the
// shape CUTLASS gives PipelineTmaAsync: S stages of shared memory, each with
// a "full" mbarrier (the producer's copies landed: one arrival that arms the
// expected bytes, then the bulk copies' transactions) and an "empty" one
// (the consumers are done reading). A position p of the ring is stage
// p mod S in round p / S; a round's phase parity is what the waits compare.
//
//   producer: acquire(p)  -> arm(p, bytes) -> copies complete on full(p)
//   consumer: wait(p)     -> compute       -> release(p)
//
// The mbarriers lie `offset` bytes into the dynamic shared memory: full[s]
// at offset + 8 s, empty[s] at offset + 8 (S + s).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_STAGERING_H
#define TESSERA_BACKENDS_SM90_STAGERING_H

#include "contract/PipelineLoweringContext.h"

namespace tessera::sm90 {

class StageRing {
public:
  /// A position of the ring: its stage and its round (whose parity is the
  /// phase the stage's barriers are in).
  struct Position {
    mlir::Value position, stage, round;
  };

  /// A ring of `stages` stages whose barriers start `offset` bytes after
  /// `sharedStart` (the dynamic shared memory's address).
  StageRing(lowering::PipelineLoweringContext &kernel, mlir::Value sharedStart, int64_t offset,
            int64_t stages)
      : kernel_(kernel), sharedStart_(sharedStart), offset_(offset), stages_(stages) {}

  int64_t stages() const { return stages_; }
  /// Position `k` of a run of iterations that starts at ring position `base`
  /// (none: 0).
  Position at(mlir::Value base, mlir::Value k);
  /// The 32-bit shared addresses of a stage's barriers.
  mlir::Value full(mlir::Value stage);
  mlir::Value empty(mlir::Value stage);

  /// Initializes every stage's barriers (one thread; fenced for the async
  /// proxy): full expects one arrival, empty `consumerArrivals`.
  void init(int64_t consumerArrivals);
  /// Producer: waits until the stage at `pos` is free. The first round
  /// finds every stage free (the phase before a barrier's first counts as
  /// complete).
  void producerAcquire(const Position &pos);
  /// Producer: arrives on the stage's full barrier expecting `bytes` of
  /// copies, which complete it.
  void producerArm(mlir::Value stage, int64_t bytes);
  /// Consumer: waits until the copies of the stage at `pos` have landed.
  void consumerWait(const Position &pos);
  /// Consumer: gives `stage` back to this block's producer (`arrivals`
  /// arrivals, none: one), or to the producer of the block `peerOffset`
  /// away in the cluster.
  void consumerRelease(mlir::Value stage, mlir::Value arrivals = {});
  void consumerReleaseRemote(mlir::Value stage, mlir::Value peerOffset);

private:
  /// Waits until the phase of parity `parity` of barrier `barrier` completed.
  void waitParity(mlir::Value barrier, mlir::Value parity);

  lowering::PipelineLoweringContext &kernel_;
  mlir::Value sharedStart_;
  int64_t offset_, stages_;
};

} // namespace tessera::sm90

#endif // TESSERA_BACKENDS_SM90_STAGERING_H
