//===- LowerPipelined.cpp - Pipelining strategies of tile-lower-to-gpu --===//
//
// tile.pipelined loops, by the target's capabilities: the plan, cp.async
// multi-stage, register double buffering (no cp.async), or in order (the
// staged buffers do not fit). Warp specialization with TMA and mbarriers is
// in LowerWarpSpecialized.cpp, the ahead copies in LowerAsyncCopy.cpp,
// stream-K's exchange of partials in LowerStreamK.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"
#include "backends/ElementConversion.h"

#include "backends/NvvmOps.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

namespace tessera::lowering {

LogicalResult KernelLowering::lowerPipelined(PipelinedOp loop) {
  if (streamK_)
    zeroLaterPieces(loop);
  if (failed(lowerPipelinedStrategy(loop)))
    return failure();
  if (streamK_)
    exchangePartials(loop);
  return success();
}

KernelLowering::PipelinePlan KernelLowering::planPipelined(PipelinedOp loop) {
  PipelinePlan plan;
  auto stagesOf = [](Value buffer) -> int64_t {
    auto alloc = buffer.getDefiningOp<AllocSharedOp>();
    return alloc ? alloc.getStages().value_or(1) : 1;
  };
  // Copies into staged shared buffers (tile-plan-shared-memory staged them:
  // S stages with asynchronous copies, 2 without) run ahead of the compute.
  for (Operation &op : loop.getBodyBlock())
    if (auto copy = dyn_cast<CopyOp>(op))
      if (isa<TileTensorType>(copy.getSrc().getType()) && isa<BufferType>(copy.getDst().getType()))
        if (stagesOf(copy.getDst()) > 1) {
          plan.ahead.insert(copy);
          plan.stages = std::max(plan.stages, stagesOf(copy.getDst()));
        }
  if (plan.ahead.empty() || !caps_.hasAsyncCopy)
    return plan;

  // A gemm whose atom reads shared memory through the async proxy (wgmma)
  // needs the proxies fenced after the copies land, and may keep one MMA
  // group in flight while the next iteration starts; the stage it reads is
  // then refilled one iteration later, so copies run S - 2 ahead.
  //
  // A group stays in flight only when nothing else in the body touches the
  // gemms' accumulators (an epilogue or a cast in the loop reads them right
  // away) and no gemm reads A from registers (the next iteration would
  // rewrite them under the MMA still reading them).
  // Nor when the body writes shared memory other than through the copies
  // ahead (a staged fragment operand, a tile.parallel): the write would land
  // while the previous iteration's MMAs may still read the buffer.
  //
  // Whether the body's first gemm reads its operands with ldmatrix
  // (mma.sync m16n8k16 from shared memory) is noted on the way.
  bool keepInFlight = true, firstGemm = true;
  auto isShared = [](Value buffer) {
    auto type = dyn_cast<BufferType>(buffer.getType());
    return type && type.isShared();
  };
  for (Operation &op : loop.getBodyBlock()) {
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      FailureOr<MmaAtom> atom = selectMmaAtom(gemm, backend_, cc_, kernel_.getThreads());
      plan.asyncMma |= succeeded(atom) && atom->readsSharedAsync;
      if (firstGemm)
        plan.bodyUsesLdmatrix = succeeded(atom) && atom->kind == MmaAtomKind::kWarpMma &&
                                cast<BufferType>(gemm.getA().getType()).isShared();
      firstGemm = false;
      keepInFlight &= !cast<BufferType>(gemm.getA().getType()).isFragment();
      for (Operation *user : gemm.getC().getUsers())
        keepInFlight &= isa<GemmOp>(user) || !loop->isProperAncestor(user);
    } else if (!plan.ahead.contains(&op)) {
      op.walk([&](Operation *inner) {
        if (auto copy = dyn_cast<CopyOp>(inner))
          keepInFlight &= !isShared(copy.getDst());
        else if (auto store = dyn_cast<StoreOp>(inner))
          keepInFlight &= !isShared(store.getBuffer());
        else if (isa<FillOp, ClearOp>(inner))
          keepInFlight &= !isShared(inner->getOperand(0));
      });
    }
  }
  plan.inFlight = plan.asyncMma && keepInFlight && plan.stages >= 3 ? 1 : 0;

  // Warp specialization where the target has bulk tensor copies and
  // mbarriers, the loop sits at the kernel's top level, every copy ahead is
  // a bulk tensor copy, and the rest of the body is the async MMA and pure
  // arithmetic (nothing else touches shared memory between the stages).
  // The mbarriers (16 bytes a stage) go after the planned buffers and must
  // still fit the block's shared memory.
  int64_t threads = kernel_.getThreads();
  bool specialize = plan.asyncMma && caps_.hasBulkTensorCopy && caps_.hasMbarrier &&
                    loop->getBlock() == &kernel_.getBodyBlock() && threads % 128 == 0 &&
                    threads + 128 <= caps_.maxThreadsPerBlock && plan.stages >= 2 &&
                    mbarrierOffset() + 16 * plan.stages <= caps_.sharedMemoryPerBlock;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (plan.ahead.contains(&op))
      specialize &= canUseBulkTensorCopy(cast<CopyOp>(op));
    else if (!isa<GemmOp, DimOp>(op))
      specialize &= isPlainArithmetic(&op);
  }
  // The producer leaves before the kernel's own code and computes what the
  // loop takes from before it anew (per tile under ping-pong, persistence
  // and stream-K): that must be arithmetic of the block coordinates and the
  // kernel's arguments.
  for (Value v : valuesFromBefore(loop))
    specialize &= isRecomputable(v);
  specialize &= isRecomputable(loop.getCount());
  // The ping-pong schedule doubles the consumers and the shared buffers
  // other than this loop's stages (the ring the two tiles share), and needs
  // this loop to be the kernel's only one; so does a persistent kernel's
  // producer, which runs its own loop over the block's tiles. Their other
  // shared buffers move after the mbarriers.
  int64_t loops = 0;
  kernel_.walk([&](PipelinedOp) { ++loops; });
  bool relocatedFits = relocatedSharedBytes_ <= caps_.sharedMemoryPerBlock;
  plan.pingPong = pingPong_ && specialize && loops == 1 &&
                  2 * threads + 128 <= caps_.maxThreadsPerBlock && relocatedFits;
  plan.specialize = specialize && (!persistent_ || (loops == 1 && relocatedFits));
  return plan;
}

llvm::SetVector<Value> KernelLowering::valuesFromBefore(PipelinedOp loop) {
  llvm::SetVector<Value> outside;
  loop.getBodyBlock().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!loop->isAncestor(v.getParentRegion()->getParentOp()) &&
          !isa<TileTensorType, BufferType>(v.getType()))
        outside.insert(v);
  });
  return outside;
}

bool KernelLowering::isRecomputable(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return cast<BlockArgument>(value).getOwner() == &kernel_.getBodyBlock();
  if (isa<DimOp>(op))
    return true;
  if (!isPlainArithmetic(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) { return isRecomputable(operand); });
}

LogicalResult KernelLowering::lowerPipelinedStrategy(PipelinedOp loop) {
  // A stream-K piece runs iterations [skBegin_, skEnd_) of its tile.
  Value count = streamK_ ? arith::SubIOp::create(b_, loc_, skEnd_, skBegin_).getResult()
                         : map_.lookupOrDefault(loop.getCount());
  PipelinePlan plan = planPipelined(loop);
  const llvm::SmallPtrSetImpl<Operation *> &ahead = plan.ahead;
  int64_t stages = plan.stages;
  if (ahead.empty())
    return lowerPipelinedInOrder(loop, count);
  if (!caps_.hasAsyncCopy)
    return lowerPipelinedRegisterPrefetch(loop, count, ahead, stages);
  if (loop == specialized_)
    return lowerPipelinedSpecialized(loop, count, ahead, stages, mbarrierOffset());
  bool asyncMma = plan.asyncMma, bodyUsesLdmatrix = plan.bodyUsesLdmatrix;
  int64_t inFlight = plan.inFlight;
  int64_t distance = stages - 1 - inFlight;

  // cp.async multi-stage (PTX ISA §9.7.9.25): the prologue issues the
  // copies of iterations 0 .. D-1 (D = S - 1, or S - 2 with an MMA group in
  // flight); iteration k waits for its own group, synchronizes once, issues
  // iteration k + D into the stage iteration k + D - S used (complete: its
  // MMAs were waited for before the barrier), and computes on stage k mod S.
  //
  // In the loop, an iteration whose tiles all lie inside their tensors
  // (every iteration but the tails, in a large GEMM) takes a branch without
  // per-chunk bounds and byte counts: a third of the instructions of the
  // checked copies. The prologue's copies run once: checked only. So an
  // iteration's copies are issued checked (byte counts, zero fill),
  // branching on whether they lie inside their tensors, or known to
  // (kInteriorIfValid: unless past the loop, when there are none).
  //
  // With the kernel's `edge_loop`: a tile on the M or N edge has every
  // iteration's tiles partly outside their tensors, but only along the
  // dimensions the iteration does not move: its iterations (all but the K
  // tail) are issued kEdgeIfValid, whose bounds along those dimensions are
  // computed once per tile (checked edge iterations cost 1.15-1.5x an
  // interior one, which stream-K's static schedule cannot balance; the
  // third body costs 2-3% where there are no edges, so it is the kernel's
  // choice).
  enum class Copies { kChecked, kBranch, kInteriorIfValid, kEdgeIfValid };
  // The source dimensions each ahead copy's iteration moves, and whether
  // any copy has others (a tile that may sit on an edge).
  llvm::DenseMap<Operation *, SmallVector<bool>> varying;
  bool edges = false;
  if (kernel_.getEdgeLoop())
    for (Operation *op : ahead) {
      varying[op] = varyingDims(loop, cast<CopyOp>(op));
      edges |= llvm::is_contained(varying[op], false);
    }
  // Whether the copies of the iteration mapped now lie inside their
  // tensors along the dimensions the iteration moves.
  auto insideAlongK = [&](ArrayRef<CopyOp> copies) {
    Value inside;
    for (CopyOp copy : copies)
      inside = andi(inside, tileInBounds(copy, varying[copy]));
    return inside;
  };
  auto issue = [&](Value iteration, Copies mode) {
    IRMapping saved = map_;
    Value valid = lt(iteration, count);
    Value stage = arith::RemUIOp::create(b_, loc_, iteration, cst(stages));
    SmallVector<CopyOp> copies;
    mapIteration(loop, ahead, iteration, [&](CopyOp copy) { copies.push_back(copy); });
    auto issueCopies = [&](CopyBounds bounds) {
      for (CopyOp copy : copies) {
        auto staged = useStage({copy.getDst()}, stage);
        lowerAsyncCopy(copy, valid, bounds, varying[copy]);
      }
    };
    auto branchOn = [&](Value condition, CopyBounds then, llvm::function_ref<void()> otherwise) {
      auto branch = scf::IfOp::create(b_, loc_, condition, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPoint(branch.thenBlock()->getTerminator());
      issueCopies(then);
      b_.setInsertionPoint(branch.elseBlock()->getTerminator());
      otherwise();
    };
    if (mode == Copies::kBranch) {
      Value interior = valid;
      for (CopyOp copy : copies)
        interior = andi(interior, tileInBounds(copy));
      branchOn(interior, CopyBounds::kNone, [&] {
        if (edges)
          branchOn(andi(valid, insideAlongK(copies)), CopyBounds::kInvariant,
                   [&] { issueCopies(CopyBounds::kAll); });
        else
          issueCopies(CopyBounds::kAll);
      });
    } else if (mode == Copies::kInteriorIfValid) {
      ifThen(valid, [&] { issueCopies(CopyBounds::kNone); });
    } else if (mode == Copies::kEdgeIfValid) {
      ifThen(valid, [&] { issueCopies(CopyBounds::kInvariant); });
    } else {
      issueCopies(CopyBounds::kAll);
    }
    cpAsyncCommitGroup(b_, loc_);
    map_ = saved;
  };
  // A body that is one mma.sync gemm (ldmatrix from the staged buffers)
  // and arithmetic takes CUTLASS's order: the next iteration's first
  // fragments load right after the barrier that makes its stage visible,
  // placed before this iteration's last k-step, whose MMAs hide the loads'
  // latency (and the barrier's wait); step 0 then starts on registers.
  GemmOp prefetchGemm;
  const MmaAtomLowering *prefetchLowering = nullptr;
  if (!asyncMma && bodyUsesLdmatrix) {
    int64_t gemms = 0;
    bool plain = true;
    for (Operation &op : loop.getBodyBlock().without_terminator()) {
      if (auto gemm = dyn_cast<GemmOp>(op)) {
        ++gemms;
        prefetchGemm = gemm;
      } else if (!ahead.contains(&op) && !isa<DimOp>(op)) {
        plain &= isPlainArithmetic(&op);
      }
    }
    auto staged = [&](Value buffer) {
      return llvm::any_of(ahead, [&](Operation *op) { return cast<CopyOp>(op).getDst() == buffer; });
    };
    // With two stages the wait before the last k-step would be for the
    // copies just issued (no overlap left): the plain order then. A gemm
    // whose accumulator has no m16n8 layout is left to lowerGemmMma's error.
    MmaLayoutAttr layout =
        prefetchGemm ? buffers_[prefetchGemm.getC()].mma : MmaLayoutAttr();
    if (gemms != 1 || !plain || stages < 3 || !layout || layout.getM() != 16 ||
        layout.getN() != 8 || !staged(prefetchGemm.getA()) || !staged(prefetchGemm.getB()))
      prefetchGemm = nullptr;
    // The atom's lowering loads the fragments (ldmatrix for mma.sync).
    if (prefetchGemm) {
      std::optional<MmaAtom> atom = findMmaAtom(prefetchGemm, backend_, cc_, kernel_.getThreads());
      if (atom && atom->lowering && atom->lowering->canPrefetchFragments())
        prefetchLowering = atom->lowering;
      else
        prefetchGemm = nullptr;
    }
  }
  // The fragments one iteration hands the next, in registers after SROA
  // (allocated at the kernel's entry by the first load, sized by it).
  Value carry;
  SmallVector<int64_t> carryShape;  // A tiles and B pairs, four registers each
  auto loadFirstStep = [&](Value stage) {
    MmaFragments fragments;
    {
      auto staged = useStage({prefetchGemm.getA(), prefetchGemm.getB()}, stage);
      fragments = prefetchLowering->loadFragments(*this, prefetchGemm, 0);
    }
    if (!carry) {
      carryShape = {int64_t(fragments.a.size()), int64_t(fragments.b.size())};
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(entry_);
      carry = memref::AllocaOp::create(
          b_, loc_, MemRefType::get({4 * (carryShape[0] + carryShape[1])}, b_.getI32Type()));
    }
    int64_t slot = 0;
    for (auto *list : {&fragments.a, &fragments.b})
      for (const SmallVector<Value> &regs : *list)
        for (Value reg : regs)
          memref::StoreOp::create(b_, loc_, reg, carry, ValueRange{cst(slot++)});
  };
  auto readFirstStep = [&] {
    MmaFragments fragments;
    int64_t slot = 0;
    for (auto [list, count] : {std::pair{&fragments.a, carryShape[0]}, {&fragments.b, carryShape[1]}})
      for (int64_t i = 0; i < count; ++i) {
        SmallVector<Value> &regs = list->emplace_back();
        for (int r = 0; r < 4; ++r)
          regs.push_back(memref::LoadOp::create(b_, loc_, carry, ValueRange{cst(slot++)}));
      }
    return fragments;
  };
  auto waitAndSync = [&] {
    cpAsyncWaitGroup(b_, loc_, distance - 1);
    // cp.async writes through the generic proxy; wgmma reads through the
    // async proxy (PTX ISA §8.6 "Proxies").
    if (asyncMma)
      fenceProxyAsync();
    lastWasBarrier_ = false;
    barrier();
  };
  barrier();
  // The prologue as a loop: its copies are emitted once, not D times
  // (compile time; it runs once per block).
  if (distance > 0) {
    auto prologue = scf::ForOp::create(b_, loc_, cst(0), cst(distance), cst(1));
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(prologue.getBody()->getTerminator());
    issue(prologue.getInductionVar(), Copies::kChecked);
  }
  if (prefetchGemm) {
    waitAndSync();
    loadFirstStep(cst(0));
  }
  // One iteration k of the loop, its copies issued as `mode` says.
  auto emitIteration = [&](Value k, Copies mode) -> LogicalResult {
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
      Value nextStage = arith::RemUIOp::create(b_, loc_, add(k, cst(1)), cst(stages));
      prefetch.beforeLastStep = [&, nextStage] {
        waitAndSync();
        loadFirstStep(nextStage);
      };
      fragmentPrefetch_ = &prefetch;
    } else {
      waitAndSync();
    }
    auto clearPrefetch = llvm::make_scope_exit([&] { fragmentPrefetch_ = nullptr; });
    // With mma.sync (ldmatrix) the body's first fragment loads go before
    // the copies are issued (lowerGemmMma calls pendingIssue_ after them):
    // ptxas keeps ldmatrix and cp.async in program order, so the loads'
    // latency then hides behind the copies' address arithmetic instead of
    // stalling the first MMA. (Prefetching, step 0's fragments are already
    // in registers: FragmentPrefetch::copiesFirst says where they go.)
    Value next = add(k, cst(distance));
    if (!asyncMma && bodyUsesLdmatrix)
      pendingIssue_ = [&issue, next, mode] { issue(next, mode); };
    else
      issue(next, mode);
    // The copies just issued write a stage nothing reads in this iteration:
    // iteration k + D - S's, whose reads came before the barrier above (or,
    // prefetching, before the barrier ahead of iteration k - 1's last step).
    Value stage = arith::RemUIOp::create(b_, loc_, k, cst(stages));
    if (failed(lowerStagedBody(loop, ahead, k, stage, asyncMma ? inFlight : -1)))
      return failure();
    if (pendingIssue_) {
      pendingIssue_();
      pendingIssue_ = nullptr;
    }
    return success();
  };
  // Prefetching, the loop is versioned: while iteration k + D's copies lie
  // inside their tensors (or are past the loop: none), iterations without
  // the checked copies (whose registers and predicated instructions would
  // otherwise weigh on every iteration); one with checked copies where they
  // do not (the K tail, every iteration of a tile on the edge), then again:
  //   while (k < count) {
  //     while (k < count && (k + D >= count || inside(k + D))) hot(k++);
  //     if (k < count) checked(k++);
  //   }
  if (prefetchGemm) {
    Type index = b_.getIndexType();
    auto outer = scf::WhileOp::create(b_, loc_, TypeRange{index}, ValueRange{cst(0)});
    OpBuilder::InsertionGuard guard(b_);
    Block *outerBefore = b_.createBlock(&outer.getBefore(), {}, {index}, {loc_});
    Block *outerAfter = b_.createBlock(&outer.getAfter(), {}, {index}, {loc_});
    b_.setInsertionPointToStart(outerBefore);
    scf::ConditionOp::create(b_, loc_, lt(outerBefore->getArgument(0), count),
                             ValueRange{outerBefore->getArgument(0)});
    b_.setInsertionPointToStart(outerAfter);
    // while (condition(k)) iteration(k++), issued as `mode` says: the
    // iteration index after it.
    auto iterateWhile = [&](Value from, llvm::function_ref<Value(Value)> condition,
                            Copies mode) -> FailureOr<Value> {
      auto iterations = scf::WhileOp::create(b_, loc_, TypeRange{index}, ValueRange{from});
      Block *before = b_.createBlock(&iterations.getBefore(), {}, {index}, {loc_});
      Block *after = b_.createBlock(&iterations.getAfter(), {}, {index}, {loc_});
      b_.setInsertionPointToStart(before);
      Value at = before->getArgument(0);
      scf::ConditionOp::create(b_, loc_, condition(at), ValueRange{at});
      b_.setInsertionPointToStart(after);
      at = after->getArgument(0);
      if (failed(emitIteration(at, mode)))
        return failure();
      scf::YieldOp::create(b_, loc_, ValueRange{add(at, cst(1))});
      b_.setInsertionPointAfter(iterations);
      return iterations.getResult(0);
    };
    FailureOr<Value> hot = iterateWhile(
        outerAfter->getArgument(0),
        [&](Value k) {
          Value next = add(k, cst(distance));
          IRMapping saved = map_;
          Value inside;
          mapIteration(loop, ahead, next,
                       [&](CopyOp copy) { inside = andi(inside, tileInBounds(copy)); });
          map_ = saved;
          Value pastLoop = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sge, next, count);
          return andi(lt(k, count), arith::OrIOp::create(b_, loc_, pastLoop, inside));
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
        IRMapping savedMap = map_;
        mapIteration(loop, ahead, add(k, cst(distance)),
                     [&](CopyOp copy) { precomputeEdgeBytes(copy, varying[copy]); });
        map_ = savedMap;
      }
      auto clearEdgeBytes = llvm::make_scope_exit([&] { edgeBytes_.clear(); });
      FailureOr<Value> edge = iterateWhile(
          k,
          [&](Value at) {
            Value next = add(at, cst(distance));
            IRMapping savedMap = map_;
            SmallVector<CopyOp> copies;
            mapIteration(loop, ahead, next, [&](CopyOp copy) { copies.push_back(copy); });
            Value inK = insideAlongK(copies);
            map_ = savedMap;
            return andi(lt(next, count), inK);
          },
          Copies::kEdgeIfValid);
      if (failed(edge))
        return failure();
      k = *edge;
    }
    auto checked = scf::IfOp::create(b_, loc_, TypeRange{index}, lt(k, count),
                                     /*withElseRegion=*/true);
    b_.setInsertionPointToStart(checked.thenBlock());
    if (failed(emitIteration(k, Copies::kChecked)))
      return failure();
    scf::YieldOp::create(b_, loc_, ValueRange{add(k, cst(1))});
    b_.setInsertionPointToStart(checked.elseBlock());
    scf::YieldOp::create(b_, loc_, ValueRange{k});
    b_.setInsertionPointAfter(checked);
    scf::YieldOp::create(b_, loc_, checked.getResults());
  } else {
    auto forOp = scf::ForOp::create(b_, loc_, cst(0), count, cst(1));
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(forOp.getBody()->getTerminator());
    if (failed(emitIteration(forOp.getInductionVar(), Copies::kBranch)))
      return failure();
  }
  if (inFlight)
    wgmmaWaitGroup(b_, loc_, 0);
  for (auto [fragment, regs] : asyncAccumulators_)
    fenceRegisters(fragment, regs);
  asyncAccumulators_.clear();
  cpAsyncWaitGroup(b_, loc_, 0);
  lastWasBarrier_ = false;
  return success();
}

void KernelLowering::mapIteration(PipelinedOp loop,
                                  const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                  Value iteration, llvm::function_ref<void(CopyOp)> onCopy) {
  map_.map(loop.getInductionVar(), ivOffset_ ? add(iteration, ivOffset_) : iteration);
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (ahead.contains(&op))
      onCopy(cast<CopyOp>(op));
    else if (isa<DimOp>(op))
      (void)lowerOp(op); // Maps the dimension's value; emits nothing.
    else if (isPlainArithmetic(&op))
      b_.clone(op, map_);
  }
}

LogicalResult KernelLowering::lowerStagedBody(PipelinedOp loop,
                                              const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                              Value k, Value stage, int64_t inFlight) {
  SmallVector<Value> dsts;
  for (Operation *op : ahead)
    dsts.push_back(cast<CopyOp>(op).getDst());
  auto staged = useStage(dsts, stage);
  map_.map(loop.getInductionVar(), ivOffset_ ? add(k, ivOffset_) : k);
  inAsyncMmaPipeline_ = inFlight >= 0;
  asyncMmaInFlight_ = std::max<int64_t>(inFlight, 0);
  for (Operation &op : loop.getBodyBlock().without_terminator())
    if (!ahead.contains(&op) && failed(lowerOp(op)))
      return failure();
  inAsyncMmaPipeline_ = false;
  asyncMmaInFlight_ = 0;
  return success();
}

bool KernelLowering::canUseBulkTensorCopy(CopyOp copy) {
  // From the tile IR (run() plans before the buffers are lowered).
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  auto alloc = copy.getDst().getDefiningOp<AllocSharedOp>();
  if (!alloc || !alloc.getSwizzled())
    return false;
  BufferType dst = alloc.getType();
  SharedSwizzle swizzle = getSharedSwizzle(dst);
  if (tensor.type.getRank() != 2 || swizzle.rowBytes == 0 ||
      tensor.type.getElementType() != dst.getElementType())
    return false;
  int64_t element = getElementBytes(tensor.type.getElementType());
  ArrayRef<int64_t> tile = copy.getTileType().getShape();
  return (tensor.divisors[1] * element) % 16 == 0 && tile[0] <= 256 &&
         swizzle.rowBytes / element <= 256;
}

LogicalResult KernelLowering::lowerPipelinedRegisterPrefetch(
    PipelinedOp loop, Value count, const llvm::SmallPtrSetImpl<Operation *> &ahead,
    int64_t stages) {
  // Register double buffering (the strategy of targets without cp.async,
  // CUTLASS's sm70 mainloop): iteration k loads iteration k + 1's tiles from
  // global memory into registers, computes on stage k mod 2 meanwhile,
  // stores the registers to the other stage and synchronizes once. The
  // global loads' latency hides behind the MMAs. The stage iteration k
  // stores to, (k + 1) mod 2, was last read in iteration k - 1, and every
  // thread passed the barrier that ended it.
  auto load = [&](Value iteration) {
    IRMapping saved = map_;
    SmallVector<Value> tiles;
    mapIteration(loop, ahead, iteration,
                 [&](CopyOp copy) { tiles.push_back(loadTileToRegisters(copy)); });
    map_ = saved;
    return tiles;
  };
  auto store = [&](ArrayRef<Value> tiles, Value stage) {
    unsigned i = 0;
    for (Operation &op : loop.getBodyBlock().without_terminator()) {
      if (!ahead.contains(&op))
        continue;
      auto staged = useStage({cast<CopyOp>(op).getDst()}, stage);
      storeRegistersToTile(cast<CopyOp>(op), tiles[i++]);
    }
    lastWasBarrier_ = false;
  };
  barrier();
  store(load(cst(0)), cst(0));
  barrier();
  auto forOp = scf::ForOp::create(b_, loc_, cst(0), count, cst(1));
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(forOp.getBody()->getTerminator());
  Value k = forOp.getInductionVar();
  // The last iteration reloads its own tiles into the stage nobody reads
  // again (cheaper than a branch around the loads).
  Value next = arith::MinUIOp::create(b_, loc_, add(k, cst(1)),
                                      arith::SubIOp::create(b_, loc_, count, cst(1)));
  SmallVector<Value> tiles = load(next);
  lastWasBarrier_ = true; // the barrier ending the previous iteration
  if (failed(lowerStagedBody(loop, ahead, k, arith::RemUIOp::create(b_, loc_, k, cst(stages)),
                             /*inFlight=*/-1)))
    return failure();
  store(tiles, arith::RemUIOp::create(b_, loc_, add(k, cst(1)), cst(stages)));
  barrier();
  lastWasBarrier_ = false;
  return success();
}

Value KernelLowering::loadTileToRegisters(CopyOp copy) {
  BufferType tile = copy.getTileType();
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  Type eltType = buffers_[copy.getDst()].type.getElementType();
  DistributionAttr dist = copyDistribution(tile, tensor.type.getElementType());
  bool aligned = isVectorAligned(tensor, copy.getSrcOffsets(), dist.getVector());
  SmallVector<Value> offsets;
  for (Value v : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  // The values go through a per-thread array (registers after SROA): a last
  // chunk that overhangs the tile is loaded, and later stored, under a guard
  // its SSA values could not leave.
  int64_t slots = dist.slotsPerThread(tile.getNumElements());
  Value registers;
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(entry_);
    registers =
        memref::AllocaOp::create(b_, loc_, MemRefType::get({slots}, getStorageType(eltType)));
  }
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    int64_t slot = chunk.firstSlot;
    for (Value v : loadGlobal(tensor, tensorCoords(offsets, chunk), dist.getVector(), aligned))
      memref::StoreOp::create(b_, loc_,
                              convertElement(b_, loc_, v, tensor.type.getElementType(), eltType,
                                             saturatesInto(eltType)),
                              registers, ValueRange{cst(slot++)});
  });
  return registers;
}

void KernelLowering::storeRegistersToTile(CopyOp copy, Value registers) {
  BufferType tile = copy.getTileType();
  const BufferInfo &dst = buffers_[copy.getDst()];
  DistributionAttr dist = copyDistribution(tile, tensors_[copy.getSrc()].type.getElementType());
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    SmallVector<Value> values;
    for (int64_t v = 0; v < dist.getVector(); ++v)
      values.push_back(
          memref::LoadOp::create(b_, loc_, registers, ValueRange{cst(chunk.firstSlot + v)}));
    storeShared(dst, chunk.coords, values);
  });
}

LogicalResult KernelLowering::lowerPipelinedInOrder(PipelinedOp loop, Value count) {
  // The in-order strategy: always correct.
  auto forOp = scf::ForOp::create(b_, loc_, cst(0), count, cst(1));
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(forOp.getBody()->getTerminator());
  map_.map(loop.getInductionVar(), ivOffset_ ? add(forOp.getInductionVar(), ivOffset_)
                                             : forOp.getInductionVar());
  lastWasBarrier_ = false;
  if (failed(lowerBlock(loop.getBodyBlock())))
    return failure();
  // The next iteration's copies overwrite shared buffers this one read.
  barrier();
  lastWasBarrier_ = false;
  return success();
}

} // namespace tessera::lowering
