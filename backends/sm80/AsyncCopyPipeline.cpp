//===- AsyncCopyPipeline.cpp - sm80's cp.async multi-stage pipelining -----===//
//
// cp.async multi-stage (PTX ISA §9.7.9.25): the prologue issues the copies
// of iterations 0 .. D-1 (D = S - 1, or S - 2 with an MMA group in flight);
// iteration k waits for its own group, synchronizes once, issues iteration
// k + D into the stage iteration k + D - S used (complete: its MMAs were
// waited for before the barrier), and computes on stage k mod S.
//
// In the loop, an iteration whose tiles all lie inside their tensors (every
// iteration but the tails, in a large GEMM) takes a branch without
// per-chunk bounds and byte counts: a third of the instructions of the
// checked copies. The prologue's copies run once: checked only. So an
// iteration's copies are issued checked (byte counts, zero fill), branching
// on whether they lie inside their tensors, or known to (kInteriorIfValid:
// unless past the loop, when there are none).
//
// With the kernel's `edge_loop`: a tile on the M or N edge has every
// iteration's tiles partly outside their tensors, but only along the
// dimensions the iteration does not move: its iterations (all but the K
// tail) are issued kEdgeIfValid, whose bounds along those dimensions are
// computed once per tile (checked edge iterations cost more than an
// interior one, which stream-K's static schedule cannot balance; the third
// body costs a little where there are no edges, so it is the kernel's
// choice).
//
//===----------------------------------------------------------------------===//

#include "backends/sm80/AsyncCopyPipeline.h"

#include "contract/NvvmOps.h"
#include "backends/sm80/AsyncCopy.h"
#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/ScopeExit.h"

namespace tessera::sm80 {

using namespace mlir;
using namespace tessera::lowering;
using namespace tessera::tile;
using lowering::FragmentPrefetch;
using lowering::MmaAtomLowering;
using lowering::MmaFragments;
using lowering::PipelineLoweringContext;

namespace {

/// How one iteration's copies are issued.
enum class Copies { kChecked, kBranch, kInteriorIfValid, kEdgeIfValid };

/// One cp.async-pipelined loop being emitted: what its parts share.
class AsyncCopyLoop {
public:
  AsyncCopyLoop(PipelineLoweringContext &kernel, PipelinedOp loop, Value count,
                const PipelineLoopPlan &plan)
      : kl(kernel), b(kernel.builder()), loc(kernel.loc()), copies(kernel), loop(loop),
        count(count), ahead(plan.ahead), stages(plan.stages), asyncMma(plan.asyncMma),
        firstGemmDefersCopies(plan.firstGemmDefersCopies), inFlight(plan.inFlight),
        distance(plan.stages - 1 - plan.inFlight) {}

  LogicalResult emit();

private:
  Value insideAlongK(ArrayRef<CopyOp> copyOps);
  void issue(Value iteration, Copies mode);
  void choosePrefetchGemm();
  void loadFirstStep(Value stage);
  MmaFragments readFirstStep();
  void waitAndSync();
  LogicalResult emitIteration(Value k, Copies mode);
  FailureOr<Value> iterateWhile(Value from, llvm::function_ref<Value(Value)> condition,
                                Copies mode);
  LogicalResult emitVersionedLoop();

  PipelineLoweringContext &kl;
  OpBuilder &b;
  Location loc;
  AsyncCopies copies;
  PipelinedOp loop;
  Value count;
  const llvm::SmallPtrSetImpl<Operation *> &ahead;
  int64_t stages;
  bool asyncMma, firstGemmDefersCopies;
  int64_t inFlight, distance;
  /// The source dimensions each ahead copy's iteration moves, and whether
  /// any copy has others (a tile that may sit on an edge).
  llvm::DenseMap<Operation *, SmallVector<bool>> varying;
  bool edges = false;
  /// The body's one gemm whose next k-step's fragments load ahead, and its
  /// atom's lowering (which loads them).
  GemmOp prefetchGemm;
  const MmaAtomLowering *prefetchLowering = nullptr;
  /// The fragments one iteration hands the next, in registers after SROA
  /// (allocated at the kernel's entry by the first load, sized by it): A
  /// tiles and B pairs, four registers each.
  Value carry;
  SmallVector<int64_t> carryShape;
};

Value AsyncCopyLoop::insideAlongK(ArrayRef<CopyOp> copyOps) {
  // Whether the copies of the iteration mapped now lie inside their
  // tensors along the dimensions the iteration moves.
  Value inside;
  for (CopyOp copy : copyOps)
    inside = kl.andi(inside, copies.tileInBounds(copy, varying[copy]));
  return inside;
}

void AsyncCopyLoop::issue(Value iteration, Copies mode) {
  IRMapping saved = kl.valueMap();
  Value valid = kl.lt(iteration, count);
  Value stage = arith::RemUIOp::create(b, loc, iteration, kl.cst(stages));
  SmallVector<CopyOp> copyOps;
  kl.mapIteration(loop, ahead, iteration, [&](CopyOp copy) { copyOps.push_back(copy); });
  auto issueCopies = [&](CopyBounds bounds) {
    for (CopyOp copy : copyOps) {
      auto staged = kl.useStage({copy.getDst()}, stage);
      copies.lowerAsyncCopy(copy, valid, bounds, varying[copy]);
    }
  };
  auto branchOn = [&](Value condition, CopyBounds then, llvm::function_ref<void()> otherwise) {
    auto branch = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    issueCopies(then);
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    otherwise();
  };
  if (mode == Copies::kBranch) {
    Value interior = valid;
    for (CopyOp copy : copyOps)
      interior = kl.andi(interior, copies.tileInBounds(copy));
    branchOn(interior, CopyBounds::kNone, [&] {
      if (edges)
        branchOn(kl.andi(valid, insideAlongK(copyOps)), CopyBounds::kInvariant,
                 [&] { issueCopies(CopyBounds::kAll); });
      else
        issueCopies(CopyBounds::kAll);
    });
  } else if (mode == Copies::kInteriorIfValid) {
    kl.ifThen(valid, [&] { issueCopies(CopyBounds::kNone); });
  } else if (mode == Copies::kEdgeIfValid) {
    kl.ifThen(valid, [&] { issueCopies(CopyBounds::kInvariant); });
  } else {
    issueCopies(CopyBounds::kAll);
  }
  cpAsyncCommitGroup(b, loc);
  kl.valueMap() = saved;
}

void AsyncCopyLoop::choosePrefetchGemm() {
  // A body that is one mma.sync gemm (ldmatrix from the staged buffers)
  // and arithmetic takes CUTLASS's order: the next iteration's first
  // fragments load right after the barrier that makes its stage visible,
  // placed before this iteration's last k-step, whose MMAs hide the loads'
  // latency (and the barrier's wait); step 0 then starts on registers.
  if (asyncMma || !firstGemmDefersCopies)
    return;
  int64_t gemms = 0;
  bool plain = true;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      ++gemms;
      prefetchGemm = gemm;
    } else if (!ahead.contains(&op) && !isa<DimOp>(op)) {
      plain &= lowering::isPlainArithmetic(&op);
    }
  }
  auto staged = [&](Value buffer) {
    return llvm::any_of(ahead, [&](Operation *op) { return cast<CopyOp>(op).getDst() == buffer; });
  };
  // With two stages the wait before the last k-step would be for the
  // copies just issued (no overlap left): the plain order then. A gemm
  // whose accumulator has no m16n8 layout is left to the atom's error.
  MmaLayoutAttr layout = prefetchGemm ? kl.buffer(prefetchGemm.getC()).mma : MmaLayoutAttr();
  if (gemms != 1 || !plain || stages < 3 || !layout || layout.getM() != 16 ||
      layout.getN() != 8 || !staged(prefetchGemm.getA()) || !staged(prefetchGemm.getB()))
    prefetchGemm = nullptr;
  // The atom's lowering loads the fragments (ldmatrix for mma.sync).
  if (prefetchGemm) {
    std::optional<MmaAtom> atom =
        findMmaAtom(prefetchGemm, kl.backend(), kl.computeCapability(), kl.kernel().getThreads());
    if (atom && atom->lowering && atom->lowering->canPrefetchFragments())
      prefetchLowering = atom->lowering;
    else
      prefetchGemm = nullptr;
  }
}

void AsyncCopyLoop::loadFirstStep(Value stage) {
  MmaFragments fragments;
  {
    auto staged = kl.useStage({prefetchGemm.getA(), prefetchGemm.getB()}, stage);
    fragments = prefetchLowering->loadFragments(kl, prefetchGemm, 0);
  }
  if (!carry) {
    carryShape = {int64_t(fragments.a.size()), int64_t(fragments.b.size())};
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kl.entryBlock());
    carry = memref::AllocaOp::create(
        b, loc, MemRefType::get({4 * (carryShape[0] + carryShape[1])}, b.getI32Type()));
  }
  int64_t slot = 0;
  for (auto *list : {&fragments.a, &fragments.b})
    for (const SmallVector<Value> &regs : *list)
      for (Value reg : regs)
        memref::StoreOp::create(b, loc, reg, carry, ValueRange{kl.cst(slot++)});
}

MmaFragments AsyncCopyLoop::readFirstStep() {
  MmaFragments fragments;
  int64_t slot = 0;
  for (auto [list, n] : {std::pair{&fragments.a, carryShape[0]}, {&fragments.b, carryShape[1]}})
    for (int64_t i = 0; i < n; ++i) {
      SmallVector<Value> &regs = list->emplace_back();
      for (int r = 0; r < 4; ++r)
        regs.push_back(memref::LoadOp::create(b, loc, carry, ValueRange{kl.cst(slot++)}));
    }
  return fragments;
}

void AsyncCopyLoop::waitAndSync() {
  cpAsyncWaitGroup(b, loc, distance - 1);
  // cp.async writes through the generic proxy; wgmma reads through the
  // async proxy (PTX ISA §8.6 "Proxies").
  if (asyncMma)
    kl.fenceProxyAsync();
  kl.noteSharedAccess();
  kl.barrier();
}

LogicalResult AsyncCopyLoop::emitIteration(Value k, Copies mode) {
  // Iteration k's group is complete once at most S - 2 newer ones are
  // pending; after the barrier every thread has also finished iteration
  // k - 1, so its stage may be refilled with iteration k + S - 1.
  // (Prefetching, the wait and barrier of iteration k + 1 come before k's
  // last k-step instead; k's own were the iteration before's, or the
  // prologue's: k - 1's reads of the stage refilled now, its steps past
  // the first, came before that barrier.)
  FragmentPrefetch prefetch;
  if (prefetchGemm) {
    prefetch.current = readFirstStep();
    prefetch.copiesFirst = mode != Copies::kInteriorIfValid && mode != Copies::kEdgeIfValid;
    Value nextStage = arith::RemUIOp::create(b, loc, kl.add(k, kl.cst(1)), kl.cst(stages));
    prefetch.beforeLastStep = [this, nextStage] {
      waitAndSync();
      loadFirstStep(nextStage);
    };
    kl.setFragmentPrefetch(&prefetch);
  } else {
    waitAndSync();
  }
  llvm::scope_exit clearPrefetch([&] { kl.setFragmentPrefetch(nullptr); });
  // With mma.sync (ldmatrix) the body's first fragment loads go before the
  // copies are issued (the atom's lowering calls issueDeferredCopies after
  // them): ptxas keeps ldmatrix and cp.async in program order, so the
  // loads' latency then hides behind the copies' address arithmetic
  // instead of stalling the first MMA. (Prefetching, step 0's fragments are
  // already in registers: FragmentPrefetch::copiesFirst says where they go.)
  Value next = kl.add(k, kl.cst(distance));
  if (!asyncMma && firstGemmDefersCopies)
    kl.deferCopies([this, next, mode] { issue(next, mode); });
  else
    issue(next, mode);
  // The copies just issued write a stage nothing reads in this iteration:
  // iteration k + D - S's, whose reads came before the barrier above (or,
  // prefetching, before the barrier ahead of iteration k - 1's last step).
  Value stage = arith::RemUIOp::create(b, loc, k, kl.cst(stages));
  if (failed(kl.lowerStagedBody(loop, ahead, k, stage, asyncMma ? inFlight : -1)))
    return failure();
  kl.issueDeferredCopies();
  return success();
}

FailureOr<Value> AsyncCopyLoop::iterateWhile(Value from,
                                             llvm::function_ref<Value(Value)> condition,
                                             Copies mode) {
  // while (condition(k)) iteration(k++), issued as `mode` says: the
  // iteration index after it.
  Type index = b.getIndexType();
  auto iterations = scf::WhileOp::create(b, loc, TypeRange{index}, ValueRange{from});
  Block *before = b.createBlock(&iterations.getBefore(), {}, {index}, {loc});
  Block *after = b.createBlock(&iterations.getAfter(), {}, {index}, {loc});
  b.setInsertionPointToStart(before);
  Value at = before->getArgument(0);
  scf::ConditionOp::create(b, loc, condition(at), ValueRange{at});
  b.setInsertionPointToStart(after);
  at = after->getArgument(0);
  if (failed(emitIteration(at, mode)))
    return failure();
  scf::YieldOp::create(b, loc, ValueRange{kl.add(at, kl.cst(1))});
  b.setInsertionPointAfter(iterations);
  return iterations.getResult(0);
}

LogicalResult AsyncCopyLoop::emitVersionedLoop() {
  // Prefetching, the loop is versioned: while iteration k + D's copies lie
  // inside their tensors (or are past the loop: none), iterations without
  // the checked copies (whose registers and predicated instructions would
  // otherwise weigh on every iteration); one with checked copies where they
  // do not (the K tail, every iteration of a tile on the edge), then again:
  //   while (k < count) {
  //     while (k < count && (k + D >= count || inside(k + D))) hot(k++);
  //     if (k < count) checked(k++);
  //   }
  Type index = b.getIndexType();
  auto outer = scf::WhileOp::create(b, loc, TypeRange{index}, ValueRange{kl.cst(0)});
  OpBuilder::InsertionGuard guard(b);
  Block *outerBefore = b.createBlock(&outer.getBefore(), {}, {index}, {loc});
  Block *outerAfter = b.createBlock(&outer.getAfter(), {}, {index}, {loc});
  b.setInsertionPointToStart(outerBefore);
  scf::ConditionOp::create(b, loc, kl.lt(outerBefore->getArgument(0), count),
                           ValueRange{outerBefore->getArgument(0)});
  b.setInsertionPointToStart(outerAfter);
  FailureOr<Value> hot = iterateWhile(
      outerAfter->getArgument(0),
      [&](Value k) {
        Value next = kl.add(k, kl.cst(distance));
        IRMapping saved = kl.valueMap();
        Value inside;
        kl.mapIteration(loop, ahead, next,
                        [&](CopyOp copy) { inside = kl.andi(inside, copies.tileInBounds(copy)); });
        kl.valueMap() = saved;
        Value pastLoop = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, next, count);
        return kl.andi(kl.lt(k, count), arith::OrIOp::create(b, loc, pastLoop, inside));
      },
      Copies::kInteriorIfValid);
  if (failed(hot))
    return failure();
  Value k = *hot;
  // A tile on an edge: the iterations whose copies lie inside their
  // tensors along K (every one but the K tail's).
  //     while (k + D < count && insideAlongK(k + D)) edge(k++);
  if (edges) {
    {
      IRMapping savedMap = kl.valueMap();
      kl.mapIteration(loop, ahead, kl.add(k, kl.cst(distance)),
                      [&](CopyOp copy) { copies.precomputeEdgeBytes(copy, varying[copy]); });
      kl.valueMap() = savedMap;
    }
    llvm::scope_exit clearEdgeBytes([&] { copies.forgetEdgeBytes(); });
    FailureOr<Value> edge = iterateWhile(
        k,
        [&](Value at) {
          Value next = kl.add(at, kl.cst(distance));
          IRMapping savedMap = kl.valueMap();
          SmallVector<CopyOp> copyOps;
          kl.mapIteration(loop, ahead, next, [&](CopyOp copy) { copyOps.push_back(copy); });
          Value inK = insideAlongK(copyOps);
          kl.valueMap() = savedMap;
          return kl.andi(kl.lt(next, count), inK);
        },
        Copies::kEdgeIfValid);
    if (failed(edge))
      return failure();
    k = *edge;
  }
  auto checked = scf::IfOp::create(b, loc, TypeRange{index}, kl.lt(k, count),
                                   /*withElseRegion=*/true);
  b.setInsertionPointToStart(checked.thenBlock());
  if (failed(emitIteration(k, Copies::kChecked)))
    return failure();
  scf::YieldOp::create(b, loc, ValueRange{kl.add(k, kl.cst(1))});
  b.setInsertionPointToStart(checked.elseBlock());
  scf::YieldOp::create(b, loc, ValueRange{k});
  b.setInsertionPointAfter(checked);
  scf::YieldOp::create(b, loc, checked.getResults());
  return success();
}

LogicalResult AsyncCopyLoop::emit() {
  if (kl.kernel().getEdgeLoop())
    for (Operation *op : ahead) {
      varying[op] = copies.varyingDims(loop, cast<CopyOp>(op));
      edges |= llvm::is_contained(varying[op], false);
    }
  choosePrefetchGemm();
  kl.barrier();
  // The prologue as a loop: its copies are emitted once, not D times
  // (compile time; it runs once per block).
  if (distance > 0) {
    auto prologue = scf::ForOp::create(b, loc, kl.cst(0), kl.cst(distance), kl.cst(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologue.getBody()->getTerminator());
    issue(prologue.getInductionVar(), Copies::kChecked);
  }
  if (prefetchGemm) {
    waitAndSync();
    loadFirstStep(kl.cst(0));
  }
  if (prefetchGemm) {
    if (failed(emitVersionedLoop()))
      return failure();
  } else {
    auto forOp = scf::ForOp::create(b, loc, kl.cst(0), count, kl.cst(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    if (failed(emitIteration(forOp.getInductionVar(), Copies::kBranch)))
      return failure();
  }
  if (inFlight)
    wgmmaWaitGroup(b, loc, 0);
  kl.fenceAsyncAccumulators();
  cpAsyncWaitGroup(b, loc, 0);
  kl.noteSharedAccess();
  return success();
}

} // namespace

std::string AsyncCopyPipeline::tryPlan(PipelineLoweringContext &kernel, PipelinedOp loop,
                                       PipelineLoopPlan &plan) const {
  if (plan.ahead.empty())
    return "the loop copies nothing into staged shared buffers";
  if (!kernel.capabilities().hasAsyncCopy)
    return "the target has no cp.async";
  if (plan.stages < 2)
    return "the loop's staged buffers have one stage";
  // An async MMA (wgmma) may keep one group in flight while the next
  // iteration starts; the stage it reads is then refilled one iteration
  // later, so copies run S - 2 ahead: with at least three stages.
  plan.inFlight = plan.mayKeepMmaInFlight && plan.stages >= 3 ? 1 : 0;
  return "";
}

LogicalResult AsyncCopyPipeline::lower(PipelineLoweringContext &kernel, PipelinedOp loop,
                                       Value count, const PipelineLoopPlan &plan) const {
  return AsyncCopyLoop(kernel, loop, count, plan).emit();
}

const PipelineStrategy &asyncCopyPipeline() {
  static const AsyncCopyPipeline strategy;
  return strategy;
}

} // namespace tessera::sm80
