//===- LowerPipelined.cpp - Pipelining strategies of tile-lower-to-gpu --===//
//
// tile.pipelined loops, by the target's capabilities: warp specialization
// with TMA and mbarriers, cp.async multi-stage, register double buffering
// (no cp.async), or in order (the staged buffers do not fit).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"

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
    registers = memref::AllocaOp::create(b_, loc_, MemRefType::get({slots}, eltType));
  }
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    int64_t slot = chunk.firstSlot;
    for (Value v : loadGlobal(tensor, tensorCoords(offsets, chunk), dist.getVector(), aligned))
      memref::StoreOp::create(b_, loc_, convert(v, eltType), registers, ValueRange{cst(slot++)});
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

Value KernelLowering::tileInBounds(CopyOp copy, ArrayRef<bool> only) {
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  Value inside;
  for (auto [d, offset, extent, dim] : llvm::enumerate(
           copy.getSrcOffsets(), copy.getTileType().getShape(), tensor.dims))
    if (only.empty() || only[d])
      inside = andi(inside, le(add(map_.lookupOrDefault(offset), cst(extent)), dim));
  return inside ? inside : arith::ConstantIntOp::create(b_, loc_, 1, 1).getResult();
}

SmallVector<bool> KernelLowering::varyingDims(PipelinedOp loop, CopyOp copy) {
  SmallVector<bool> varying;
  for (Value offset : copy.getSrcOffsets())
    varying.push_back(dependsOnAny(offset, {loop.getInductionVar()}));
  return varying;
}

Value KernelLowering::chunkBytes(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                                 ArrayRef<bool> varying, Value also) {
  int64_t eltBytes = getElementBytes(tensor.type.getElementType());
  auto checks = [&](size_t d) { return varying.empty() || !varying[d]; };
  Value rows;
  for (size_t d = 0; d + 1 < coords.size(); ++d)
    if (checks(d))
      rows = andi(rows, lt(coords[d], tensor.dims[d]));
  Value bytes = cst(vector * eltBytes);
  if (checks(coords.size() - 1)) {
    Value remaining = arith::SubIOp::create(b_, loc_, tensor.dims.back(), coords.back());
    bytes = mul(arith::MaxSIOp::create(
                    b_, loc_, arith::MinSIOp::create(b_, loc_, remaining, cst(vector)), cst(0)),
                cst(eltBytes));
  }
  if (also)
    rows = andi(rows, also);
  return rows ? arith::SelectOp::create(b_, loc_, rows, bytes, cst(0)).getResult() : bytes;
}

void KernelLowering::precomputeEdgeBytes(CopyOp copy, ArrayRef<bool> varying) {
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  DistributionAttr dist = copyDistribution(copy.getTileType(), tensor.type.getElementType());
  SmallVector<Value> offsets;
  for (Value v : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  Block *here = b_.getInsertionBlock();
  forEachChunk(copy.getTileType().getShape(), dist, [&](const Chunk &chunk) {
    if (b_.getInsertionBlock() != here)
      return; // a guarded last chunk: computed where it is issued
    Value bytes = toI32(
        chunkBytes(tensor, tensorCoords(offsets, chunk), dist.getVector(), varying));
    // Through an opaque move (inline PTX: no op is opaque to LLVM): LICM
    // would otherwise hoist the arithmetic out of every loop around, and the
    // counts would stay live (in registers) through the hot loop too.
    edgeBytes_[{copy.getOperation(), chunk.firstSlot}] =
        emitPtx(b_, loc_, "mov.b32 $0, $1;", "=r,r", {bytes}, {b_.getI32Type()},
                /*sideEffects=*/true)[0];
  });
}

void KernelLowering::lowerAsyncCopy(CopyOp copy, Value valid, CopyBounds bounds,
                                    ArrayRef<bool> varying) {
  const bool checked = bounds == CopyBounds::kAll;
  BufferType tile = copy.getTileType();
  const TensorInfo &tensor = tensors_[copy.getSrc()];
  const BufferInfo &dst = buffers_[copy.getDst()];
  Type eltType = tensor.type.getElementType();
  int64_t eltBytes = getElementBytes(eltType);
  DistributionAttr dist = copyDistribution(tile, eltType);
  int64_t vector = dist.getVector();
  SmallVector<Value> offsets;
  for (Value v : copy.getSrcOffsets())
    offsets.push_back(map_.lookupOrDefault(v));
  bool async = vector * eltBytes == 16 &&
               isVectorAligned(tensor, copy.getSrcOffsets(), vector) &&
               (tile.getShape().back() * eltBytes) % 16 == 0;
  Value chained;
  int64_t chainedRow = 0;
  // A 16-byte cp.async of `bytes` (i32 or index; the rest zero-filled) from
  // `address`, or from the tensor's base where there are none (any valid
  // address will do).
  auto copySized = [&](const Chunk &chunk, Value address, Value bytes) {
    Value some = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sgt, bytes,
                                       bytes.getType().isIndex() ? cst(0) : cst32(0));
    Value safe = arith::SelectOp::create(b_, loc_, some, address, tensor.ptr);
    Value src = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), safe);
    if (bytes.getType().isIndex())
      bytes = toI32(bytes);
    // Inline PTX: nvvm.cp.async.shared.global takes a 64-bit shared pointer
    // (a cvt.u64.u32 of this 32-bit address before every copy).
    ptx("cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r",
        {chunkSharedAddress(dst, chunk), src, bytes});
  };
  forEachChunk(tile.getShape(), dist, [&](const Chunk &chunk) {
    SmallVector<Value> coords = tensorCoords(offsets, chunk);
    if (!async) {
      // Not provably 16-byte aligned: synchronous loads (still ahead).
      SmallVector<Value> values = loadGlobal(tensor, coords, vector, false);
      for (int64_t v = 0; v < vector; ++v) {
        SmallVector<Value> at(chunk.coords);
        at.back() = add(at.back(), cst(v));
        memref::StoreOp::create(b_, loc_, convert(values[v], dst.type.getElementType()),
                                dst.memref, sharedIndices(dst, at));
      }
      return;
    }
    if (!checked) {
      // The tile lies inside the tensor (tileInBounds), or along the
      // varying dimensions (kInvariant): 16 bytes, no checks along those.
      // Addressed as the tile's origin, the thread's first chunk in it (the
      // same every iteration) and whole rows: no product per chunk.
      // Each chunk steps from the one before, so the steps (equal for
      // equal row shifts) share one register.
      Value address;
      if (chunk.shift.size() == 2 && offsets.size() == 2) {
        if (chunk.shift[0] == 0 || !chained) {
          chained = elementAddress(tensor, chunk.base, elementAddress(tensor, offsets));
          chainedRow = 0;
        }
        if (chunk.shift[0] != chainedRow)
          chained = elementAddress(tensor, {cst(chunk.shift[0] - chainedRow), cst(0)}, chained);
        chainedRow = chunk.shift[0];
        address = chained;
      } else {
        address = elementAddress(tensor, coords);
      }
      if (bounds == CopyBounds::kInvariant) {
        // Along the dimensions the iteration does not move, the chunk's
        // byte count is the same every iteration: computed before the loop
        // (precomputeEdgeBytes) where it can be, then one select a chunk.
        auto known = edgeBytes_.find({copy.getOperation(), chunk.firstSlot});
        Value bytes = known != edgeBytes_.end()
                          ? known->second
                          : toI32(chunkBytes(tensor, coords, vector, varying));
        copySized(chunk, address, bytes);
        return;
      }
      Value src = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), address);
      // Inline PTX: as copySized's cp.async (a 64-bit pointer in the op).
      ptx("cp.async.cg.shared.global [$0], [$1], 16;", "r,l", {chunkSharedAddress(dst, chunk), src});
      return;
    }
    // cp.async.cg 16 bytes with src-size: bytes past the tensor (or of an
    // iteration past the loop) are zero-filled and never read.
    Value bytes = chunkBytes(tensor, coords, vector, /*varying=*/{}, valid);
    copySized(chunk, elementAddress(tensor, coords), bytes);
  });
}

void KernelLowering::zeroLaterPieces(PipelinedOp loop) {
  // A tile's pieces add up to the tile's accumulator: the first piece (the
  // one that finishes the tile) keeps the value the code before the loop
  // gave it (a bias row, say); a later piece starts from zero, unless the
  // accumulator's last use before the loop is a tile.clear (nothing between
  // the two touches it).
  auto clearedLast = [&](Value accumulator) {
    // The latest op before the loop, in the loop's block, that uses it.
    Operation *last = nullptr;
    for (Operation *user : accumulator.getUsers()) {
      Operation *top = loop->getBlock()->findAncestorOpInBlock(*user);
      if (top && top->isBeforeInBlock(loop) && (!last || last->isBeforeInBlock(top)))
        last = top;
    }
    return last && isa<ClearOp>(last);
  };
  SmallVector<Value> started;
  for (Value accumulator : loopAccumulators(loop))
    if (!clearedLast(accumulator))
      started.push_back(accumulator);
  if (started.empty())
    return;
  Value later = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ne, skBegin_, cst(0));
  ifThen(later, [&] {
    for (Value accumulator : started)
      (void)lowerClear(accumulator);
  });
}

void KernelLowering::exchangePartials(PipelinedOp loop) {
  // The accumulators the loop's gemms add into, four slots at a time:
  // workspace slot b (block b's partials) holds, for each quad of slots,
  // every thread's four floats (16 bytes a thread, coalesced).
  SmallVector<Value> accumulators = loopAccumulators(loop);
  int64_t threads = kernel_.getThreads();
  auto cmp = [&](arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b_, loc_, predicate, x, y);
  };
  Value base = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), workspace_);
  auto toI64 = [&](Value index) {
    return arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), index);
  };
  int64_t quads = skSlotBytes_ / (16 * threads);
  auto quadAddress = [&](Value slot, int64_t quad) {
    Value offset = mul(add(mul(slot, cst(quads)), cst(quad)), cst(threads));
    return arith::AddIOp::create(b_, loc_, base,
                                 toI64(mul(add(offset, threadId_), cst(16))));
  };
  Value flagsStart = mul(skGrid_, cst(skSlotBytes_));
  Value piece = arith::SubIOp::create(b_, loc_, skTile_, skDp_);
  Value flag = arith::AddIOp::create(b_, loc_, base,
                                     toI64(add(flagsStart, mul(piece, cst(4)))));
  Value isThread0 = cmp(arith::CmpIPredicate::eq, threadId_, cst(0));
  // The scoped memory model's acquire/release, or membar.gl and volatile.
  const bool scoped = caps_.hasScopedMemoryOrder;
  // Visits each accumulator quad: its fragment, the fragment's slot count,
  // the quad's first slot and its index in the workspace slot.
  auto forEachQuad =
      [&](llvm::function_ref<void(const BufferInfo &, int64_t, int64_t, int64_t)> body) {
        int64_t quad = 0;
        for (Value accumulator : accumulators) {
          const BufferInfo &info = buffers_[accumulator];
          int64_t slots = cast<MemRefType>(info.memref.getType()).getShape()[0];
          for (int64_t first = 0; first < slots; first += 4)
            body(info, slots, first, quad++);
        }
      };

  // A piece after the tile's first: its partials to its slot, then the
  // tile's counter up by one (release: the stores are seen first). With the
  // scoped memory model the block's barrier orders every thread's stores
  // before thread 0's fence and release (cumulativity, as CUTLASS's
  // semaphores do), so only thread 0 waits for the stores to drain and the
  // other warps go on to their next item; without it each thread fences its
  // own stores (membar.gl) before the barrier.
  Value contributor = cmp(arith::CmpIPredicate::ne, skBegin_, cst(0));
  Value block = gpu::BlockIdOp::create(b_, loc_, gpu::Dimension::x);
  ifThen(contributor, [&] {
    forEachQuad([&](const BufferInfo &info, int64_t slots, int64_t first, int64_t quad) {
      SmallVector<Value> values;
      for (int64_t e = 0; e < 4; ++e)
        values.push_back(first + e < slots
                             ? memref::LoadOp::create(b_, loc_, info.memref,
                                                      ValueRange{cst(first + e)})
                                   .getResult()
                             : arith::ConstantOp::create(b_, loc_, b_.getF32FloatAttr(0))
                                   .getResult());
      values.push_back(quadAddress(block, quad));
      // Inline PTX: no NVVM op stores with the .cg cache operator.
      ptx("st.global.cg.v4.f32 [$4], {$0, $1, $2, $3};", "f,f,f,f,l", values);
    });
    if (!scoped)
      membarGpu(b_, loc_);
    lastWasBarrier_ = false;
    barrier();
    ifThen(isThread0, [&] {
      // Inline PTX: MLIR's NVVM dialect has no op for red.
      ptx(scoped ? "fence.acq_rel.gpu;\nred.relaxed.gpu.global.add.u32 [$0], 1;"
                 : "red.global.add.u32 [$0], 1;",
          "l", {flag});
    });
  });

  // A tile's first piece (not the whole tile): waits for the other pieces
  // (blocks first / q + 1 .. last / q of the split iterations), adds their
  // partials, and puts the counter back to zero for the next launch.
  Value finisher = andi(cmp(arith::CmpIPredicate::eq, skBegin_, cst(0)),
                        cmp(arith::CmpIPredicate::ne, skEnd_, skIters_));
  ifThen(finisher, [&] {
    // (In unsigned 32-bit arithmetic, as the decomposition.)
    Value q = arith::MaxUIOp::create(b_, loc_, toU32(skQ_), cst32(1));
    Value iters = toU32(skIters_);
    Value start = mul(toU32(piece), iters);
    Value firstBlock = fromU32(arith::DivUIOp::create(b_, loc_, start, q));
    Value lastBlock = fromU32(arith::DivUIOp::create(
        b_, loc_, arith::SubIOp::create(b_, loc_, add(start, iters), cst32(1)), q));
    Value others = arith::SubIOp::create(b_, loc_, lastBlock, firstBlock);
    ifThen(isThread0, [&] {
      // Inline PTX: a spin loop of volatile or acquire loads; no NVVM op for it.
      ptx(std::string("{\n.reg .pred p;\n.reg .u32 v;\nwait:\n") +
              (scoped ? "ld.acquire.gpu.global.u32 v, [$0];\n" : "ld.volatile.global.u32 v, [$0];\n") +
              "setp.lt.u32 p, v, $1;\n@p bra wait;\n" + (scoped ? "" : "membar.gl;\n") +
              (scoped ? "st.relaxed.gpu.global.u32 [$0], 0;\n}" : "st.volatile.global.u32 [$0], 0;\n}"),
          "l,r", {flag, toI32(others)});
    });
    lastWasBarrier_ = false;
    barrier();
    auto others_ = scf::ForOp::create(b_, loc_, add(firstBlock, cst(1)), add(lastBlock, cst(1)),
                                      cst(1));
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(others_.getBody()->getTerminator());
    Value other = others_.getInductionVar();
    Type f32 = b_.getF32Type();
    forEachQuad([&](const BufferInfo &info, int64_t slots, int64_t first, int64_t quad) {
      // Inline PTX: no NVVM op loads with the .cg cache operator.
      SmallVector<Value> parts = emitPtx(b_, loc_, "ld.global.cg.v4.f32 {$0, $1, $2, $3}, [$4];",
                                         "=f,=f,=f,=f,l", {quadAddress(other, quad)},
                                         {f32, f32, f32, f32}, /*sideEffects=*/true);
      for (int64_t e = 0; e < 4 && first + e < slots; ++e) {
        Value slot = cst(first + e);
        Value sum = arith::AddFOp::create(
            b_, loc_, memref::LoadOp::create(b_, loc_, info.memref, ValueRange{slot}), parts[e]);
        memref::StoreOp::create(b_, loc_, sum, info.memref, ValueRange{slot});
      }
    });
  });

  // The rest of the body (the epilogue) for whole tiles and first pieces.
  auto complete = scf::IfOp::create(
      b_, loc_, arith::XOrIOp::create(b_, loc_, contributor,
                                      arith::ConstantIntOp::create(b_, loc_, 1, 1)),
      /*withElseRegion=*/false);
  b_.setInsertionPoint(complete.thenBlock()->getTerminator());
  lastWasBarrier_ = false;
}

} // namespace tessera::lowering
