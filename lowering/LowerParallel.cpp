//===- LowerParallel.cpp - tile.parallel and tile.reduce -----------------===//
//
// Elementwise bodies cloned once per element a thread owns (with the
// approximate math of fast-math mode), replicated fragments, and
// reductions over a fragment's last axis.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"
#include "contract/ElementConversion.h"
#include "contract/NvvmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace tessera;
using namespace tessera::tile;

namespace tessera::lowering {

Value KernelLowering::lowerFastMath(Operation &op, IRMapping &map) {
  if (!fastMath_ || op.getNumResults() != 1 || !op.getResult(0).getType().isF32())
    return {};
  auto f32 = [&](double value) {
    return arith::ConstantOp::create(b_, loc_, b_.getF32FloatAttr(float(value)));
  };
  // Inline PTX (unary and divide): MLIR has no NVVM op for the approximate
  // ex2, tanh and div (LLVM intrinsics only).
  auto unary = [&](StringRef text, Value x) {
    return emitPtx(b_, loc_, text, "=f,f", {x}, {b_.getF32Type()}, /*sideEffects=*/false).front();
  };
  auto divide = [&](Value x, Value y) {
    // div.approx.ftz.f32 (PTX ISA §9.7.3.8): x * rcp(y), 2 ulp for |y| in
    // [2^-126, 2^126] (0 beyond, like CUDA's __fdividef), two instructions
    // instead of IEEE division's Newton iterations.
    return emitPtx(b_, loc_, "div.approx.ftz.f32 $0, $1, $2;", "=f,f,f", {x, y}, {b_.getF32Type()},
                   /*sideEffects=*/false)
        .front();
  };
  if (auto tanh = dyn_cast<math::TanhOp>(op); tanh && caps_.hasTanhApprox)
    return unary("tanh.approx.f32 $0, $1;", map.lookupOrDefault(tanh.getOperand()));
  if (auto tanh = dyn_cast<math::TanhOp>(op)) {
    // No tanh.approx (before sm_75): 1 - 2 / (1 + 2^(2 x log2 e)) with
    // ex2.approx and the fast division (1e-7 absolute error; +-1 where the
    // exponential saturates), and x (1 - x^2 / 3 + 2 x^4 / 15) for |x| <
    // 1/16, where the subtraction would cancel: a few f32 ulp relative.
    // Branchless, instead of libdevice's tanhf inlined per element.
    Value x = map.lookupOrDefault(tanh.getOperand());
    Value e = unary("ex2.approx.ftz.f32 $0, $1;",
                    arith::MulFOp::create(b_, loc_, x, f32(2.0 * 1.4426950408889634)));
    Value large = arith::SubFOp::create(
        b_, loc_, f32(1.0), divide(f32(2.0), arith::AddFOp::create(b_, loc_, e, f32(1.0))));
    // Where every use adds 1 or -1 (GELU's 1 + tanh(u)), the sum's own
    // rounding near x = 0 exceeds the exponential form's 1e-7: no series,
    // and no second form live per element (the fused GEMM's epilogue then
    // spilled on sm_60, which cost its main loop 40%).
    auto addsOne = [](Operation *user) {
      if (!isa<arith::AddFOp, arith::SubFOp>(user))
        return false;
      return llvm::any_of(user->getOperands(), [](Value operand) {
        FloatAttr c;
        return matchPattern(operand, m_Constant(&c)) &&
               std::abs(c.getValueAsDouble()) == 1.0;
      });
    };
    if (llvm::all_of(op.getResult(0).getUsers(), addsOne))
      return large;
    Value x2 = arith::MulFOp::create(b_, loc_, x, x);
    Value series = arith::MulFOp::create(
        b_, loc_, x,
        LLVM::FMAOp::create(b_, loc_, x2,
                            LLVM::FMAOp::create(b_, loc_, x2, f32(2.0 / 15.0), f32(-1.0 / 3.0)),
                            f32(1.0)));
    Value small = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLT,
                                        math::AbsFOp::create(b_, loc_, x), f32(0.0625));
    return arith::SelectOp::create(b_, loc_, small, series, large);
  }
  if (auto div = dyn_cast<arith::DivFOp>(op))
    return divide(map.lookupOrDefault(div.getLhs()), map.lookupOrDefault(div.getRhs()));
  if (auto exp2 = dyn_cast<math::Exp2Op>(op))
    // One MUFU.EX2: without .ftz, ptxas wraps ex2.approx.f32 in a test for
    // subnormal results and two multiplies (three more instructions an
    // element, in softmax loops that are bound by instruction issue).
    return unary("ex2.approx.ftz.f32 $0, $1;", map.lookupOrDefault(exp2.getOperand()));
  if (auto exp = dyn_cast<math::ExpOp>(op)) {
    // exp(x) = 2^(x log2 e) with ex2.approx (PTX ISA §9.7.3.21); exp(-y)
    // scales y by -log2 e (no negation left for ptxas to emit).
    double log2e = 1.4426950408889634;
    Value x = exp.getOperand();
    if (auto neg = x.getDefiningOp<arith::NegFOp>())
      x = neg.getOperand(), log2e = -log2e;
    Value scaled = arith::MulFOp::create(b_, loc_, map.lookupOrDefault(x), f32(log2e));
    return unary("ex2.approx.ftz.f32 $0, $1;", scaled);
  }
  if (auto erf = dyn_cast<math::ErfOp>(op)) {
    // erf(x) ~ x P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf(4) is 1 in
    // f32): a branchless minimax rational form, 3.8e-7 absolute error at
    // most before the division (libdevice's erff branches on |x| and calls
    // exp). Q lies in [-1, -0.014], inside the fast division's range.
    static constexpr double kP[] = {-2.72614225801306e-10, 2.77068142495902e-08,
                                    -2.10102402082508e-06, -5.69250639462346e-05,
                                    -7.34990630326855e-04, -2.95459980854025e-03,
                                    -1.60960333262415e-02};
    static constexpr double kQ[] = {-1.45660718464996e-05, -2.13374055278905e-04,
                                    -1.68282697438203e-03, -7.37332916720468e-03,
                                    -1.42647390514189e-02};
    Value x = map.lookupOrDefault(erf.getOperand());
    x = arith::MaxNumFOp::create(b_, loc_, arith::MinNumFOp::create(b_, loc_, x, f32(4.0)),
                                 f32(-4.0));
    Value x2 = arith::MulFOp::create(b_, loc_, x, x);
    auto horner = [&](ArrayRef<double> coefficients) {
      Value sum = f32(coefficients.front());
      for (double c : coefficients.drop_front())
        sum = LLVM::FMAOp::create(b_, loc_, sum, x2, f32(c));
      return sum;
    };
    return divide(arith::MulFOp::create(b_, loc_, horner(kP), x), horner(kQ));
  }
  return {};
}

LogicalResult KernelLowering::lowerParallel(ParallelOp loop) {
  DistributionAttr dist = loop.getDistributionAttr();
  MmaLayoutAttr mma = loop.getMmaLayoutAttr();
  if (!dist && !mma)
    return loop.emitOpError() << "has no distribution; run tile-layout-inference first";
  if (dist && dist.getThreads() != kernel_.getThreads() && dist.getThreads() != 1)
    return loop.emitOpError() << "is distributed over " << dist.getThreads()
                              << " threads but the kernel has " << kernel_.getThreads();
  // An atomic is one per element: a loop every thread runs whole (it reads
  // a replicated fragment) leaves it to thread 0; a loop over a row slice,
  // whose rows several lanes hold, is refused.
  bool everyThread = dist && dist.getThreads() == 1 && kernel_.getThreads() > 1;
  bool atomics = false;
  loop.getBody().walk([&](AtomicOp) { atomics = true; });
  if (atomics && mma && loop.getExtents().size() == 1)
    return loop.emitOpError() << "holds tile.atomic over a row slice, whose rows several "
                                 "lanes hold; copy the rows into a fragment of their own first";
  Value onlyOneThread = atomics && everyThread ? isThread(0) : Value();
  // Shared writes wait for the block's earlier shared accesses, reads only
  // for earlier writes (reads after reads need no barrier); only writes
  // (generic proxy) need fencing before async-proxy reads (wgmma, bulk
  // copies).
  bool touchesShared = false, writesShared = false;
  loop.getBody().walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (auto type = dyn_cast<BufferType>(operand.getType()))
        touchesShared |= type.isShared();
    if (auto store = dyn_cast<StoreOp>(op))
      writesShared |= cast<BufferType>(store.getBuffer().getType()).isShared();
  });
  if (writesShared || (touchesShared && sharedWritesPending_))
    barrier();
  genericSharedWrites_ |= writesShared;
  LogicalResult result = success();
  forEachOwned(loop.getExtents(), dist, mma, [&](const Chunk &chunk) {
    for (int64_t v = 0; v < chunk.vector && succeeded(result); ++v) {
      SmallVector<Value> coords(chunk.coords);
      coords.back() = add(coords.back(), cst(v));
      // The body's values are mapped for this element, then erased (a copy
      // of the kernel's whole mapping per element cost compile time).
      IRMapping &map = map_;
      for (auto [iv, coord] : llvm::zip(loop.getInductionVars(), coords))
        map.map(iv, coord);
      for (Operation &op : loop.getBodyBlock().without_terminator()) {
        // A buffer element: a register slot of this chunk (fragments), any
        // slot (replicated fragments), or a swizzled shared location.
        auto mapped = [&](OperandRange indices) {
          SmallVector<Value> values;
          for (Value index : indices)
            values.push_back(map.lookupOrDefault(index));
          return values;
        };
        auto location = [&](const BufferInfo &info, OperandRange indices) -> SmallVector<Value> {
          // A row slice read in a loop over its accumulator: the slot of
          // the chunk's row.
          if (info.rowSlice && loop.getExtents().size() == 2)
            return {cst(rowSliceSlot(loop.getExtents(), mma, chunk.firstSlot))};
          if (info.type.isFragment())
            return {cst(chunk.firstSlot + v)};
          return sharedIndices(info, mapped(indices));
        };
        if (auto load = dyn_cast<LoadOp>(op)) {
          const BufferInfo &info = buffers_[load.getBuffer()];
          Value value = info.replicated
                            ? loadReplicated(info, mapped(load.getIndices()))
                            : memref::LoadOp::create(b_, loc_, info.memref,
                                                     location(info, load.getIndices()));
          map.map(load.getResult(), value);
        } else if (auto store = dyn_cast<StoreOp>(op)) {
          const BufferInfo &info = buffers_[store.getBuffer()];
          Value value = map.lookupOrDefault(store.getValue());
          if (info.replicated)
            storeReplicated(info, mapped(store.getIndices()), value);
          else
            memref::StoreOp::create(b_, loc_, value, info.memref,
                                    location(info, store.getIndices()));
        } else if (auto dim = dyn_cast<DimOp>(op)) {
          map.map(dim.getResult(), tensors_[dim.getTensor()].dims[dim.getIndex()]);
        } else if (auto atomic = dyn_cast<AtomicOp>(op)) {
          map.map(atomic.getResult(),
                  atomicElement(atomic, mapped(atomic.getIndices()),
                                map.lookupOrDefault(atomic.getValue()), onlyOneThread));
        } else if (auto cast = dyn_cast<CastOp>(op)) {
          // Element values are in their storage types (FP8, ui8: i8 bits).
          map.map(cast.getResult(),
                  convertCast(map.lookupOrDefault(cast.getInput()), cast.getInput().getType(),
                              cast.getType(), cast.getSaturate()));
        } else if (op.getNumRegions() != 0 || isa<TileDialect>(op.getDialect())) {
          result = op.emitOpError() << "is not supported inside tile.parallel yet";
          return;
        } else if (Value fast = lowerFastMath(op, map)) {
          map.map(op.getResult(0), fast);
        } else {
          b_.clone(op, map);
        }
      }
      for (Value iv : loop.getInductionVars())
        map.erase(iv);
      for (Operation &op : loop.getBodyBlock().without_terminator())
        for (Value value : op.getResults())
          map.erase(value);
    }
  });
  // No barrier after (see lowerCopy): the next lowering that touches shared
  // memory starts with one (a read only where this loop wrote).
  lastWasBarrier_ = false;
  sharedWritesPending_ |= writesShared;
  return result;
}

OpFoldResult KernelLowering::replicatedSlot(const BufferInfo &info, ArrayRef<Value> indices) {
  Value linear = indices.front();
  for (size_t k = 1; k < indices.size(); ++k)
    linear = add(mul(linear, cst(info.type.getShape()[k])), indices[k]);
  if (std::optional<int64_t> constant = getConstantIntValue(linear))
    return b_.getIndexAttr(*constant);
  return linear;
}

/// The largest replicated fragment indexed dynamically (a select per slot).
constexpr int64_t kMaxDynamicReplicatedSlots = 64;

Value KernelLowering::loadReplicated(const BufferInfo &info, ArrayRef<Value> indices) {
  OpFoldResult slot = replicatedSlot(info, indices);
  if (auto attr = dyn_cast<Attribute>(slot))
    return memref::LoadOp::create(b_, loc_, info.memref,
                                  ValueRange{cst(cast<IntegerAttr>(attr).getInt())});
  Value index = cast<Value>(slot);
  int64_t slots = info.type.getNumElements();
  Value value = memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(0)});
  for (int64_t s = 1; s < std::min(slots, kMaxDynamicReplicatedSlots); ++s) {
    Value candidate = memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(s)});
    Value hit = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, index, cst(s));
    value = arith::SelectOp::create(b_, loc_, hit, candidate, value);
  }
  return value;
}

void KernelLowering::storeReplicated(const BufferInfo &info, ArrayRef<Value> indices,
                                     Value value) {
  OpFoldResult slot = replicatedSlot(info, indices);
  if (auto attr = dyn_cast<Attribute>(slot)) {
    memref::StoreOp::create(b_, loc_, value, info.memref,
                            ValueRange{cst(cast<IntegerAttr>(attr).getInt())});
    return;
  }
  Value index = cast<Value>(slot);
  for (int64_t s = 0; s < std::min(info.type.getNumElements(), kMaxDynamicReplicatedSlots); ++s) {
    Value old = memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(s)});
    Value hit = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, index, cst(s));
    memref::StoreOp::create(b_, loc_, arith::SelectOp::create(b_, loc_, hit, value, old),
                            info.memref, ValueRange{cst(s)});
  }
}

Value KernelLowering::reductionIdentity(ReduceKind kind, Type type) {
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    APInt value = kind == ReduceKind::max   ? APInt::getSignedMinValue(width)
                  : kind == ReduceKind::min ? APInt::getSignedMaxValue(width)
                                            : APInt::getZero(width);
    return arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(type, value));
  }
  const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
  APFloat value = kind == ReduceKind::max   ? APFloat::getInf(sem, /*Negative=*/true)
                  : kind == ReduceKind::min ? APFloat::getInf(sem, /*Negative=*/false)
                                            : APFloat::getZero(sem);
  return arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(type, value));
}

Value KernelLowering::combineReduction(ReduceKind kind, Value x, Value y) {
  if (isa<IntegerType>(x.getType())) {
    switch (kind) {
    case ReduceKind::max:
      return arith::MaxSIOp::create(b_, loc_, x, y);
    case ReduceKind::min:
      return arith::MinSIOp::create(b_, loc_, x, y);
    default:
      return arith::AddIOp::create(b_, loc_, x, y);
    }
  }
  switch (kind) {
  case ReduceKind::max:
    return arith::MaximumFOp::create(b_, loc_, x, y);
  case ReduceKind::min:
    return arith::MinimumFOp::create(b_, loc_, x, y);
  default:
    return arith::AddFOp::create(b_, loc_, x, y);
  }
}

Value KernelLowering::allocReductionPartials(ReduceKind kind, Type type, int64_t count) {
  Value partials;
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(entry_);
    partials = memref::AllocaOp::create(b_, loc_, MemRefType::get({count}, type));
  }
  Value init = reductionIdentity(kind, type);
  for (int64_t s = 0; s < count; ++s)
    memref::StoreOp::create(b_, loc_, init, partials, ValueRange{cst(s)});
  return partials;
}

Value KernelLowering::loadReductionOperand(const BufferInfo &src, int64_t slot, Type type,
                                           ReduceKind kind) {
  Value x = convert(memref::LoadOp::create(b_, loc_, src.memref, ValueRange{cst(slot)}), type);
  if (kind == ReduceKind::abssum && isa<IntegerType>(type)) {
    // |x| (wrapping at the minimum, as two's complement does).
    Value zero = arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(type, 0));
    Value negative = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::slt, x, zero);
    x = arith::SelectOp::create(b_, loc_, negative, arith::SubIOp::create(b_, loc_, zero, x), x);
  } else if (kind == ReduceKind::abssum) {
    x = math::AbsFOp::create(b_, loc_, x);
  }
  return x;
}

SmallVector<Value> KernelLowering::combineAcrossLanes(ReduceKind kind, Value partials,
                                                      int64_t count,
                                                      ArrayRef<int32_t> laneMasks) {
  SmallVector<Value> results;
  for (int64_t s = 0; s < count; ++s) {
    Value x = memref::LoadOp::create(b_, loc_, partials, ValueRange{cst(s)});
    for (int32_t mask : laneMasks)
      x = combineReduction(kind, x, shuffleXor(x, mask));
    results.push_back(x);
  }
  return results;
}

void KernelLowering::storeReductionResults(ReduceOp reduce, Value dst, ArrayRef<Value> results) {
  for (auto [s, result] : llvm::enumerate(results)) {
    Value x = result;
    if (!reduce.getClear())
      x = combineReduction(reduce.getKind(),
                           memref::LoadOp::create(b_, loc_, dst, ValueRange{cst(s)}), x);
    memref::StoreOp::create(b_, loc_, x, dst, ValueRange{cst(s)});
  }
  noteSharedAccess();
}

LogicalResult KernelLowering::lowerReduce(ReduceOp reduce) {
  const BufferInfo &src = buffers_[reduce.getSrc()];
  const BufferInfo &dst = buffers_[reduce.getDst()];
  if (dst.rowSlice)
    return lowerRowReduce(reduce);
  if (!dst.replicated)
    return reduce.emitOpError() << "needs its destination replicated or in a row slice by "
                                   "tile-layout-inference";
  if (dst.type.getNumElements() > kMaxDynamicReplicatedSlots)
    return reduce.emitOpError() << "produces " << dst.type.getNumElements()
                                << " results per block; at most "
                                << kMaxDynamicReplicatedSlots << " are supported";
  Type acc = dst.type.getElementType();
  ReduceKind kind = reduce.getKind();
  int64_t rows = dst.type.getNumElements();
  auto combine = [&](Value x, Value y) { return combineReduction(kind, x, y); };

  // 1. Each thread reduces its own elements, row by row (in registers).
  Value partials = allocReductionPartials(kind, acc, rows);
  ArrayRef<int64_t> shape = src.type.getShape();
  forEachOwned(shape, src.distribution, src.mma, [&](const Chunk &chunk) {
    Value row = cst(0);
    for (size_t k = 0; k + 1 < chunk.coords.size(); ++k)
      row = add(mul(row, cst(shape[k])), chunk.coords[k]);
    std::optional<int64_t> staticRow = getConstantIntValue(row);
    for (int64_t v = 0; v < chunk.vector; ++v) {
      Value x = loadReductionOperand(src, chunk.firstSlot + v, acc, kind);
      for (int64_t r = 0; r < rows; ++r) {
        if (staticRow && *staticRow != r)
          continue;
        Value old = memref::LoadOp::create(b_, loc_, partials, ValueRange{cst(r)});
        Value updated = combine(old, x);
        if (!staticRow)
          updated = arith::SelectOp::create(
              b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, row, cst(r)),
              updated, old);
        memref::StoreOp::create(b_, loc_, updated, partials, ValueRange{cst(r)});
      }
    }
  });

  // 2. Across the warp: butterfly shuffles leave the result in every lane.
  int64_t warps = kernel_.getThreads() / 32;
  SmallVector<Value> results =
      combineAcrossLanes(kind, partials, rows, /*laneMasks=*/{16, 8, 4, 2, 1});

  // 3. Across warps: lane 0 of each warp publishes, every thread combines.
  if (warps > 1) {
    if (!reduce.getScratch())
      return reduce.emitOpError() << "needs scratch shared memory; run tile-plan-shared-memory";
    const BufferInfo &scratch = buffers_[reduce.getScratch()];
    Type scratchType = scratch.type.getElementType();  // getReduceScratchElementType
    Value warp = arith::DivUIOp::create(b_, loc_, threadId_, cst(32));
    Value lane = arith::RemUIOp::create(b_, loc_, threadId_, cst(32));
    barrier();
    auto leader = scf::IfOp::create(
        b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, lane, cst(0)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(leader.thenBlock());
      for (int64_t r = 0; r < rows; ++r)
        memref::StoreOp::create(b_, loc_, convert(results[r], scratchType), scratch.memref,
                                ValueRange{warp, cst(r)});
    }
    noteSharedAccess();
    barrier();
    for (int64_t r = 0; r < rows; ++r) {
      Value x = convert(reductionIdentity(kind, acc), scratchType);
      for (int64_t w = 0; w < warps; ++w)
        x = combine(x, memref::LoadOp::create(b_, loc_, scratch.memref, ValueRange{cst(w), cst(r)}));
      results[r] = convert(x, acc);
    }
    // Later reductions reuse the scratch.
    noteSharedAccess();
    barrier();
  }

  // 4. Into the destination, replacing it or combining with it.
  storeReductionResults(reduce, dst.memref, results);
  return success();
}

} // namespace tessera::lowering
