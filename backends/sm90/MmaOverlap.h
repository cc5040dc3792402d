//===- MmaOverlap.h - A two-gemm body split across iterations -*- C++ -*-===//
//
// FlashAttention-3's intra-warpgroup overlap, as a schedule of the TMA
// warp-specialized loop: a body of two gemms with work between them
// (S = Q K^T, the softmax, O += P V) runs rotated, so that iteration k
// issues its first gemm and iteration k - 1's last gemm back to back, and
// runs its own softmax while that last gemm is still in flight:
//
//   trip k:  issue   (the ops through the first gemm, iteration k)
//            deferred (iteration k - 1's last gemm and the ops writing its
//                     accumulator, e.g. O's rescale), issued async
//            wait for the first gemm; rest (iteration k's ops after it),
//            waiting for the deferred gemm before the first op that writes
//            its A operand (P), and releasing stage k - 1 there
//   after:   deferred (the last iteration's), wait
//
// splitForMmaOverlap decides whether a body can run so (planning); the
// consumers' emission (MmaOverlap.cpp) follows the split. Private to the
// sm90 backend.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BACKENDS_SM90_MMAOVERLAP_H_
#define TESSERA_BACKENDS_SM90_MMAOVERLAP_H_

#include "contract/PipelineStrategy.h"
#include "ir/TileDialect.h"

#include <string>

namespace tessera::sm90 {

/// The named barriers of consumer warpgroups taking turns (warpgroup w
/// waits on kFirstTurnBarrier + w); 1 to 3 are the ping-pong schedule's.
constexpr int64_t kFirstTurnBarrier = 4;

/// The body's ops by their place in the rotated schedule (top-level ops,
/// without the copies ahead and the plain arithmetic, which every part
/// recomputes for its own iteration).
struct MmaOverlapSplit {
  llvm::SmallVector<mlir::Operation *> issue, deferred, rest;
  /// The first op of `rest` that writes the deferred gemm's A operand
  /// (null: none); the deferred gemm completes before it.
  mlir::Operation *firstWriterOfA = nullptr;
  tile::GemmOp first, last;
  /// The issue and deferred parts touch only fragments besides the gemms
  /// and hold no reduction: nothing there synchronizes the consumers, so
  /// they may run inside a warpgroup's turn.
  bool turnsSafe = false;
  /// The body holds two gemms (whether or not they split): a reason in
  /// `why` is then worth a remark.
  bool twoGemms = false;
};

/// The split of `loop`'s body (`ahead`: its copies ahead) for the rotated
/// schedule, or the reason it has none in `why` (and a split with no
/// gemms; `twoGemms` says whether the body had two).
MmaOverlapSplit splitForMmaOverlap(tile::PipelinedOp loop,
                                   const llvm::SmallPtrSetImpl<mlir::Operation *> &ahead,
                                   std::string &why);

} // namespace tessera::sm90

#endif // TESSERA_BACKENDS_SM90_MMAOVERLAP_H_
