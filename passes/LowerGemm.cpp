//===- LowerGemm.cpp - MMA atoms of tile-lower-to-gpu --------------------===//
//
// tile.gemm for each atom: SIMT FMA, Volta's quadpair mma.m8n8k4, Ampere's
// ldmatrix + mma.m16n8k16, Hopper's wgmma from shared memory descriptors.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"

namespace tessera::lowering {

LogicalResult KernelLowering::lowerGemm(GemmOp gemm) {
  FailureOr<MmaAtom> atom = selectMmaAtom(gemm, backend_, cc_, kernel_.getThreads());
  if (failed(atom))
    return failure();
  switch (atom->kind) {
  case MmaAtomKind::kSimtFma:
    return lowerGemmSimt(gemm);
  case MmaAtomKind::kQuadpairMma:
    return lowerGemmQuadpair(gemm, *atom);
  case MmaAtomKind::kWarpMma:
    return lowerGemmMma(gemm, *atom);
  case MmaAtomKind::kWarpgroupMma:
    return lowerGemmWgmma(gemm, *atom);
  }
  return gemm.emitOpError() << "has an atom of unknown kind: " << atom->name;
}

LogicalResult KernelLowering::lowerGemmSimt(GemmOp gemm) {
  const BufferInfo &a = buffers_[gemm.getA()];
  const BufferInfo &b = buffers_[gemm.getB()];
  const BufferInfo &c = buffers_[gemm.getC()];
  if (!a.type.isShared() || !b.type.isShared())
    return gemm.emitOpError() << "with the SIMT FMA atom reads A and B from shared memory; "
                                 "copy them into shared buffers first";
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  Type f32 = b_.getF32Type();
  barrier();
  auto forOp = scf::ForOp::create(b_, loc_, cst(0), cst(gemm.getK()), cst(1));
  {
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    forEachChunk(c.type.getShape(), c.distribution, [&](const Chunk &chunk) {
      Value i = chunk.coords[0], j = chunk.coords[1];
      Value av = memref::LoadOp::create(
          b_, loc_, a.memref, sharedIndices(a, transA ? SmallVector<Value>{k, i} : SmallVector<Value>{i, k}));
      av = convert(av, f32);
      for (int64_t v = 0; v < c.distribution.getVector(); ++v) {
        Value jv = add(j, cst(v));
        Value bv = memref::LoadOp::create(
            b_, loc_, b.memref,
            sharedIndices(b, transB ? SmallVector<Value>{jv, k} : SmallVector<Value>{k, jv}));
        bv = convert(bv, f32);
        Value slot = cst(chunk.firstSlot + v);
        Value acc = memref::LoadOp::create(b_, loc_, c.memref, ValueRange{slot});
        acc = math::FmaOp::create(b_, loc_, av, bv, acc);
        memref::StoreOp::create(b_, loc_, acc, c.memref, ValueRange{slot});
      }
    });
  }
  lastWasBarrier_ = false;
  return success();
}

FailureOr<KernelLowering::GemmBuffers>
KernelLowering::getGemmBuffers(GemmOp gemm, const MmaAtom &atom, int64_t layoutM, int64_t layoutN) {
  GemmBuffers buffers{&buffers_[gemm.getA()], &buffers_[gemm.getB()], &buffers_[gemm.getC()]};
  MmaLayoutAttr mma = buffers.c->mma;
  if (!mma || mma.getM() != layoutM || mma.getN() != layoutN)
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its accumulator laid out by tile-layout-inference";
  return buffers;
}

KernelLowering::MmaFragments KernelLowering::loadMmaFragments(GemmOp gemm, int64_t ks) {
  const BufferInfo &a = buffers_[gemm.getA()], &b = buffers_[gemm.getB()];
  MmaLayoutAttr mma = buffers_[gemm.getC()].mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t mt = gemm.getM() / mma.getWarpsM() / 16, nt = gemm.getN() / mma.getWarpsN() / 8;
  SmallVector<int64_t> shape = {gemm.getM(), gemm.getN()};
  Value warp = warpId(), lane = laneId();
  Value mat = arith::DivUIOp::create(b_, loc_, lane, cst(8));
  Value within = arith::RemUIOp::create(b_, loc_, lane, cst(8));
  Value matLow = arith::RemUIOp::create(b_, loc_, mat, cst(2));
  Value matHigh = arith::DivUIOp::create(b_, loc_, mat, cst(2));
  Value warpRow = warpTileRow(shape, mma, warp);
  Value warpCol = warpTileCol(shape, mma, warp);
  SmallVector<Type> four(4, b_.getI32Type());
  // ldmatrix (PTX ISA §9.7.14.5.15): four 8x8 b16 matrices, row addresses
  // from lanes 8i..8i+7 for matrix i. The thread's row and column within
  // an x4 load and the load's constant offset from them (so the loads of
  // one thread share address registers).
  auto ldmatrix = [&](const BufferInfo &buffer, Value row, Value col, int64_t rowShift,
                      int64_t colShift, bool trans) {
    std::string text = std::string("ldmatrix.sync.aligned.m8n8.x4") + (trans ? ".trans" : "") +
                       ".shared.b16 {$0, $1, $2, $3}, [$4];";
    return emitPtx(b_, loc_, text, "=r,=r,=r,=r,r",
                   {sharedAddress32(buffer, {row, col}, {rowShift, colShift})}, four,
                   /*sideEffects=*/true);
  };
  int64_t k0 = ks * 16;
  MmaFragments fragments;
  // A: one x4 load per 16-row atom tile (a0..a7 of mma.m16n8k16).
  for (int64_t mi = 0; mi < mt; ++mi) {
    if (a.type.isFragment())
      fragments.a.push_back(fragmentARegisters(a, mi, ks));
    else if (!transA)
      fragments.a.push_back(ldmatrix(a, add(warpRow, add(within, mul(matLow, cst(8)))),
                                     mul(matHigh, cst(8)), mi * 16, k0, false));
    else
      fragments.a.push_back(ldmatrix(a, add(within, mul(matHigh, cst(8))),
                                     add(warpRow, mul(matLow, cst(8))), k0, mi * 16, true));
  }
  // B: one x4 load per pair of 8-column atom tiles (b0..b3 of each).
  for (int64_t np = 0; np < nt / 2; ++np) {
    if (!transB)
      fragments.b.push_back(ldmatrix(b, add(within, mul(matLow, cst(8))),
                                     add(warpCol, mul(matHigh, cst(8))), k0, np * 16, true));
    else
      fragments.b.push_back(ldmatrix(b, add(warpCol, add(within, mul(matHigh, cst(8)))),
                                     mul(matLow, cst(8)), np * 16, k0, false));
  }
  return fragments;
}

LogicalResult KernelLowering::lowerGemmMma(GemmOp gemm, const MmaAtom &atom) {
  FailureOr<GemmBuffers> buffers = getGemmBuffers(gemm, atom, 16, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  std::string type = cast<BufferType>(gemm.getA().getType()).getElementType().isBF16() ? "bf16"
                                                                                       : "f16";
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  Type f32 = b_.getF32Type();
  // A prefetching pipeline synchronizes before the last k-step instead.
  if (!fragmentPrefetch_)
    barrier();
  // A in registers: its fragment has the accumulator's whole-row tiling,
  // so a 16 x 16 A tile is two adjacent m16n8 tiles of it: m16n8k16's
  // a0..a7 (PTX ISA §9.7.14.5.8) are their (row g, row g + 8) pairs.
  if (a.type.isFragment() && (a.mma != mma || mma.getWarpsN() != 1))
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its A fragment laid out by tile-layout-inference";
  // The accumulators stay SSA values through the gemm.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    acc.push_back(memref::LoadOp::create(b_, loc_, c.memref, ValueRange{cst(r)}));
  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (PTX
  // ISA §9.7.14.5.8) through NVVM's intrinsic, which NVPTX prints as that
  // one instruction: its f16 form takes the packed registers as <2 x half>,
  // the bf16 form as i32.
  bool bf16 = type == "bf16";
  StringRef mmaIntrinsic = bf16 ? "llvm.nvvm.mma.m16n8k16.row.col.bf16"
                                : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
  Type half2 = VectorType::get({2}, b_.getF16Type());
  auto packed = [&](Value reg) -> Value {
    return bf16 ? reg : LLVM::BitcastOp::create(b_, loc_, half2, reg).getResult();
  };
  auto mmaStep = [&](const MmaFragments &fragments) {
    // Each fragment register packed once per step, not at every MMA using it.
    SmallVector<SmallVector<Value>> a, b;
    for (auto [from, to] : {std::pair{&fragments.a, &a}, {&fragments.b, &b}})
      for (const SmallVector<Value> &regs : *from)
        to->push_back(llvm::map_to_vector(regs, packed));
    for (int64_t mi = 0; mi < mt; ++mi) {
      for (int64_t ni = 0; ni < nt; ++ni) {
        int64_t base = (mi * nt + ni) * 4;
        SmallVector<Value> operands(a[mi].begin(), a[mi].end());
        operands.push_back(b[ni / 2][(ni % 2) * 2]);
        operands.push_back(b[ni / 2][(ni % 2) * 2 + 1]);
        operands.append(acc.begin() + base, acc.begin() + base + 4);
        SmallVector<Value> d =
            callIntrinsic(b_, loc_, mmaIntrinsic, operands, SmallVector<Type>(4, f32));
        std::copy(d.begin(), d.end(), acc.begin() + base);
      }
    }
  };
  // A pipelined loop's deferred copies go after the first fragment loads.
  auto issueDeferred = [&] {
    if (pendingIssue_) {
      pendingIssue_();
      pendingIssue_ = nullptr;
    }
  };
  int64_t steps = gemm.getK() / 16;
  if (!fragmentPrefetch_) {
    for (int64_t ks = 0; ks < steps; ++ks) {
      MmaFragments fragments = loadMmaFragments(gemm, ks);
      if (ks == 0)
        issueDeferred();
      mmaStep(fragments);
    }
  } else {
    // Step 0's fragments came with the iteration (loaded before the last
    // step of the one before); each step loads the next one's, and the last
    // synchronizes and loads the next iteration's first (the strategy's
    // beforeLastStep), so neither waits on its loads.
    MmaFragments current = fragmentPrefetch_->current;
    for (int64_t ks = 0; ks < steps; ++ks) {
      // With checked copies beside, the copies first: only step 0's
      // fragments and the accumulators are live across their address
      // arithmetic (ptxas predicates both sides of the branch); else the
      // next step's loads first, their latency behind the copies.
      if (ks == 0 && fragmentPrefetch_->copiesFirst)
        issueDeferred();
      MmaFragments next;
      if (ks + 1 < steps)
        next = loadMmaFragments(gemm, ks + 1);
      if (ks == 0)
        issueDeferred();
      if (ks + 1 == steps)
        fragmentPrefetch_->beforeLastStep();
      mmaStep(current);
      current = std::move(next);
    }
  }
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    memref::StoreOp::create(b_, loc_, acc[r], c.memref, ValueRange{cst(r)});
  lastWasBarrier_ = false;
  return success();
}

SmallVector<Value> KernelLowering::fragmentARegisters(const BufferInfo &a, int64_t mi,
                                                     int64_t ks) {
  Type i32 = b_.getI32Type();
  int64_t tiles = a.type.getShape()[1] / 8;
  auto pack = [&](int64_t slot) {
    SmallVector<Value> pair;
    for (int64_t e = 0; e < 2; ++e)
      pair.push_back(memref::LoadOp::create(b_, loc_, a.memref, ValueRange{cst(slot + e)}));
    return LLVM::BitcastOp::create(b_, loc_, i32, packVector(pair)).getResult();
  };
  SmallVector<Value> regs;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t h = 0; h < 2; ++h)
      regs.push_back(pack((mi * tiles + 2 * ks + half) * 4 + 2 * h));
  return regs;
}

LogicalResult KernelLowering::lowerGemmQuadpair(GemmOp gemm, const MmaAtom &atom) {
  FailureOr<GemmBuffers> buffers = getGemmBuffers(gemm, atom, 8, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 16;
  Type i32 = b_.getI32Type(), f32 = b_.getF32Type();
  barrier();
  SmallVector<int64_t> shape = {gemm.getM(), gemm.getN()};
  Value warp = warpId(), lane = laneId();
  Value quadpair = quadpairId(lane);
  // Within a quadpair: lanes 0-3 (low group) and 16-19 (high group).
  Value inGroup = add(arith::RemUIOp::create(b_, loc_, lane, cst(4)),
                      mul(arith::DivUIOp::create(b_, loc_, lane, cst(16)), cst(4)));
  Value warpRow = quadpairBlockRow(shape, mma, warp, quadpair);
  Value warpCol = quadpairBlockCol(shape, mma, warp, quadpair);
  Value quarter = arith::RemUIOp::create(b_, loc_, lane, cst(4));
  Value highHalf = mul(arith::DivUIOp::create(b_, loc_, lane, cst(16)), cst(4));
  // Four contiguous f16 of a shared buffer as two b32 registers (one
  // 8-byte load: the operand layout is chosen so they are contiguous).
  auto load4 = [&](const BufferInfo &buffer, Value row, Value col) {
    return unpackVector(LLVM::LoadOp::create(b_, loc_, VectorType::get({2}, i32),
                                             sharedPointer(buffer, {row, col}), 8));
  };
  // A .row: lane's row, k0..k0+3; A transposed (K x M) .col: k = lane mod 4,
  // its 4 rows. B .row (K x N): k = lane mod 4, its 4 columns; B transposed
  // (N x K) .col: its column, k0..k0+3.
  std::string mmaText = std::string("mma.sync.aligned.m8n8k4.") + (transA ? "col" : "row") + "." +
                        (transB ? "col" : "row") +
                        ".f32.f16.f16.f32 {$0, $1, $2, $3, $4, $5, $6, $7}, {$8, $9}, {$10, $11}, "
                        "{$12, $13, $14, $15, $16, $17, $18, $19};";
  // The accumulators stay SSA values through the gemm (one load and one
  // store of each, not one per k-step).
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mt * nt * 8; ++r)
    acc.push_back(memref::LoadOp::create(b_, loc_, c.memref, ValueRange{cst(r)}));
  for (int64_t ks = 0; ks < gemm.getK() / 4; ++ks) {
    Value k0 = cst(ks * 4);
    SmallVector<SmallVector<Value>> aRegs, bRegs;
    for (int64_t mi = 0; mi < mt; ++mi) {
      Value r0 = add(warpRow, cst(mi * 16));
      aRegs.push_back(transA ? load4(a, add(k0, quarter), add(r0, highHalf))
                             : load4(a, add(r0, inGroup), k0));
    }
    for (int64_t ni = 0; ni < nt; ++ni) {
      Value c0 = add(warpCol, cst(ni * 16));
      bRegs.push_back(transB ? load4(b, add(c0, inGroup), k0)
                             : load4(b, add(k0, quarter), add(c0, highHalf)));
    }
    for (int64_t mi = 0; mi < mt; ++mi) {
      for (int64_t ni = 0; ni < nt; ++ni) {
        int64_t base = (mi * nt + ni) * 8;
        SmallVector<Value> operands(aRegs[mi].begin(), aRegs[mi].end());
        operands.append(bRegs[ni].begin(), bRegs[ni].end());
        operands.append(acc.begin() + base, acc.begin() + base + 8);
        SmallVector<Value> d =
            emitPtx(b_, loc_, mmaText, "=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,f,f,f,f,f,f,f,f", operands,
                    SmallVector<Type>(8, f32), false);
        std::copy(d.begin(), d.end(), acc.begin() + base);
      }
    }
  }
  for (int64_t r = 0; r < mt * nt * 8; ++r)
    memref::StoreOp::create(b_, loc_, acc[r], c.memref, ValueRange{cst(r)});
  lastWasBarrier_ = false;
  return success();
}

SmallVector<Value> KernelLowering::wgmmaDescriptors(const BufferInfo &buffer, Value row,
                                                    Value col, bool mnMajor, int64_t steps,
                                                    int64_t groupStride) {
  // Bits 0-13: start address >> 4; 16-29: leading byte offset >> 4; 32-45:
  // stride byte offset >> 4; 62-63: swizzle (1: 128 B, 2: 64 B, 3: 32 B).
  // K-major: 8-row groups are 8 rows apart (stride); the leading offset is
  // unused. MN-major: 8-row groups along K likewise; panels along M or N
  // are the leading offset apart.
  const SharedSwizzle &swizzle = buffer.swizzle;
  int64_t rows = buffer.type.getShape()[0];
  int64_t element = getElementBytes(buffer.type.getElementType());
  int64_t stride = 8 * swizzle.rowBytes * groupStride;
  int64_t leading = mnMajor ? rows * swizzle.rowBytes : 16;
  int64_t mode = swizzle.rowBytes == 128 ? 1 : swizzle.rowBytes == 64 ? 2 : 3;
  Type i32 = b_.getI32Type(), i64 = b_.getI64Type();
  auto i32Constant = [&](int64_t v) { return arith::ConstantIntOp::create(b_, loc_, i32, v); };
  // The low word: start address and leading offset. Shared addresses stay
  // below 2^18, so a later step's start (at most the tile's end) never
  // carries out of its 14 bits; the high word is a constant.
  Value address = sharedAddress32(buffer, {row, col});
  Value low = arith::OrIOp::create(
      b_, loc_,
      arith::ShRUIOp::create(
          b_, loc_, arith::AndIOp::create(b_, loc_, address, i32Constant(0x3FFFF)),
          i32Constant(4)),
      i32Constant(((leading >> 4) & 0x3FFF) << 16));
  Value high = arith::ConstantOp::create(
      b_, loc_,
      b_.getIntegerAttr(i64, int64_t((uint64_t((stride >> 4) & 0x3FFF) << 32) |
                                     (uint64_t(mode) << 62))));
  SmallVector<Value> descriptors;
  for (int64_t ks = 0; ks < steps; ++ks) {
    // 16 elements along K: whole 8-row groups of an MN-major tile (rows
    // rowBytes apart); within a K-major tile's swizzled rows (the hardware
    // swizzles the addresses it forms), panels rows x rowBytes apart.
    int64_t bytes = 16 * ks * element;
    int64_t offset = mnMajor ? 16 * ks * swizzle.rowBytes
                             : bytes / swizzle.rowBytes * rows * swizzle.rowBytes +
                                   bytes % swizzle.rowBytes;
    Value stepLow = ks == 0 ? low
                            : arith::AddIOp::create(b_, loc_, low, i32Constant(offset >> 4),
                                                    arith::IntegerOverflowFlags::nuw);
    descriptors.push_back(arith::OrIOp::create(
        b_, loc_, arith::ExtUIOp::create(b_, loc_, i64, stepLow), high));
  }
  return descriptors;
}

SmallVector<Value> KernelLowering::fenceValues(ArrayRef<Value> values) {
  std::string constraints;
  for (size_t r = 0; r < values.size(); ++r)
    constraints += (r ? ",=f" : "=f");
  for (size_t r = 0; r < values.size(); ++r)
    constraints += "," + std::to_string(r);
  SmallVector<Type> types;
  for (Value v : values)
    types.push_back(v.getType());
  return emitPtx(b_, loc_, "", constraints, values, types, true);
}

void KernelLowering::fenceRegisters(Value fragment, int64_t regs) {
  const BufferInfo &info = buffers_[fragment];
  SmallVector<Value> values;
  for (int64_t r = 0; r < regs; ++r)
    values.push_back(memref::LoadOp::create(b_, loc_, info.memref, ValueRange{cst(r)}));
  SmallVector<Value> fenced = fenceValues(values);
  for (int64_t r = 0; r < regs; ++r)
    memref::StoreOp::create(b_, loc_, fenced[r], info.memref, ValueRange{cst(r)});
}

LogicalResult KernelLowering::lowerGemmWgmma(GemmOp gemm, const MmaAtom &atom) {
  // Each warp's share of the m64nN accumulator is a column of m16n8 tiles.
  FailureOr<GemmBuffers> buffers = getGemmBuffers(gemm, atom, 16, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  int64_t n = gemm.getN();
  bool registersA = a.type.isFragment();
  if (mma.getWarpsN() != 1 || mma.getWarpsM() * 32 != kernel_.getThreads() ||
      (!registersA && a.swizzle.rowBytes == 0) || b.swizzle.rowBytes == 0 ||
      !b.type.isShared() || (registersA && a.mma != mma))
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its accumulator, A fragment and swizzled shared "
                                 "operands laid out by tile-layout-inference";
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  std::string type = a.type.getElementType().isBF16() ? "bf16" : "f16";
  Type f32 = b_.getF32Type();
  if (!inAsyncMmaPipeline_ || genericSharedWrites_) {
    // Shared writes so far went through the generic proxy.
    fenceProxyAsync();
    barrier();
  }
  // imm-trans-a/b are 1 for MN-major operands (PTX ISA §9.7.15.5.1.2): A
  // stored M x K and B stored N x K (transpose_b) are K-major, so B's flag
  // is 1 unless B is transposed.
  // Warpgroup g computes rows 64 g .. 64 g + 63; its warps hold the m16n8
  // accumulator tiles of their 16 rows, which is wgmma's D layout
  // (PTX ISA §9.7.15.5.1.1.1): register 4 j + 2 h + e is row 16 w + lane / 4
  // + 8 h, column 8 j + 2 (lane mod 4) + e. An A in registers (the RS form)
  // has that layout too, over M x K: each warp its 16 rows, four b32
  // registers per k-step (§9.7.15.5.1.1.2), as m16n8k16's A.
  //
  // A warpgroup with 128 rows (reps = 2) issues two m64 instructions per
  // k-step whose rows interleave in 8-row groups: instruction r reads the
  // groups at rows 16 j + 8 r (A's descriptor strides two groups), so warp w
  // of the warpgroup gets rows 32 w .. 32 w + 31 over both, the fragment's
  // own warp tile (two m16 tiles): instruction r's register 4 j + 2 h + e is
  // the fragment's m16 tile h, column tile j, row half r.
  int64_t warpgroups = kernel_.getThreads() / 128;
  int64_t reps = gemm.getM() / (64 * warpgroups);
  if (reps < 1 || reps > 2 || (reps > 1 && (registersA || transA)))
    return gemm.emitOpError() << "atom " << atom.name << " takes 64 or 128 rows per warpgroup "
                                 "(128 only with A in shared memory, not transposed)";
  Value row0 = mul(arith::DivUIOp::create(b_, loc_, threadId_, cst(128)), cst(64 * reps));
  int64_t regs = n / 2, tilesN = n / 8;
  auto slot = [&](int64_t r, int64_t i) {
    int64_t j = i / 4, h = (i / 2) % 2, e = i % 2;
    return reps == 1 ? i : ((h * tilesN + j) * 2 + r) * 2 + e;
  };
  // One inline-assembly block holds the fence and every k-step's
  // instructions (the accumulators are its in/out operands once, not once
  // per k-step), then commits the group.
  int64_t steps = gemm.getK() / 16;
  int64_t perStep = registersA ? 5 : reps + 1;
  auto operandRef = [&](int64_t index) { return "$" + std::to_string(regs * reps + index); };
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.fence.sync.aligned;\n";
  for (int64_t ks = 0; ks < steps; ++ks) {
    int64_t first = perStep * ks;
    for (int64_t r = 0; r < reps; ++r) {
      std::string regList;
      for (int64_t i = 0; i < regs; ++i)
        regList += (i ? ", $" : "$") + std::to_string(r * regs + i);
      std::string aOperand = operandRef(first + r);
      if (registersA)
        aOperand = "{" + operandRef(first) + ", " + operandRef(first + 1) + ", " +
                   operandRef(first + 2) + ", " + operandRef(first + 3) + "}";
      text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type +
              "." + type + " {" + regList + "}, " + aOperand + ", " +
              operandRef(first + perStep - 1) + ", p, 1, 1, " +
              (registersA ? "" : transA ? "1, " : "0, ") + (transB ? "0" : "1") + ";\n";
    }
  }
  text += "wgmma.commit_group.sync.aligned;\n}";
  std::string constraints;
  for (int64_t r = 0; r < regs * reps; ++r)
    constraints += (r ? ",=f" : "=f");
  for (int64_t ks = 0; ks < steps; ++ks)
    constraints += registersA ? ",r,r,r,r,l" : reps == 1 ? ",l,l" : ",l,l,l";
  for (int64_t r = 0; r < regs * reps; ++r)
    constraints += "," + std::to_string(r);
  // A is 64 x 16 at (row0, k0): K-major unless transposed; or this warp's
  // registers of it. B is 16 x N at k0: MN-major unless transposed (then
  // N x 16, K-major).
  SmallVector<SmallVector<Value>> aDescriptors;
  if (!registersA && transA)
    aDescriptors.push_back(wgmmaDescriptors(a, cst(0), row0, true, steps));
  else if (!registersA)
    for (int64_t r = 0; r < reps; ++r)
      aDescriptors.push_back(
          wgmmaDescriptors(a, add(row0, cst(8 * r)), cst(0), false, steps, reps));
  SmallVector<Value> bDescriptors = wgmmaDescriptors(b, cst(0), cst(0), !transB, steps);
  SmallVector<Value> operands;
  for (int64_t ks = 0; ks < steps; ++ks) {
    if (registersA)
      llvm::append_range(operands, fragmentARegisters(a, 0, ks));
    for (const SmallVector<Value> &descriptors : aDescriptors)
      operands.push_back(descriptors[ks]);
    operands.push_back(bDescriptors[ks]);
  }
  // The accumulators stay SSA values through the gemm (one load and one
  // store of the fragment), fenced so LLVM orders other accesses around it.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t i = 0; i < regs; ++i)
      acc.push_back(memref::LoadOp::create(b_, loc_, c.memref, ValueRange{cst(slot(r, i))}));
  acc = fenceValues(acc);
  operands.append(acc.begin(), acc.end());
  acc = emitPtx(b_, loc_, text, constraints, operands, SmallVector<Type>(regs * reps, f32),
                true);
  int64_t wait = inAsyncMmaPipeline_ ? asyncMmaInFlight_ : 0;
  ptx("wgmma.wait_group.sync.aligned " + std::to_string(wait) + ";", "", {});
  if (wait == 0)
    acc = fenceValues(acc);
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t i = 0; i < regs; ++i)
      memref::StoreOp::create(b_, loc_, acc[r * regs + i], c.memref,
                              ValueRange{cst(slot(r, i))});
  std::pair<Value, int64_t> inFlight(gemm.getC(), regs * reps);
  if (wait != 0 && !llvm::is_contained(asyncAccumulators_, inFlight))
    asyncAccumulators_.push_back(inFlight);
  lastWasBarrier_ = false;
  return success();
}

} // namespace tessera::lowering
