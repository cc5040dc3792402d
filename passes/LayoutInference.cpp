//===- LayoutInference.cpp - Register distributions for fragments ---------===//
//
// This file implements tile-layout-inference: it groups fragments that must
// agree on their register distribution (those used in one tile.parallel or
// copied into each other), picks the widest vector width the target's global
// accesses allow for the group, and records the result on the allocations
// and loops.
//
//===----------------------------------------------------------------------===//

#include "contract/Backend.h"
#include "lowering/TileQueries.h"
#include "passes/Passes.h"
#include "passes/RowSlices.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace tessera {
#define GEN_PASS_DEF_TILELAYOUTINFERENCE
#include "passes/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace {

/// A buffer in diagnostics: its `name` attribute (if any) and its type.
std::string describeBuffer(Value buffer) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::optional<StringRef> name;
  if (auto alloc = buffer.getDefiningOp<AllocFragmentOp>())
    name = alloc.getName();
  else if (auto alloc = buffer.getDefiningOp<AllocSharedOp>())
    name = alloc.getName();
  if (name)
    os << "'" << *name << "' ";
  os << "of type '" << buffer.getType() << "'";
  return text;
}

/// True for a fragment every thread holds whole (a reduction's result).
bool isReplicated(Value buffer) {
  auto alloc = buffer.getDefiningOp<AllocFragmentOp>();
  return alloc && alloc.getReplicated();
}

/// Checks that every fragment access inside `loop` uses the loop's own
/// indices on a fragment of the loop's shape (replicated fragments may be
/// indexed freely, and `rowSlices`, checked by findRowSliceGroups, are read
/// at their row); collects those fragments.
LogicalResult collectFragments(ParallelOp loop, const llvm::DenseSet<Value> &rowSlices,
                               SmallVectorImpl<Value> &fragments) {
  auto ivs = loop.getInductionVars();
  WalkResult result = loop.getBody().walk([&](Operation *op) -> WalkResult {
    Value buffer;
    OperandRange indices = op->getOperands();
    if (auto load = dyn_cast<LoadOp>(op)) {
      buffer = load.getBuffer();
      indices = load.getIndices();
    } else if (auto store = dyn_cast<StoreOp>(op)) {
      buffer = store.getBuffer();
      indices = store.getIndices();
    } else {
      return WalkResult::advance();
    }
    auto type = cast<BufferType>(buffer.getType());
    if (!type.isFragment() || isReplicated(buffer) || rowSlices.contains(buffer))
      return WalkResult::advance();
    if (type.getShape() != loop.getExtents()) {
      InFlightDiagnostic diag = op->emitError()
                                << "fragment " << describeBuffer(buffer)
                                << " is used in a tile.parallel over [";
      llvm::interleaveComma(loop.getExtents(), diag);
      diag << "]; a fragment must be accessed by a loop of its own shape";
      diag.attachNote(loop.getLoc()) << "the loop is here";
      return WalkResult::interrupt();
    }
    for (auto [index, iv] : llvm::zip(indices, ivs)) {
      if (index != iv) {
        op->emitError() << "fragment " << describeBuffer(buffer)
                        << " must be indexed by the tile.parallel's own indices in order "
                           "(each thread holds only its own elements); copy it to shared "
                           "memory to index it freely";
        return WalkResult::interrupt();
      }
    }
    fragments.push_back(buffer);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// A gemm operand held in a fragment that no atom of the target reads from
/// registers (B on every target; A where no atom takes it, e.g. sm_70's
/// quadpair MMA and SIMT FMA) is copied to a shared buffer of its own just
/// before the gemm, with a remark: correct everywhere, at the price of the
/// round trip the register form avoids.
void stageFragmentOperands(KernelOp kernel, const Backend &backend, const ComputeCapability &cc) {
  SmallVector<GemmOp> gemms;
  kernel.walk([&](GemmOp gemm) { gemms.push_back(gemm); });
  for (GemmOp gemm : gemms) {
    auto stage = [&](OpOperand &operand, StringRef why) {
      Value fragment = operand.get();
      auto type = cast<BufferType>(fragment.getType());
      auto sharedType = BufferType::get(kernel.getContext(), type.getShape(),
                                        type.getElementType(), MemoryScope::shared);
      std::string name = "staged";
      if (auto alloc = fragment.getDefiningOp<AllocFragmentOp>())
        if (std::optional<StringRef> fragmentName = alloc.getName())
          name = (*fragmentName + "_staged").str();
      OpBuilder builder(&kernel.getBodyBlock(), kernel.getBodyBlock().begin());
      auto shared = AllocSharedOp::create(builder, gemm.getLoc(), sharedType,
                                          builder.getStringAttr(name), nullptr, nullptr, nullptr);
      builder.setInsertionPoint(gemm);
      CopyOp::create(builder, gemm.getLoc(), fragment, ValueRange{}, shared.getResult(),
                     ValueRange{}, Value(), nullptr, nullptr);
      operand.set(shared.getResult());
      gemm.emitRemark() << "staging fragment " << describeBuffer(fragment)
                        << " through shared memory (" << sharedType.getNumElements() *
                                                             getElementBytes(type.getElementType())
                        << " bytes): " << why;
    };
    if (cast<BufferType>(gemm.getB().getType()).isFragment())
      stage(gemm.getBMutable(), "no atom reads B from registers");
    // A reduction's result is replicated (every thread holds it whole; marked
    // before this runs), not in any atom's A layout.
    Value a = gemm.getA();
    bool reduced = isReplicated(a);
    if (cast<BufferType>(a.getType()).isFragment() &&
        (reduced || !findMmaAtom(gemm, backend, cc, kernel.getThreads())))
      stage(gemm.getAMutable(), reduced ? "a reduction's result is held whole by every thread, "
                                          "in no atom's A layout"
                                        : "no atom of " + cc.str() + " reads this A from registers");
  }
}

/// A gemm's need on the layout of a fragment: `mma` (null: any
/// distribution across threads, a SIMT accumulator).
struct LayoutNeed {
  Value fragment;
  MmaLayoutAttr mma;
  Operation *gemm;
  const char *role;
};

std::string describeLayout(MmaLayoutAttr mma) {
  if (!mma)
    return "a distribution across threads (SIMT FMA)";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << mma;
  return text;
}

/// Fragments that share registers (one group) must agree on their layout:
/// two gemms needing different ones is a conflict, reported at the first
/// use with a note at the other, naming both fragments.
LogicalResult checkNeedsAgree(ArrayRef<LayoutNeed> needs) {
  for (const LayoutNeed &need : needs) {
    const LayoutNeed &first = needs.front();
    if (need.mma == first.mma)
      continue;
    InFlightDiagnostic diag = need.gemm->emitError();
    diag << "layout conflict: fragment " << describeBuffer(need.fragment) << " is "
         << need.role << " of this gemm, which needs " << describeLayout(need.mma) << ", but "
         << (need.fragment == first.fragment ? std::string("it")
                                             : "fragment " + describeBuffer(first.fragment) +
                                                   ", which shares its registers (used with it "
                                                   "in a tile.parallel or copied into it),")
         << " is " << first.role << " of another gemm, which needs " << describeLayout(first.mma)
         << "; copy one of them to a shared buffer to use both";
    diag.attachNote(first.gemm->getLoc()) << "the other gemm is here";
    return failure();
  }
  return success();
}

struct LayoutInference : tessera::impl::TileLayoutInferenceBase<LayoutInference> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module.walk([&](KernelOp kernel) -> WalkResult {
      ComputeCapability cc;
      const Backend *backend = getBackendFor(kernel, &cc);
      if (!backend)
        return WalkResult::interrupt();
      return failed(runOnKernel(kernel, *backend, cc, backend->getCapabilities(cc)))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// The 32-bit registers per thread a fragment takes, as laid out.
  static int64_t fragmentRegisters(AllocFragmentOp alloc) {
    auto type = cast<BufferType>(alloc.getType());
    int64_t slots = type.getNumElements();
    if (MmaLayoutAttr mma = alloc.getMmaLayoutAttr())
      slots = alloc.getRowSlice()
                  ? rowSliceSlots(type.getShape()[0], mma)
                  : type.getShape()[0] / mma.getWarpsM() * type.getShape()[1] / mma.getWarpsN() / 32;
    else if (DistributionAttr dist = alloc.getDistributionAttr())
      slots = dist.slotsPerThread(type.getNumElements());
    return llvm::divideCeil(slots * getElementBytes(type.getElementType()), 4);
  }

  /// Fragments live in registers: if the fragments live at one point of
  /// the kernel together need more 32-bit registers per thread than the
  /// target has, the kernel would spill heavily or fail to compile. That is
  /// a compile-time error naming each of them, the limit and the point.
  ///
  /// A fragment is live from its first use to its last in program order;
  /// a use inside a loop or region that does not hold the fragment's
  /// allocation keeps it live over that whole region (a value carried from
  /// one iteration to the next, an accumulator read after its loop).
  static LogicalResult checkRegisterBudget(KernelOp kernel, const TargetCapabilities &caps) {
    // Number the kernel's operations in program order; each also records
    // the last number inside it, so a region's span is [first, last].
    DenseMap<Operation *, std::pair<int64_t, int64_t>> span;
    SmallVector<Operation *> order;
    std::function<void(Operation *)> number = [&](Operation *op) {
      int64_t first = order.size();
      order.push_back(op);
      for (Region &region : op->getRegions())
        for (Operation &inner : region.getOps())
          number(&inner);
      span[op] = {first, int64_t(order.size()) - 1};
    };
    for (Operation &op : kernel.getBodyBlock())
      number(&op);
    struct Live {
      AllocFragmentOp alloc;
      int64_t words, begin, end;
    };
    SmallVector<Live> fragments;
    kernel.walk([&](AllocFragmentOp alloc) {
      Live live{alloc, fragmentRegisters(alloc), INT64_MAX, -1};
      for (Operation *user : alloc.getResult().getUsers()) {
        auto [begin, end] = span.lookup(user);
        // Regions around the use that do not hold the allocation.
        for (Operation *parent = user->getParentOp(); parent && parent != kernel;
             parent = parent->getParentOp()) {
          if (parent->isAncestor(alloc))
            break;
          std::tie(begin, end) = std::pair(std::min(begin, span.lookup(parent).first),
                                           std::max(end, span.lookup(parent).second));
        }
        live.begin = std::min(live.begin, begin);
        live.end = std::max(live.end, end);
      }
      if (live.end >= 0)
        fragments.push_back(live);
    });
    // The point where the most registers are live: at each fragment's first
    // use, the fragments live there.
    int64_t peak = 0;
    const Live *peakAt = nullptr;
    for (const Live &at : fragments) {
      int64_t total = 0;
      for (const Live &other : fragments)
        if (other.begin <= at.begin && at.begin <= other.end)
          total += other.words;
      if (total > peak)
        peak = total, peakAt = &at;
    }
    if (peak <= caps.registersPerThread)
      return success();
    SmallVector<const Live *> live;
    for (const Live &other : fragments)
      if (other.begin <= peakAt->begin && peakAt->begin <= other.end)
        live.push_back(&other);
    InFlightDiagnostic diag = kernel.emitError()
                              << "kernel '" << kernel.getSymName() << "' holds " << peak
                              << " registers per thread of fragments, over the target's "
                              << caps.registersPerThread << " per thread: ";
    llvm::interleaveComma(live, diag, [&](const Live *fragment) {
      diag << describeBuffer(AllocFragmentOp(fragment->alloc).getResult()) << " " << fragment->words;
    });
    diag << "; use more threads per block or smaller tiles";
    for (const Live *fragment : live)
      diag.attachNote(AllocFragmentOp(fragment->alloc).getLoc())
          << "fragment of " << fragment->words << " registers per thread: "
          << describeBuffer(AllocFragmentOp(fragment->alloc).getResult());
    diag.attachNote(order[peakAt->begin]->getLoc()) << "all of them live here";
    return failure();
  }

  /// Each thread's share of a copy through shared memory is unrolled into
  /// straight-line code: past kMaxCopyElementsPerThread the compile takes
  /// minutes (a 48 x 256 tile on one thread: 12288 elements). A compile-time
  /// error naming the copy, not a stalled compiler. (Fragments are bounded by
  /// checkRegisterBudget; the defaults move 8-32 elements per thread.)
  static constexpr int64_t kMaxCopyElementsPerThread = 4096;
  static LogicalResult checkCopyUnrolling(KernelOp kernel) {
    int64_t threads = kernel.getThreads();
    WalkResult walk = kernel.walk([&](CopyOp copy) {
      auto src = dyn_cast<BufferType>(copy.getSrc().getType());
      auto dst = dyn_cast<BufferType>(copy.getDst().getType());
      if ((src && src.isFragment()) || (dst && dst.isFragment()))
        return WalkResult::advance();
      BufferType tile = copy.getTileType();
      int64_t perThread = llvm::divideCeil(tile.getNumElements(), threads);
      if (perThread <= kMaxCopyElementsPerThread)
        return WalkResult::advance();
      copy.emitError() << "copy of a " << tile << " tile gives each of " << threads
                       << " threads " << perThread << " elements, over "
                       << kMaxCopyElementsPerThread
                       << " (each thread's share is unrolled); use more threads per block or "
                          "smaller tiles";
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }

  /// Gives each row-slice group whose reductions all reduce fragments of
  /// one MMA layout (and whose 2-D loops run over that layout) the row
  /// slice of that layout: its members and its 1-D loops take it. Any other
  /// group is replicated, as every reduction's result was before row
  /// slices, with a remark where a source is an MMA accumulator.
  static void assignRowSlices(ArrayRef<RowSliceGroup> rowGroups,
                              const DenseMap<Value, MmaLayoutAttr> &chosenMma,
                              const DenseMap<Operation *, MmaLayoutAttr> &loopMma) {
    for (const RowSliceGroup &group : rowGroups) {
      MmaLayoutAttr mma, anyMma;
      std::string why = group.whyNot;
      for (ReduceOp reduce : group.reductions) {
        MmaLayoutAttr source = chosenMma.lookup(reduce.getSrc());
        anyMma = anyMma ? anyMma : source;
        if (!source && why.empty())
          why = "the source of a reduction into it is not an MMA accumulator";
        else if (mma && source != mma && why.empty())
          why = "its reductions' sources have different MMA layouts";
        mma = mma ? mma : source;
      }
      for (ParallelOp loop : group.broadcastLoops)
        if (loopMma.lookup(loop) != mma && why.empty())
          why = "a tile.parallel over rows x columns that reads it runs over another layout";
      if (!why.empty()) {
        // Members of a group found unfit only now were left out of the
        // distributed groups: replicated. (A group unfit from the start kept
        // the plain rules: only its reductions' results are replicated.)
        if (group.whyNot.empty())
          for (Value member : group.members)
            member.getDefiningOp<AllocFragmentOp>().setReplicated(true);
        if (ReduceOp first = group.reductions.empty() ? ReduceOp() : group.reductions.front();
            first && anyMma)
          first.emitRemark()
              << "the result is held whole by every thread, not in the row slice of " << anyMma
              << ": " << why;
        continue;
      }
      for (Value member : group.members) {
        auto alloc = member.getDefiningOp<AllocFragmentOp>();
        alloc.setMmaLayoutAttr(mma);
        alloc.setRowSlice(true);
        alloc.removeDistributionAttr();
      }
      for (ParallelOp loop : group.rowLoops) {
        loop.setMmaLayoutAttr(mma);
        loop.removeDistributionAttr();
      }
    }
  }

  /// Marks reduction results `replicated`, except the members of row-slice
  /// groups that may take their accumulator's rows (returned), and what
  /// the loops writing replicated fragments make replicated too.
  static llvm::DenseSet<Value> markReplicated(KernelOp kernel,
                                              std::vector<RowSliceGroup> &rowGroups) {
    // Reduction results are replicated (every thread holds them whole),
    // except those that may take the row slice of their source's MMA
    // layout, decided once the layouts are known (assignRowSlices).
    llvm::DenseSet<Value> rowSlices;
    for (const RowSliceGroup &group : rowGroups)
      if (group.whyNot.empty())
        rowSlices.insert(group.members.begin(), group.members.end());
    kernel.walk([&](ReduceOp reduce) {
      if (auto alloc = reduce.getDst().getDefiningOp<AllocFragmentOp>())
        if (!rowSlices.contains(alloc.getResult()))
          alloc.setReplicated(true);
    });
    // A loop that writes a replicated fragment must run whole in every
    // thread, so every fragment it touches is held whole too (e.g. a running
    // maximum's previous value beside the maximum): distributed, only the
    // threads holding that fragment would run the loop and the others would
    // keep stale copies of the replicated one. A row-slice group one of
    // whose members that makes replicated is replicated whole.
    for (bool changed = true; changed;) {
      changed = false;
      for (RowSliceGroup &group : rowGroups) {
        if (!group.whyNot.empty() || llvm::none_of(group.members, isReplicated))
          continue;
        group.whyNot = "it is used in a tile.parallel that writes a replicated fragment";
        changed = true;
        for (Value member : group.members) {
          rowSlices.erase(member);
          member.getDefiningOp<AllocFragmentOp>().setReplicated(true);
        }
      }
      kernel.walk([&](ParallelOp loop) {
        bool writesReplicated = false;
        SmallVector<AllocFragmentOp> touched;
        loop.getBody().walk([&](Operation *op) {
          Value buffer;
          if (auto load = dyn_cast<LoadOp>(op)) {
            buffer = load.getBuffer();
          } else if (auto store = dyn_cast<StoreOp>(op)) {
            buffer = store.getBuffer();
            writesReplicated |= isReplicated(buffer);
          }
          if (auto alloc = buffer ? buffer.getDefiningOp<AllocFragmentOp>() : AllocFragmentOp())
            touched.push_back(alloc);
        });
        if (!writesReplicated)
          return;
        for (AllocFragmentOp alloc : touched)
          if (!alloc.getReplicated()) {
            alloc.setReplicated(true);
            changed = true;
          }
      });
    }
    return rowSlices;
  }

  /// A gemm's warp tiling with `warpsM` warps along M: whole rows where
  /// `wholeRows` asks, else (unless A is in registers) any.
  static std::optional<WarpTiling> tileWarpsAt(const MmaAtom &atom, GemmOp gemm, int64_t threads,
                                               bool wholeRows, int64_t warpsM) {
    std::optional<WarpTiling> tiling =
        chooseWarpTiling(atom, gemm.getM(), gemm.getN(), threads, wholeRows, warpsM);
    if (!tiling && wholeRows && !cast<BufferType>(gemm.getA().getType()).isFragment())
      tiling = chooseWarpTiling(atom, gemm.getM(), gemm.getN(), threads, false, warpsM);
    return tiling;
  }

  /// A gemm's warp tiling: `warpsM` warps along M where given and possible
  /// (its row partners' split), else whole rows where `wholeRows` asks,
  /// else any.
  static std::optional<WarpTiling> tileWarps(const MmaAtom &atom, GemmOp gemm, int64_t threads,
                                             bool wholeRows, int64_t warpsM) {
    if (warpsM)
      if (std::optional<WarpTiling> tiling = tileWarpsAt(atom, gemm, threads, wholeRows, warpsM))
        return tiling;
    std::optional<WarpTiling> tiling =
        chooseWarpTiling(atom, gemm.getM(), gemm.getN(), threads, wholeRows);
    if (!tiling)
      tiling = chooseWarpTiling(atom, gemm.getM(), gemm.getN(), threads);
    return tiling;
  }

  /// Row partners: the accumulators a row-slice group reduces and those its
  /// loops rescale must split their rows over warps alike for the group to
  /// hold just those rows. For each group with two or more gemm
  /// accumulators, the warps along M that every one of them takes (whole
  /// rows where it needs them), the squarest warp tiles of the largest
  /// accumulator deciding between such splits; none where no split fits
  /// all (the group's vectors are then held whole, with a remark). Returns
  /// each such accumulator's (group leader's) warps along M.
  static DenseMap<Value, int64_t>
  chooseRowPartnerSplits(ArrayRef<RowSliceGroup> rowGroups,
                         ArrayRef<std::pair<GemmOp, MmaAtom>> gemmAtoms, int64_t threads,
                         function_ref<Value(Value)> leaderOf,
                         function_ref<bool(GemmOp)> wholeRowsOf) {
    DenseMap<Value, int64_t> splits;
    for (const RowSliceGroup &group : rowGroups) {
      if (!group.whyNot.empty())
        continue;
      llvm::SmallDenseSet<Value, 4> partners;
      for (ReduceOp reduce : group.reductions)
        partners.insert(leaderOf(reduce.getSrc()));
      for (Value fragment : group.broadcastFragments)
        partners.insert(leaderOf(fragment));
      partners.erase(Value());
      // The partners' gemms (a copy of each op handle) and their atoms.
      SmallVector<std::pair<GemmOp, const MmaAtom *>> tiled;
      for (const auto &[op, atom] : gemmAtoms) {
        GemmOp gemm = op;
        if (partners.contains(leaderOf(gemm.getC())) && atom.lowering &&
            atom.lowering->tilesAccumulatorOverWarps())
          tiled.emplace_back(gemm, &atom);
      }
      if (tiled.size() < 2)
        continue;
      auto size = [](GemmOp gemm) { return gemm.getM() * gemm.getN(); };
      GemmOp largest = tiled.front().first;
      for (auto [gemm, atom] : tiled)
        if (size(gemm) > size(largest))
          largest = gemm;
      int64_t best = 0, bestCost = 0;
      for (int64_t warpsM = 1; warpsM <= threads / 32; ++warpsM) {
        std::optional<WarpTiling> largestTiling;
        bool all = true;
        for (auto [gemm, atom] : tiled) {
          std::optional<WarpTiling> tiling =
              tileWarpsAt(*atom, gemm, threads, wholeRowsOf(gemm), warpsM);
          all = all && tiling.has_value();
          if (gemm == largest)
            largestTiling = tiling;
        }
        if (!all)
          continue;
        int64_t cost = lowering::warpTileCost(largest.getM() / largestTiling->warpsM,
                                              largest.getN() / largestTiling->warpsN);
        if (!best || cost < bestCost)
          best = warpsM, bestCost = cost;
      }
      if (best)
        for (auto [gemm, atom] : tiled)
          splits[leaderOf(gemm.getC())] = best;
    }
    return splits;
  }

  LogicalResult runOnKernel(KernelOp kernel, const Backend &backend,
                            const ComputeCapability &cc, const TargetCapabilities &caps) {
    int64_t threads = kernel.getThreads();
    std::vector<RowSliceGroup> rowGroups = findRowSliceGroups(kernel);
    llvm::DenseSet<Value> rowSlices = markReplicated(kernel, rowGroups);
    stageFragmentOperands(kernel, backend, cc);
    llvm::EquivalenceClasses<Value> groups;
    kernel.walk([&](AllocFragmentOp alloc) {
      if (!alloc.getReplicated() && !rowSlices.contains(alloc.getResult()))
        groups.insert(alloc.getResult());
    });

    // The element size each fragment is moved with to or from global memory.
    DenseMap<Value, int64_t> globalBytes;
    // Fragments used in one loop, or copied into each other, must agree.
    SmallVector<std::pair<ParallelOp, SmallVector<Value>>> loops;
    WalkResult walk = kernel.walk([&](Operation *op) -> WalkResult {
      if (auto loop = dyn_cast<ParallelOp>(op)) {
        SmallVector<Value> fragments;
        if (failed(collectFragments(loop, rowSlices, fragments)))
          return WalkResult::interrupt();
        for (Value fragment : fragments)
          groups.unionSets(fragments.front(), fragment);
        loops.emplace_back(loop, std::move(fragments));
      } else if (auto copy = dyn_cast<CopyOp>(op)) {
        auto src = dyn_cast<BufferType>(copy.getSrc().getType());
        auto dst = dyn_cast<BufferType>(copy.getDst().getType());
        // A fragment copied from or to global memory moves in vectors of the
        // tensor's element type (f16 rows into an f32 fragment: 8 per access).
        if (auto tensor = dyn_cast<TileTensorType>(copy.getSrc().getType()))
          globalBytes[copy.getDst()] = getElementBytes(tensor.getElementType());
        if (auto tensor = dyn_cast<TileTensorType>(copy.getDst().getType()))
          globalBytes[copy.getSrc()] = std::max(globalBytes.lookup(copy.getSrc()),
                                                getElementBytes(tensor.getElementType()));
        if (src && dst && src.isFragment() && dst.isFragment() && !isReplicated(copy.getSrc()) &&
            !isReplicated(copy.getDst()))
          groups.unionSets(copy.getSrc(), copy.getDst());
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // What the gemms need of their fragments: an accumulator its atom's
    // layout (a SIMT accumulator any distribution), an A read from
    // registers its atom's A layout, which gives each warp whole rows. An
    // accumulator used together with such an A (the P = f16(S) of a chain
    // of gemms) is tiled by whole rows too, so the two agree.
    auto leaderOf = [&](Value fragment) -> Value {
      auto it = groups.findLeader(fragment);
      return it == groups.member_end() ? Value() : *it;
    };
    llvm::DenseSet<Value> wholeRowGroups;
    kernel.walk([&](GemmOp gemm) {
      if (cast<BufferType>(gemm.getA().getType()).isFragment())
        if (Value leader = leaderOf(gemm.getA()))
          wholeRowGroups.insert(leader);
    });
    // Atoms first: the warp tilings of row partners are decided together.
    SmallVector<std::pair<GemmOp, MmaAtom>> gemmAtoms;
    WalkResult gemms = kernel.walk([&](GemmOp gemm) -> WalkResult {
      FailureOr<MmaAtom> atom = selectMmaAtom(gemm, backend, cc, threads);
      if (failed(atom))
        return WalkResult::interrupt();
      gemm.setAtomAttr(StringAttr::get(gemm.getContext(), atom->name));
      // Warp-level atoms read shared operands with ldmatrix or descriptors
      // from swizzled buffers.
      if (atom->lowering && atom->lowering->tilesAccumulatorOverWarps())
        for (Value operand : {gemm.getA(), gemm.getB()})
          if (auto alloc = operand.getDefiningOp<AllocSharedOp>())
            alloc.setSwizzled(true);
      gemmAtoms.emplace_back(gemm, *std::move(atom));
      return WalkResult::advance();
    });
    if (gemms.wasInterrupted())
      return failure();
    auto wholeRowsOf = [&](GemmOp gemm) {
      return cast<BufferType>(gemm.getA().getType()).isFragment() ||
             wholeRowGroups.contains(leaderOf(gemm.getC()));
    };
    DenseMap<Value, int64_t> rowSplits =
        chooseRowPartnerSplits(rowGroups, gemmAtoms, threads, leaderOf, wholeRowsOf);
    DenseMap<Value, SmallVector<LayoutNeed>> needs;
    for (auto &[op, atom] : gemmAtoms) {
      GemmOp gemm = op;
      bool registersA = cast<BufferType>(gemm.getA().getType()).isFragment();
      MmaLayoutAttr layout;
      if (atom.lowering && atom.lowering->tilesAccumulatorOverWarps()) {
        std::optional<WarpTiling> tiling = tileWarps(atom, gemm, threads, wholeRowsOf(gemm),
                                                     rowSplits.lookup(leaderOf(gemm.getC())));
        if (!tiling)
          continue;
        const lowering::AccumulatorStep &step = tiling->step;
        layout = MmaLayoutAttr::get(gemm.getContext(), step.m, step.n, tiling->warpsM,
                                    tiling->warpsN, step.lanes, step.registers);
      }
      if (Value leader = leaderOf(gemm.getC()))
        needs[leader].push_back({gemm.getC(), layout, gemm, "the accumulator"});
      if (registersA)
        if (Value leader = leaderOf(gemm.getA()))
          needs[leader].push_back({gemm.getA(), layout, gemm, "the A operand (in registers)"});
    }

    // One distribution per group: the widest vector every member allows;
    // or the MMA layout its gemms need.
    DenseMap<Value, DistributionAttr> chosen;
    DenseMap<Value, MmaLayoutAttr> chosenMma;
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      if (!(*it)->isLeader())
        continue;
      auto found = needs.find((*it)->getData());
      ArrayRef<LayoutNeed> groupNeeds;
      if (found != needs.end())
        groupNeeds = found->second;
      if (failed(checkNeedsAgree(groupNeeds)))
        return failure();
      if (!groupNeeds.empty() && groupNeeds.front().mma) {
        MmaLayoutAttr mma = groupNeeds.front().mma;
        Value mmaMember = groupNeeds.front().fragment;
        auto shape = cast<BufferType>(mmaMember.getType()).getShape();
        for (auto member = groups.member_begin(**it); member != groups.member_end(); ++member) {
          if (cast<BufferType>(member->getType()).getShape() != shape) {
            member->getDefiningOp()->emitError()
                << "fragment " << describeBuffer(*member) << " shares the MMA layout of "
                << describeBuffer(mmaMember) << " but has another shape";
            return failure();
          }
          chosenMma[*member] = mma;
        }
        continue;
      }
      // Only fragments moved to or from global memory bound the vector (by
      // their tensors' element size); fragments that stay in registers do
      // not. A group with no such member uses its own element size.
      int64_t vector = caps.globalVectorBytes;
      int64_t numElements = 0, innermost = 0, widestElement = 1;
      bool bounded = false;
      for (auto member = groups.member_begin(**it); member != groups.member_end(); ++member) {
        auto type = cast<BufferType>(member->getType());
        widestElement = std::max(widestElement, getElementBytes(type.getElementType()));
        if (int64_t bytes = globalBytes.lookup(*member)) {
          vector = std::min(vector, caps.globalVectorBytes / bytes);
          bounded = true;
        }
        numElements = type.getNumElements();
        innermost = type.getShape().back();
      }
      if (!bounded)
        vector = caps.globalVectorBytes / widestElement;
      vector = std::max<int64_t>(vector, 1);
      while (vector > 1 && (innermost % vector != 0 || numElements < threads * vector))
        vector /= 2;
      auto attr = DistributionAttr::get(kernel.getContext(), threads, vector);
      for (auto member = groups.member_begin(**it); member != groups.member_end(); ++member)
        chosen[*member] = attr;
    }

    DenseMap<Operation *, MmaLayoutAttr> loopMma;
    for (auto &[loop, fragments] : loops)
      if (!fragments.empty())
        loopMma[loop] = chosenMma.lookup(fragments.front());
    assignRowSlices(rowGroups, chosenMma, loopMma);
    kernel.walk([&](AllocFragmentOp alloc) {
      if (alloc.getRowSlice())
        return;
      if (alloc.getReplicated()) {
        alloc.setDistributionAttr(DistributionAttr::get(kernel.getContext(), 1, 1));
        return;
      }
      if (MmaLayoutAttr mma = chosenMma.lookup(alloc.getResult())) {
        alloc.setMmaLayoutAttr(mma);
        alloc.removeDistributionAttr();
      } else {
        alloc.setDistributionAttr(chosen.lookup(alloc.getResult()));
      }
    });
    if (failed(checkCopyUnrolling(kernel)))
      return failure();
    if (failed(checkRegisterBudget(kernel, caps)))
      return failure();
    for (auto &[loop, fragments] : loops) {
      if (loop.getMmaLayoutAttr())
        continue;  // a loop over row slices (assignRowSlices)
      if (!fragments.empty())
        if (MmaLayoutAttr mma = chosenMma.lookup(fragments.front())) {
          loop.setMmaLayoutAttr(mma);
          continue;
        }
      // A loop touching only replicated fragments runs whole in every thread.
      bool replicatedOnly = false;
      if (fragments.empty())
        loop.getBody().walk([&](Operation *op) {
          for (Value operand : op->getOperands())
            replicatedOnly |= isReplicated(operand);
        });
      DistributionAttr attr =
          !fragments.empty()
              ? chosen.lookup(fragments.front())
              : DistributionAttr::get(kernel.getContext(), replicatedOnly ? 1 : threads, 1);
      loop.setDistributionAttr(attr);
    }
    return success();
  }
};

} // namespace
