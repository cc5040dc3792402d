//===- StageRing.cpp - A ring of shared-memory stages on mbarriers --------===//

#include "backends/sm90/StageRing.h"

#include "contract/NvvmOps.h"

#include <string>
#include <tuple>

namespace tessera::sm90 {

using namespace mlir;
using namespace tessera::lowering;

StageRing::Position StageRing::at(Value base, Value k) {
  OpBuilder &b = kernel_.builder();
  Location loc = kernel_.loc();
  Value position = base ? kernel_.add(base, k) : k;
  auto [p, stage, round] =
      std::make_tuple(position, arith::RemUIOp::create(b, loc, position, kernel_.cst(stages_)),
                      arith::DivUIOp::create(b, loc, position, kernel_.cst(stages_)));
  return {p, stage, round};
}

Value StageRing::full(Value stage) {
  return kernel_.toI32(kernel_.add(
      sharedStart_, kernel_.add(kernel_.cst(offset_), kernel_.mul(stage, kernel_.cst(8)))));
}

Value StageRing::empty(Value stage) {
  return kernel_.toI32(kernel_.add(sharedStart_, kernel_.add(kernel_.cst(offset_ + 8 * stages_),
                                                             kernel_.mul(stage, kernel_.cst(8)))));
}

void StageRing::waitParity(Value barrier, Value parity) {
  mbarrierWaitParity(kernel_.builder(), kernel_.loc(), barrier, parity);
}

void StageRing::init(int64_t consumerArrivals) {
  for (int64_t s = 0; s < stages_; ++s) {
    // Inline PTX: nvvm.mbarrier.init takes a 64-bit shared pointer and a
    // register count (mbarrier.init.shared.b64 [%rd], %r; 64-bit arithmetic).
    kernel_.ptx("mbarrier.init.shared::cta.b64 [$0], 1;", "r", {full(kernel_.cst(s))});
    kernel_.ptx("mbarrier.init.shared::cta.b64 [$0], " + std::to_string(consumerArrivals) + ";",
                "r", {empty(kernel_.cst(s))});
  }
  fenceMbarrierInit(kernel_.builder(), kernel_.loc());
}

void StageRing::producerAcquire(const Position &pos) {
  OpBuilder &b = kernel_.builder();
  Location loc = kernel_.loc();
  Value parity = kernel_.toI32(arith::XOrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, pos.round, kernel_.cst(1)), kernel_.cst(1)));
  waitParity(empty(pos.stage), parity);
}

void StageRing::producerArm(Value stage, int64_t bytes) {
  // Inline PTX: nvvm.mbarrier.arrive.expect_tx takes a 64-bit shared
  // pointer and a register count, and returns the state (no `_` sink).
  kernel_.ptx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], " + std::to_string(bytes) + ";",
              "r", {full(stage)});
}

void StageRing::consumerWait(const Position &pos) {
  waitParity(full(pos.stage), kernel_.toI32(arith::AndIOp::create(kernel_.builder(), kernel_.loc(),
                                                                  pos.round, kernel_.cst(1))));
}

void StageRing::consumerRelease(Value stage, Value arrivals) {
  // Inline PTX (the arrives): nvvm.mbarrier.arrive takes 64-bit pointers;
  // on shared::cta it also returns the state (no `_` sink).
  if (!arrivals) {
    kernel_.ptx("mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {empty(stage)});
    return;
  }
  kernel_.ptx("mbarrier.arrive.shared::cta.b64 _, [$0], $1;", "r,r", {empty(stage), arrivals});
}

void StageRing::consumerReleaseRemote(Value stage, Value peerOffset) {
  kernel_.ptx("mbarrier.arrive.shared::cluster.b64 _, [$0];", "r",
              {arith::AddIOp::create(kernel_.builder(), kernel_.loc(), empty(stage), peerOffset)});
}

} // namespace tessera::sm90
