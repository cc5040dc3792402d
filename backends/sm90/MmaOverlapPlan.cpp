//===- MmaOverlapPlan.cpp - Whether a body can run rotated ----------------===//
//
// splitForMmaOverlap (MmaOverlap.h): which ops of a warp-specialized loop's
// body form the issue, deferred and rest parts of the rotated schedule, and
// whether running them so keeps every read after the write it depends on.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/MmaOverlap.h"

#include "lowering/TileQueries.h"

namespace tessera::sm90 {

using namespace mlir;
using namespace tessera::tile;

namespace {

/// The buffers an op of the body reads and writes.
struct Accesses {
  llvm::SmallPtrSet<Value, 4> reads, writes;
};

/// What `op` reads and writes, or nothing when it is not one of the ops the
/// consumers run (gemm, clear, fill, reduce, parallel loop).
std::optional<Accesses> accessesOf(Operation &op) {
  Accesses a;
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    a.reads.insert({gemm.getA(), gemm.getB(), gemm.getC()});
    a.writes.insert(gemm.getC());
  } else if (isa<ClearOp, FillOp>(op)) {
    a.writes.insert(op.getOperand(0));
  } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
    a.reads.insert({reduce.getSrc(), reduce.getDst()});
    a.writes.insert(reduce.getDst());
    if (Value scratch = reduce.getScratch())
      a.reads.insert(scratch), a.writes.insert(scratch);
  } else if (auto parallel = dyn_cast<ParallelOp>(op)) {
    parallel.walk([&](Operation *inner) {
      if (auto load = dyn_cast<LoadOp>(inner))
        a.reads.insert(load.getBuffer());
      else if (auto store = dyn_cast<StoreOp>(inner))
        a.writes.insert(store.getBuffer());
    });
  } else if (auto branch = dyn_cast<IfOp>(op)) {
    // A branch accesses what its ops do (arithmetic and reads aside).
    for (Region &region : branch->getRegions())
      for (Block &block : region)
        for (Operation &inner : block.without_terminator()) {
          if (isa<DimOp, ReadOp>(inner) || lowering::isPlainArithmetic(&inner))
            continue;
          std::optional<Accesses> nested = accessesOf(inner);
          if (!nested || isa<GemmOp>(inner))
            return std::nullopt;
          a.reads.insert(nested->reads.begin(), nested->reads.end());
          a.writes.insert(nested->writes.begin(), nested->writes.end());
        }
  } else {
    return std::nullopt;
  }
  return a;
}

bool intersects(const llvm::SmallPtrSetImpl<Value> &x, const llvm::SmallPtrSetImpl<Value> &y) {
  return llvm::any_of(x, [&](Value v) { return y.contains(v); });
}

/// Whether `a` and `b` may swap places: neither writes what the other
/// reads or writes.
bool independent(const Accesses &a, const Accesses &b) {
  return !intersects(a.writes, b.reads) && !intersects(a.writes, b.writes) &&
         !intersects(b.writes, a.reads);
}

std::string opName(Operation *op) { return "'" + op->getName().getStringRef().str() + "'"; }

} // namespace

MmaOverlapSplit splitForMmaOverlap(PipelinedOp loop,
                                   const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                   std::string &why) {
  MmaOverlapSplit split;
  // The body's ops in order, without the copies ahead and the arithmetic.
  SmallVector<Operation *> ops;
  SmallVector<GemmOp> gemms;
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (ahead.contains(&op) || isa<DimOp>(op) || lowering::isPlainArithmetic(&op))
      continue;
    ops.push_back(&op);
    if (auto gemm = dyn_cast<GemmOp>(op))
      gemms.push_back(gemm);
  }
  if (gemms.size() != 2) {
    why = "the body has " + std::to_string(gemms.size()) + " gemms, not 2";
    return {};
  }
  MmaOverlapSplit twoButNoSplit;
  twoButNoSplit.twoGemms = true;
  GemmOp first = gemms[0], last = gemms[1];
  if (ops.back() != last.getOperation()) {
    why = "the body's second gemm is not its last op";
    return twoButNoSplit;
  }
  SmallVector<Accesses> accesses;
  for (Operation *op : ops) {
    std::optional<Accesses> a = accessesOf(*op);
    if (!a) {
      why = "the body holds " + opName(op);
      return twoButNoSplit;
    }
    accesses.push_back(std::move(*a));
  }
  // The deferred part: the last gemm and the ops before it that write its
  // accumulator (and nothing else); the issue part: the ops through the
  // first gemm; the rest: the others.
  Value accumulator = last.getC(), a = last.getA();
  size_t firstAt = llvm::find(ops, first.getOperation()) - ops.begin();
  SmallVector<int> part(ops.size()); // 0 issue, 1 deferred, 2 rest
  for (size_t i = 0; i < ops.size(); ++i) {
    bool writesAccumulator = accesses[i].writes.contains(accumulator);
    if (writesAccumulator && accesses[i].writes.size() != 1) {
      why = opName(ops[i]) + " writes the second gemm's accumulator and other buffers";
      return twoButNoSplit;
    }
    part[i] = i + 1 == ops.size() || (writesAccumulator && i != firstAt) ? 1
              : i <= firstAt                                             ? 0
                                                                         : 2;
    if (part[i] == 1 && i <= firstAt) {
      why = opName(ops[i]) + " writes the second gemm's accumulator before the first gemm";
      return twoButNoSplit;
    }
  }
  bool waited = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Accesses &x = accesses[i];
    if (part[i] == 1)
      continue;
    // Nothing but the deferred ops touches the second gemm's accumulator,
    // which it keeps in flight until the rest waits for it.
    if (x.reads.contains(accumulator) || x.writes.contains(accumulator)) {
      why = opName(ops[i]) + " uses the second gemm's accumulator";
      return twoButNoSplit;
    }
    for (size_t d = 0; d < ops.size(); ++d) {
      if (part[d] != 1)
        continue;
      // The deferred ops now run after the next iteration's issue part and
      // after the rest ops that followed them in the body.
      bool moved = part[i] == 0 || i > d;
      if (moved && !independent(x, accesses[d])) {
        why = opName(ops[d]) + " cannot run after " + opName(ops[i]) + ", which " +
              (part[i] == 0 ? "the next iteration issues first" : "follows it in the body");
        return twoButNoSplit;
      }
    }
    if (part[i] == 2 && !waited && x.writes.contains(a)) {
      split.firstWriterOfA = ops[i];
      waited = true;
    }
  }
  // Inside a warpgroup's turn a consumer barrier would wait for warpgroups
  // that wait for their turn: the issue and deferred parts may hold only
  // the gemms and register work (no shared buffer, no reduction, which
  // combines across warps through shared memory).
  auto isFragment = [](Value v) {
    auto type = dyn_cast<BufferType>(v.getType());
    return type && type.isFragment();
  };
  split.turnsSafe = true;
  for (size_t i = 0; i < ops.size(); ++i) {
    (part[i] == 0 ? split.issue : part[i] == 1 ? split.deferred : split.rest).push_back(ops[i]);
    if (part[i] != 2 && !isa<GemmOp>(ops[i]))
      split.turnsSafe &= !isa<ReduceOp>(ops[i]) && llvm::all_of(accesses[i].reads, isFragment) &&
                         llvm::all_of(accesses[i].writes, isFragment);
  }
  split.first = first;
  split.last = last;
  split.twoGemms = true;
  return split;
}

} // namespace tessera::sm90
