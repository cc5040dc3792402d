//===- LowerStreamK.cpp - Persistent and stream-K scheduling -------------===//
//
// The grid's scheduling in persistent and stream-K kernels: grid extents,
// the stream-K decomposition and each block's work items; a split tile's
// later pieces start their accumulators at zero and hand them to the tile's
// first piece through the workspace, which adds them before the epilogue.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelLowering.h"

#include "contract/NvvmOps.h"
#include "llvm/ADT/ScopeExit.h"

#include <functional>

namespace tessera::lowering {

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
  Value later = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ne, workBegin_, cst(0));
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
  int64_t quads = streamKSlotBytes_ / (16 * threads);
  auto quadAddress = [&](Value slot, int64_t quad) {
    Value offset = mul(add(mul(slot, cst(quads)), cst(quad)), cst(threads));
    return arith::AddIOp::create(b_, loc_, base,
                                 toI64(mul(add(offset, threadId_), cst(16))));
  };
  Value flagsStart = mul(streamKBlocks_, cst(streamKSlotBytes_));
  Value piece = arith::SubIOp::create(b_, loc_, workTile_, streamKWholeTiles_);
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
  Value contributor = cmp(arith::CmpIPredicate::ne, workBegin_, cst(0));
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
    noteSharedAccess();
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
  Value finisher = andi(cmp(arith::CmpIPredicate::eq, workBegin_, cst(0)),
                        cmp(arith::CmpIPredicate::ne, workEnd_, streamKTileIters_));
  ifThen(finisher, [&] {
    // (In unsigned 32-bit arithmetic, as the decomposition.)
    Value q = arith::MaxUIOp::create(b_, loc_, toU32(streamKBlockIters_), cst32(1));
    Value iters = toU32(streamKTileIters_);
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
    noteSharedAccess();
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
  noteSharedAccess();
}

Value KernelLowering::emitGridExtents() {
  gridExtents_.clear();
  Value total = cst(1);
  for (unsigned i = 0; i < kernel_.getGrid().getNumResults(); ++i) {
    gridExtents_.push_back(gridExtent(i));
    total = mul(total, gridExtents_.back());
  }
  return total;
}

void KernelLowering::emitStreamKParams(PipelinedOp loop) {
  // In unsigned 32-bit arithmetic, as is emitWorkItems: the counts are tiles
  // and loop iterations of tensors that fit a device's memory, and 64-bit
  // divisions cost a runtime width test and a call beside each division
  // (code the producer runs before its first load).
  Value total = toU32(emitGridExtents());
  IRMapping at;
  for (BlockArgument index : kernel_.getBlockIndices())
    at.map(index, cst(0));
  Value iters = toU32(*valueAt(loop.getCount(), at));
  Value grid = toU32(gpu::GridDimOp::create(b_, loc_, gpu::Dimension::x));
  // Whole waves run whole; with less than one wave every tile does
  // (splitting them would only add exchanges).
  Value waves = arith::DivUIOp::create(b_, loc_, total, grid);
  Value dp = arith::SelectOp::create(
      b_, loc_, arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, waves, cst32(0)),
      total, mul(waves, grid));
  // Split only when it pays: each block then runs q split iterations
  // instead of one more whole tile (iters), and the partials' round trip
  // costs about `fixup` iterations (the target's cost model, from the
  // partials' bytes and the loop's MMA FLOPs per iteration).
  int64_t flopsPerIteration = 0, partialBytes = 0;
  loop.getBodyBlock().walk([&](GemmOp gemm) {
    flopsPerIteration += 2 * gemm.getM() * gemm.getN() * gemm.getK();
  });
  for (Value accumulator : loopAccumulators(loop))
    partialBytes += 4 * cast<BufferType>(accumulator.getType()).getNumElements();
  int64_t fixup = flopsPerIteration > 0 ? llvm::divideCeil(caps_.streamKFlopsPerPartialByte *
                                                               partialBytes,
                                                           flopsPerIteration)
                                        : 0;
  if (fixup > 0) {
    Value rest = arith::SubIOp::create(b_, loc_, total, dp);
    Value q = arith::CeilDivUIOp::create(b_, loc_, mul(rest, iters), grid);
    Value pays = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ugt,
                                       arith::SubIOp::create(b_, loc_, iters, q), cst32(fixup));
    dp = arith::SelectOp::create(b_, loc_, pays, dp, total);
  }
  Value split = mul(arith::SubIOp::create(b_, loc_, total, dp), iters);
  streamKTileIters_ = fromU32(iters);
  streamKBlocks_ = fromU32(grid);
  streamKWholeTiles_ = fromU32(dp);
  streamKSplitIters_ = fromU32(split);
  streamKBlockIters_ = fromU32(arith::CeilDivUIOp::create(b_, loc_, split, grid));
}

SmallVector<Value> KernelLowering::loopAccumulators(PipelinedOp loop) {
  SmallVector<Value> accumulators;
  loop.getBodyBlock().walk([&](GemmOp gemm) {
    if (!llvm::is_contained(accumulators, gemm.getC()))
      accumulators.push_back(gemm.getC());
  });
  return accumulators;
}

std::optional<std::string> KernelLowering::whyNoStreamK() {
  SmallVector<PipelinedOp> loops;
  kernel_.walk([&](PipelinedOp loop) { loops.push_back(loop); });
  if (loops.size() != 1 || loops[0]->getBlock() != &kernel_.getBodyBlock())
    return std::string("it needs exactly one pipelined loop, at the kernel's top level");
  PipelinedOp loop = loops[0];
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (isa<GemmOp, DimOp>(op))
      continue;
    if (auto copy = dyn_cast<CopyOp>(op)) {
      if (isa<TileTensorType>(copy.getSrc().getType()))
        continue;
      return std::string("the loop copies other than from tensors");
    }
    if (!isPlainArithmetic(&op))
      return std::string("the loop holds more than copies, gemms and arithmetic");
  }
  // (An accumulator may start at any value, a bias row say: the tile's
  // first piece keeps it, the later ones start at zero; see zeroLaterPieces.)
  // The iteration count is the same for every block.
  if (dependsOnBlockIndices(loop.getCount()))
    return std::string("the loop's iteration count depends on the block");
  // Every block computes the decomposition from the count (a variable's
  // value is not such arithmetic).
  if (!isRecomputable(loop.getCount()))
    return std::string("the loop's iteration count is not arithmetic of the kernel's arguments "
                       "and dimensions");
  return std::nullopt;
}

scf::ForOp KernelLowering::emitWorkItems(ValueRange iterArgs, Value &tile, Value &begin,
                                         Value &end) {
  auto minui = [&](Value x, Value y) { return arith::MinUIOp::create(b_, loc_, x, y); };
  auto select = [&](Value c, Value x, Value y) {
    return arith::SelectOp::create(b_, loc_, c, x, y);
  };
  // Unsigned 32-bit arithmetic (see emitStreamKParams); the results are
  // indices again.
  Value block = toU32(gpu::BlockIdOp::create(b_, loc_, gpu::Dimension::x));
  Value grid = toU32(streamKBlocks_), dp = toU32(streamKWholeTiles_);
  Value q = toU32(streamKBlockIters_), splitIters = toU32(streamKSplitIters_);
  Value iters = arith::MaxUIOp::create(b_, loc_, toU32(streamKTileIters_), cst32(1));
  Value first = minui(mul(block, q), splitIters);
  Value last = minui(add(first, q), splitIters);
  Value boundary = mul(add(arith::DivUIOp::create(b_, loc_, first, iters), cst32(1)), iters);
  Value split = minui(last, boundary);
  auto count = [&](Value from, Value to) {
    // (unsigned: a signed cast makes true -1)
    return arith::ExtUIOp::create(
        b_, loc_, b_.getI32Type(),
        arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, from, to));
  };
  // Whole tiles block, block + grid, ... below streamKWholeTiles_.
  Value beyond =
      arith::SubIOp::create(b_, loc_, arith::SubIOp::create(b_, loc_, dp, block), cst32(1));
  Value wholes = select(arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, block, dp),
                        add(arith::DivUIOp::create(b_, loc_, beyond, grid), cst32(1)), cst32(0));
  Value items = add(wholes, add(count(first, split), count(split, last)));
  auto loop = scf::ForOp::create(b_, loc_, cst(0), fromU32(items), cst(1), iterArgs,
                                 [](OpBuilder &nested, Location at, Value, ValueRange args) {
                                   scf::YieldOp::create(nested, at, args);
                                 });
  b_.setInsertionPoint(loop.getBody()->getTerminator());
  Value j = toU32(loop.getInductionVar());
  Value whole = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ult, j, wholes);
  Value firstPiece = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, j, wholes);
  Value from = select(firstPiece, first, split), to = select(firstPiece, split, last);
  Value pieceBegin = arith::RemUIOp::create(b_, loc_, from, iters);
  tile = fromU32(select(whole, add(block, mul(j, grid)),
                        add(dp, arith::DivUIOp::create(b_, loc_, from, iters))));
  begin = fromU32(select(whole, cst32(0), pieceBegin));
  end = fromU32(select(whole, toU32(streamKTileIters_),
                       add(pieceBegin, arith::SubIOp::create(b_, loc_, to, from))));
  return loop;
}

SmallVector<Value> KernelLowering::tileCoords(Value t) {
  SmallVector<Value> coords;
  for (size_t i = 0; i < gridExtents_.size(); ++i) {
    if (i + 1 == gridExtents_.size()) {
      coords.push_back(t);
      break;
    }
    coords.push_back(arith::RemUIOp::create(b_, loc_, t, gridExtents_[i]));
    t = arith::DivUIOp::create(b_, loc_, t, gridExtents_[i]);
  }
  return coords;
}

Value KernelLowering::gridExtent(unsigned dim) {
  std::function<Value(AffineExpr)> eval = [&](AffineExpr expr) -> Value {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      return cst(constant.getValue());
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
      return dynamicDims_[symbol.getPosition()];
    auto binary = cast<AffineBinaryOpExpr>(expr);
    Value lhs = eval(binary.getLHS()), rhs = eval(binary.getRHS());
    switch (expr.getKind()) {
    case AffineExprKind::Add:
      return add(lhs, rhs);
    case AffineExprKind::Mul:
      return mul(lhs, rhs);
    case AffineExprKind::FloorDiv:
      return arith::DivUIOp::create(b_, loc_, lhs, rhs);
    case AffineExprKind::CeilDiv:
      return arith::CeilDivUIOp::create(b_, loc_, lhs, rhs);
    default:
      return arith::RemUIOp::create(b_, loc_, lhs, rhs);
    }
  };
  return eval(kernel_.getGrid().getResult(dim));
}

LogicalResult KernelLowering::withStreamKRecomputed(PipelinedOp loop,
                                                    llvm::function_ref<LogicalResult()> body) {
  SmallVector<Value> savedExtents = gridExtents_;
  Value savedParams[] = {streamKTileIters_, streamKBlocks_, streamKWholeTiles_, streamKSplitIters_,
                         streamKBlockIters_};
  emitStreamKParams(loop);
  LogicalResult result = body();
  gridExtents_ = savedExtents;
  std::tie(streamKTileIters_, streamKBlocks_, streamKWholeTiles_, streamKSplitIters_,
           streamKBlockIters_) = std::make_tuple(savedParams[0], savedParams[1], savedParams[2],
                                                 savedParams[3], savedParams[4]);
  return result;
}

} // namespace tessera::lowering
