//===- Tcgen05Mma.cpp - Blackwell's tcgen05.mma atoms ---------------------===//
//
// This file defines the sm100 family's MMA atoms and their lowering:
// tcgen05.mma.cta_group::1 (PTX ISA §9.7.16.10.9), issued by one thread,
// with A and B in swizzled shared memory (matrix descriptors, §9.7.16.4.1:
// wgmma's fields plus the version 1 at bit 46; the swizzle codes at bits
// 61-63, 2/4/6 for 128/64/32 bytes, are wgmma's 1/2/3 at bits 62-63) and the
// M = 128 accumulator in tensor memory: row i in TMEM lane i, column j in
// the j-th column of the accumulator's allocation (§9.7.16.2.3, layout D).
//
// Between gemms the accumulator is a fragment in registers, in the layout
// tcgen05.ld's 32x32b shape gives (§9.7.16.8.3): warp w of the warpgroup
// reads TMEM lanes 32 w .. 32 w + 31, one row per lane, each register one
// column, so `#tile.mma_layout<m = 32, n = 4, warps_m = 4, warps_n = 1,
// lanes = [r1, r2, r4, r8, r16], registers = [c1, c2]>`. Epilogues,
// reductions and tile.parallel loops read it like any accumulator. Each gemm
// stores the fragment into tensor memory (tcgen05.st), issues its k-steps
// and commits them to an mbarrier, waits, and loads the result back
// (tcgen05.ld). The block allocates the columns of all its accumulators
// once, at its start, and frees them at its end.
//
// In a kernel the CTA-pair strategy runs (CtaPair.h), every tcgen05
// instruction names .cta_group::2: the even-ranked block of the pair issues
// MMAs of M = 256 whose rows 128 .. 255 accumulate in its peer's tensor
// memory, commits them to the barriers of both blocks, and starts only once
// both have stored their accumulator rows.
//
// Compiled and assembled in CI (ptxas for sm_100a), never executed here.
//
//===----------------------------------------------------------------------===//

#include "backends/sm100/Tcgen05Mma.h"

#include <string>

#include "backends/sm100/CtaPair.h"
#include "backends/sm90/Wgmma.h"
#include "contract/AtomLowering.h"
#include "contract/NvvmOps.h"
#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;

/// The accumulator fragment's layout: a row per lane (tcgen05.ld 32x32b),
/// four columns per step.
const AccumulatorStep kRowPerLaneStep{32, 4, {1, 2, 4, 8, 16}, {-1, -2}};

/// Tensor memory has 512 columns of 128 lanes x 32 bits; an allocation is a
/// power of two of at least 32 columns (§9.7.16.7.1).
constexpr int64_t kTensorMemoryColumns = 512;
constexpr int64_t kMinAllocationColumns = 32;

/// The address space of tensor memory in NVPTX (LLVM_PointerTensor).
constexpr unsigned kTensorAddressSpace = 6;
constexpr unsigned kSharedAddressSpace = 3;

/// What the block sets up once for its tcgen05 gemms.
struct TensorMemory {
  /// The allocation's address (lane 0, its first column), i32.
  Value base;
  /// The mbarrier the MMAs commit to (32-bit shared address), and the
  /// parity of its phase the next wait expects (a per-thread i32 memref).
  Value mbarrier, phase;
  /// The CTA-pair form (CtaPair.h): the mbarrier on which both blocks of
  /// the pair say their accumulator rows are in tensor memory (the
  /// leader's counts), and whether this block is the leader (i1).
  bool pair = false;
  Value stored, leader;
};

/// Every tcgen05 instruction of a kernel names the same CTA group.
NVVM::CTAGroupKindAttr ctaGroup(OpBuilder &b, bool pair) {
  return NVVM::CTAGroupKindAttr::get(b.getContext(),
                                     pair ? NVVM::CTAGroupKind::CTA_2 : NVVM::CTAGroupKind::CTA_1);
}

/// The tensor-memory columns of the kernel's accumulators in this layout
/// (each f32 column one TMEM column, each accumulator once), and the first
/// column of `gemm`'s.
std::pair<int64_t, int64_t> accumulatorColumns(tile::GemmOp gemm) {
  SmallVector<Value> seen;
  int64_t total = 0, first = 0;
  gemm->getParentOfType<tile::KernelOp>().walk([&](tile::GemmOp other) {
    Value c = other.getC();
    auto alloc = c.getDefiningOp<tile::AllocFragmentOp>();
    if (!alloc || !kRowPerLaneStep.matches(alloc.getMmaLayoutAttr()) || llvm::is_contained(seen, c))
      return;
    seen.push_back(c);
    if (c == gemm.getC())
      first = total;
    total += cast<tile::BufferType>(c.getType()).getShape()[1];
  });
  return {total, first};
}

Value toPointer(OpBuilder &b, Location loc, Value address, unsigned space) {
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), space),
                                  address);
}

Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

/// Emits `body` under scf.if `condition`.
void ifThen(OpBuilder &b, Location loc, Value condition, llvm::function_ref<void()> body) {
  auto guard = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(guard.thenBlock());
  body();
}

Value isThreadZero(GemmLoweringContext &ctx) {
  return arith::CmpIOp::create(ctx.builder(), ctx.loc(), arith::CmpIPredicate::eq, ctx.threadId(),
                               ctx.cst(0));
}

Value isWarpZero(GemmLoweringContext &ctx) {
  return arith::CmpIOp::create(ctx.builder(), ctx.loc(), arith::CmpIPredicate::eq, ctx.warpId(),
                               ctx.cst(0));
}

/// tcgen05.fence::before_thread_sync, `barrier`, and
/// tcgen05.fence::after_thread_sync: what one thread's tcgen05 operations
/// did is ordered before what another's do after.
void syncTensorMemory(OpBuilder &b, Location loc, llvm::function_ref<void()> barrier) {
  NVVM::Tcgen05FenceOp::create(b, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  barrier();
  NVVM::Tcgen05FenceOp::create(b, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
}

/// A barrier of the whole block, where the kernel's own barriers are not
/// yet (or no longer) tracked: at its start and end.
void blockBarrier(OpBuilder &b, Location loc) { gpu::BarrierOp::create(b, loc); }

/// The block's tensor memory: allocated by warp 0 at the kernel's start
/// (its address written to shared memory, read by every thread), with the
/// mbarrier the gemms' MMAs commit to; freed by warp 0 at the block's end.
FailureOr<TensorMemory> blockTensorMemory(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                          int64_t columns) {
  // The pair: warp 0 of each block allocates (the same columns in both),
  // and the blocks meet on the cluster's barrier before freeing them.
  bool pair = sm100::runsAsCtaPair(gemm->getParentOfType<tile::KernelOp>());
  auto setUp = [&](Value shared) -> SmallVector<Value> {
    OpBuilder &b = ctx.builder();
    Location loc = ctx.loc();
    // The phase counter first, while the code is still in the entry block
    // (an alloca there becomes a register).
    Value phase = memref::AllocaOp::create(b, loc, MemRefType::get({1}, b.getI32Type()));
    memref::StoreOp::create(b, loc, i32Constant(b, loc, 0), phase, ValueRange{ctx.cst(0)});
    Value slot = shared;
    Value mbarrier = arith::AddIOp::create(b, loc, shared, i32Constant(b, loc, 8));
    Value stored = arith::AddIOp::create(b, loc, shared, i32Constant(b, loc, 16));
    // The pair: the peer is running before warp 0 allocates with it.
    if (pair) {
      clusterArrive(b, loc);
      clusterWait(b, loc);
    }
    ifThen(b, loc, isWarpZero(ctx), [&] {
      NVVM::Tcgen05AllocOp::create(b, loc, toPointer(b, loc, slot, kSharedAddressSpace),
                                   i32Constant(b, loc, columns), ctaGroup(b, pair));
      NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc, ctaGroup(b, pair));
    });
    ifThen(b, loc, isThreadZero(ctx), [&] {
      NVVM::MBarrierInitOp::create(b, loc, toPointer(b, loc, mbarrier, kSharedAddressSpace),
                                   i32Constant(b, loc, 1), /*predicate=*/Value());
      if (pair)
        NVVM::MBarrierInitOp::create(b, loc, toPointer(b, loc, stored, kSharedAddressSpace),
                                     i32Constant(b, loc, 2), /*predicate=*/Value());
      fenceMbarrierInit(b, loc);
    });
    // The pair: the strategy's cluster barrier, after this, makes the
    // barriers ready for the peer.
    syncTensorMemory(b, loc, [&] { blockBarrier(b, loc); });
    Value base =
        LLVM::LoadOp::create(b, loc, b.getI32Type(), toPointer(b, loc, slot, kSharedAddressSpace));
    return {base, mbarrier, phase, slot, stored};
  };
  auto tearDown = [&ctx, columns, pair](ArrayRef<Value> values) {
    OpBuilder &b = ctx.builder();
    Location loc = ctx.loc();
    // The kernel's own barrier: under warp specialization the producer
    // warps have left, and the consumers meet on their named barrier. The
    // pair's consumers meet on the cluster's (which waits for the threads
    // that have not exited): the leader's MMAs wrote the peer's columns.
    ctx.noteSharedAccess();
    syncTensorMemory(b, loc, [&] {
      if (!pair) {
        ctx.barrier();
        return;
      }
      clusterArrive(b, loc);
      clusterWait(b, loc);
    });
    // Inline PTX: a read of %tid.x LLVM keeps here. The NVVM op reads no
    // memory, so LLVM would merge it with the kernel's first read and keep
    // the warp test in a register through the whole kernel.
    Value tid = emitPtx(b, loc, "mov.u32 $0, %tid.x;", "=r", {}, {b.getI32Type()},
                        /*sideEffects=*/true)[0];
    Value warpZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, i32Constant(b, loc, 32));
    ifThen(b, loc, warpZero, [&] {
      // The address read again from shared memory: kept in a register, it
      // would be live through the whole kernel.
      Value base = LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                        toPointer(b, loc, values[3], kSharedAddressSpace));
      NVVM::Tcgen05DeallocOp::create(b, loc, toPointer(b, loc, base, kTensorAddressSpace),
                                     i32Constant(b, loc, columns), ctaGroup(b, pair));
    });
  };
  FailureOr<SmallVector<Value>> values =
      ctx.blockResource(gemm, "tensor memory", pair ? 24 : 16, setUp, tearDown);
  if (failed(values))
    return failure();
  TensorMemory memory{(*values)[0], (*values)[1], (*values)[2]};
  if (pair) {
    OpBuilder &b = ctx.builder();
    Location loc = ctx.loc();
    memory.pair = true;
    memory.stored = (*values)[4];
    memory.leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, clusterCtaRank(b, loc),
                                          i32Constant(b, loc, 0));
  }
  return memory;
}

/// The pair leader's copy of the mbarrier at 32-bit shared address
/// `barrier` (a shared::cluster address).
Value leaderBarrier(OpBuilder &b, Location loc, Value barrier) {
  return mapaShared(b, loc, barrier, i32Constant(b, loc, 0));
}

/// The 32-bit instruction descriptor (§9.7.16.4.2): D f32 (bits 4-5 = 1),
/// A and B formats (bits 7-9, 10-12), MN-major flags (bits 15, 16), N >> 3
/// (bits 17-22), M >> 4 (bits 24-28).
int64_t instructionDescriptor(int64_t format, bool mnMajorA, bool mnMajorB, int64_t m, int64_t n) {
  return (int64_t(1) << 4) | (format << 7) | (format << 10) | (int64_t(mnMajorA) << 15) |
         (int64_t(mnMajorB) << 16) | ((n >> 3) << 17) | ((m >> 4) << 24);
}

/// The accumulator registers in `columns`-column pieces, moved between this
/// thread's fragment slots and its TMEM lane (`address`: the lane and the
/// accumulator's first column): stores (tcgen05.st) or loads (tcgen05.ld),
/// 32x32b, then the wait.
void moveAccumulator(GemmLoweringContext &ctx, const BufferInfo &c, Value address, int64_t n,
                     bool store) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto shape =
      NVVM::Tcgen05LdStShapeAttr::get(b.getContext(), NVVM::Tcgen05LdStShape::SHAPE_32X32B);
  for (int64_t c0 = 0; c0 < n; c0 += 32) {
    int64_t count = std::min<int64_t>(32, n - c0);
    Value at = toPointer(b, loc, arith::AddIOp::create(b, loc, address, i32Constant(b, loc, c0)),
                         kTensorAddressSpace);
    auto vectorType = VectorType::get({count}, i32);
    if (store) {
      SmallVector<Value> words;
      for (int64_t j = 0; j < count; ++j)
        words.push_back(LLVM::BitcastOp::create(
            b, loc, i32, memref::LoadOp::create(b, loc, c.memref, ValueRange{ctx.cst(c0 + j)})));
      NVVM::Tcgen05StOp::create(b, loc, /*unpack=*/UnitAttr(), shape, at, ctx.packVector(words),
                                /*offset=*/Value());
      continue;
    }
    Value loaded = NVVM::Tcgen05LdOp::create(b, loc, vectorType, /*pack=*/UnitAttr(), shape, at,
                                             /*offset=*/Value());
    for (auto [j, word] : llvm::enumerate(ctx.unpackVector(loaded)))
      memref::StoreOp::create(b, loc, LLVM::BitcastOp::create(b, loc, f32, word), c.memref,
                              ValueRange{ctx.cst(c0 + int64_t(j))});
  }
  NVVM::Tcgen05WaitOp::create(b, loc,
                              store ? NVVM::Tcgen05WaitKind::STORE : NVVM::Tcgen05WaitKind::LOAD);
}

/// tcgen05.mma with M = 128 for one warpgroup: its accumulator a row per
/// lane (kRowPerLaneStep), A and B from swizzled shared memory.
class Tcgen05Lowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
  bool tilesAccumulatorOverWarps() const override { return true; }
  std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                             int64_t threads, bool wholeRows,
                                             int64_t warpsM) const override {
    if (m != atom.m || threads != 128 || n % atom.n != 0 || n > atom.maxN ||
        (warpsM && warpsM != 4))
      return std::nullopt;
    return WarpTiling{4, 1, kRowPerLaneStep};
  }
  std::string whyIllegal(const MmaAtom &atom, tile::GemmOp gemm, int64_t threads) const override;
  /// Tensor memory holds the accumulator through a warp-specialized loop.
  bool holdsAccumulatorAcrossLoop() const override { return true; }
  LogicalResult enterHeldAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                     const MmaAtom &atom) const override;
  LogicalResult leaveHeldAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                     const MmaAtom &atom) const override;
};

std::string Tcgen05Lowering::whyIllegal(const MmaAtom &atom, tile::GemmOp gemm,
                                        int64_t threads) const {
  // Warp w of the warpgroup reads TMEM lanes 32 (w mod 4) and up: one
  // warpgroup holds the 128 rows.
  if (threads != 128)
    return atom.name + " needs one warpgroup (128 threads), got " + std::to_string(threads);
  if (gemm.getM() != atom.m)
    return atom.name + " computes 128 rows (tile M " + std::to_string(gemm.getM()) + ")";
  if (gemm.getN() > atom.maxN)
    return atom.name + " takes N up to " + std::to_string(atom.maxN) + " (tile N " +
           std::to_string(gemm.getN()) + ")";
  // Tensor memory is per block: the two tiles of a ping-pong kernel would
  // accumulate into the same columns.
  auto kernel = gemm->getParentOfType<tile::KernelOp>();
  if (kernel.getPingpong())
    return atom.name + " keeps one accumulator per block in tensor memory; a ping-pong kernel "
                       "runs two tiles per block";
  // No atom reads A from registers in the row-per-lane layout: a kernel
  // whose gemms pass an accumulator on as A in registers (attention's P V)
  // keeps the warp-level atoms for all its gemms.
  tile::GemmOp registersA;
  kernel.walk([&](tile::GemmOp other) {
    if (cast<tile::BufferType>(other.getA().getType()).isFragment())
      registersA = other;
  });
  if (registersA) {
    std::string where = "line ?";
    if (auto at = dyn_cast<FileLineColLoc>(registersA.getLoc()))
      where = "line " + std::to_string(at.getLine());
    return atom.name + " keeps its accumulator a row per lane, which no atom reads A from " +
           "registers in; the kernel's gemm at " + where + " reads A from registers";
  }
  for (Value operand : {gemm.getA(), gemm.getB()}) {
    auto type = cast<tile::BufferType>(operand.getType());
    if (getSharedSwizzle(type).rowBytes == 0)
      return atom.name + " needs shared rows of a multiple of 32 bytes (" +
             std::to_string(type.getShape()[1] * tile::getElementBytes(type.getElementType())) +
             " here)";
  }
  return "";
}

/// Where a gemm's accumulator lives in tensor memory.
struct AccumulatorPlace {
  TensorMemory memory;
  /// Its first column at lane 0, and at this thread's lane (bits 16-31 of
  /// an address: warp w reads and writes lanes 32 w .. 32 w + 31).
  Value start, threadLane;
};

FailureOr<AccumulatorPlace> placeAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                             const MmaAtom &atom) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto [columns, first] = accumulatorColumns(gemm);
  if (columns > kTensorMemoryColumns)
    return gemm.emitOpError() << "atom " << atom.name << ": the kernel's accumulators take "
                              << columns << " columns of tensor memory, over its "
                              << kTensorMemoryColumns;
  int64_t allocation = std::max<int64_t>(kMinAllocationColumns, llvm::PowerOf2Ceil(columns));
  FailureOr<TensorMemory> memory = blockTensorMemory(ctx, gemm, allocation);
  if (failed(memory))
    return failure();
  AccumulatorPlace place{*memory, {}, {}};
  place.start = arith::AddIOp::create(b, loc, memory->base, i32Constant(b, loc, first));
  Value warp = arith::IndexCastOp::create(b, loc, b.getI32Type(), ctx.warpId());
  Value lane = arith::ShLIOp::create(b, loc, warp, i32Constant(b, loc, 16 + 5));
  place.threadLane = arith::AddIOp::create(b, loc, place.start, lane);
  return place;
}

/// Every warp's rows of the fragment into tensor memory, then a barrier
/// before the issuing thread's MMAs read them.
void storeAccumulator(GemmLoweringContext &ctx, const BufferInfo &c, const AccumulatorPlace &place,
                      int64_t n) {
  moveAccumulator(ctx, c, place.threadLane, n, /*store=*/true);
  // The tensor-memory stores need the barrier even right after another.
  ctx.noteSharedAccess();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  const TensorMemory &memory = place.memory;
  if (!memory.pair) {
    syncTensorMemory(b, loc, [&] { ctx.barrier(); });
    return;
  }
  // The pair: thread 0 of each block, once its block's rows are stored,
  // arrives on the leader's barrier; the leader's threads wait for both
  // (the barrier's first phase: a grid-launched pair loop runs once).
  NVVM::Tcgen05FenceOp::create(b, loc, NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  ctx.barrier();
  ifThen(b, loc, isThreadZero(ctx), [&] {
    // Inline PTX: nvvm.mbarrier.arrive takes a 64-bit pointer and returns
    // the state.
    ctx.ptx("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0];", "r",
            {leaderBarrier(b, loc, memory.stored)});
  });
  ifThen(b, loc, memory.leader, [&] {
    mbarrierWaitParity(b, loc, memory.stored, i32Constant(b, loc, 0), /*clusterScope=*/true);
    NVVM::Tcgen05FenceOp::create(b, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  });
}

/// Every thread waits for the MMAs the issuing thread committed to the
/// block's mbarrier, then reads its rows back.
void loadAccumulator(GemmLoweringContext &ctx, const BufferInfo &c, const AccumulatorPlace &place,
                     int64_t n) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  const TensorMemory &memory = place.memory;
  Value phase = memref::LoadOp::create(b, loc, memory.phase, ValueRange{ctx.cst(0)});
  mbarrierWaitParity(b, loc, memory.mbarrier, phase);
  memref::StoreOp::create(b, loc, arith::XOrIOp::create(b, loc, phase, i32Constant(b, loc, 1)),
                          memory.phase, ValueRange{ctx.cst(0)});
  NVVM::Tcgen05FenceOp::create(b, loc, NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  moveAccumulator(ctx, c, place.threadLane, n, /*store=*/false);
  ctx.noteSharedAccess();
}

/// tcgen05.commit of the executing thread's MMAs to `barrier` (a 32-bit
/// shared address); the pair's leader commits to the barrier at the same
/// offset in both blocks.
void commitTo(OpBuilder &b, Location loc, Value barrier, bool pair) {
  Value both;
  if (pair)
    both = arith::ConstantIntOp::create(b, loc, b.getI16Type(), 0b11);
  NVVM::Tcgen05CommitOp::create(b, loc, toPointer(b, loc, barrier, kSharedAddressSpace), both,
                                ctaGroup(b, pair));
}

/// The thread that issues the block's MMAs: thread 0, and in the pair the
/// leader's alone.
Value isIssuer(GemmLoweringContext &ctx, const TensorMemory &memory) {
  Value first = isThreadZero(ctx);
  return memory.pair ? arith::AndIOp::create(ctx.builder(), ctx.loc(), first, memory.leader)
                     : first;
}

/// The k-steps of `gemm` issued by thread 0 into the accumulator at
/// `start`, then committed to `barrier`.
void issueMmas(GemmLoweringContext &ctx, tile::GemmOp gemm, const MmaAtom &atom,
               const BufferInfo &a, const BufferInfo &bb, const TensorMemory &memory, Value start,
               Value barrier) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  // A is 128 x K (K-major) or K x 128 when transposed; B is K x N (MN-major)
  // or N x K when transposed (K-major). kind::f16 steps 16 elements of K,
  // kind::f8f6f4 32: 32 bytes either way.
  Type elt = a.type.getElementType();
  bool eightBit = tile::getElementBytes(elt) == 1;
  bool mnMajorA = gemm.getTransposeA(), mnMajorB = !gemm.getTransposeB();
  int64_t kStep = eightBit ? 32 : 16, steps = gemm.getK() / kStep;
  // Formats: kind::f16 0 f16, 1 bf16; kind::f8f6f4 0 e4m3, 1 e5m2.
  int64_t format = elt.isBF16() || isa<Float8E5M2Type>(elt) ? 1 : 0;
  constexpr uint64_t kDescriptorVersion = uint64_t(1) << 46;
  SmallVector<Value> aDescriptors = sharedMatrixDescriptors(ctx, a, ctx.cst(0), ctx.cst(0),
                                                            mnMajorA, steps, 1, kDescriptorVersion);
  SmallVector<Value> bDescriptors = sharedMatrixDescriptors(ctx, bb, ctx.cst(0), ctx.cst(0),
                                                            mnMajorB, steps, 1, kDescriptorVersion);
  // The pair's MMA computes both blocks' rows: M = 256, each block's B
  // holding half of the N columns at the same offsets.
  int64_t m = memory.pair ? 2 * atom.m : atom.m;
  Value descriptor =
      i32Constant(b, loc, instructionDescriptor(format, mnMajorA, mnMajorB, m, gemm.getN()));
  auto kind = eightBit ? NVVM::Tcgen05MMAKind::F8F6F4 : NVVM::Tcgen05MMAKind::F16;
  ifThen(b, loc, isIssuer(ctx, memory), [&] {
    Value d = toPointer(b, loc, start, kTensorAddressSpace);
    Value accumulate = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    for (int64_t ks = 0; ks < steps; ++ks)
      NVVM::Tcgen05MMAOp::create(b, loc, NVVM::Tcgen05MMAKindAttr::get(b.getContext(), kind),
                                 ctaGroup(b, memory.pair), NVVM::Tcgen05MMACollectorOpAttr{},
                                 /*aShift=*/UnitAttr{}, d, aDescriptors[ks], bDescriptors[ks],
                                 descriptor, accumulate,
                                 /*scaleInputD=*/Value(), /*disableOutputLane=*/Value());
    commitTo(b, loc, barrier, memory.pair);
  });
}

/// A gemm's checked buffers and its accumulator's place in tensor memory.
struct PreparedGemm {
  GemmBuffers buffers;
  AccumulatorPlace place;
};

FailureOr<PreparedGemm> prepareGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                    const MmaAtom &atom) {
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom, kRowPerLaneStep);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b;
  if (ctx.threads() != 128 || a.swizzle.rowBytes == 0 || b.swizzle.rowBytes == 0 ||
      !a.type.isShared() || !b.type.isShared())
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs one warpgroup and swizzled shared operands laid out by "
                                 "tile-layout-inference";
  FailureOr<AccumulatorPlace> place = placeAccumulator(ctx, gemm, atom);
  if (failed(place))
    return failure();
  return PreparedGemm{*buffers, *place};
}

LogicalResult Tcgen05Lowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                         const MmaAtom &atom) const {
  FailureOr<PreparedGemm> prepared = prepareGemm(ctx, gemm, atom);
  if (failed(prepared))
    return failure();
  const BufferInfo &a = *prepared->buffers.a, &bb = *prepared->buffers.b,
                   &c = *prepared->buffers.c;
  const AccumulatorPlace &place = prepared->place;
  int64_t n = gemm.getN();
  // Held through the loop (holdsAccumulatorAcrossLoop): the accumulator is
  // in tensor memory already, and the MMAs release the iteration's stage
  // when they complete; nobody waits for them here. The issuing thread
  // waited for the stage's operands itself.
  if (ctx.accumulatorHeld(gemm.getC())) {
    Value release = ctx.mmaCompletionBarrier();
    if (!release)
      return gemm.emitOpError() << "atom " << atom.name
                                << ": the accumulator is held, but the loop names no mbarrier "
                                   "for its MMAs to signal";
    issueMmas(ctx, gemm, atom, a, bb, place.memory, place.start, release);
    return success();
  }
  if (place.memory.pair)
    return gemm.emitOpError() << "atom " << atom.name
                              << ": the CTA-pair form holds the accumulator through its loop";
  // Otherwise the gemm is whole: the fragment into tensor memory, the
  // MMAs (after the operands' generic-proxy writes), their completion, the
  // fragment back.
  if (!ctx.inAsyncMmaPipeline() || ctx.genericSharedWrites())
    ctx.fenceProxyAsync();
  storeAccumulator(ctx, c, place, n);
  issueMmas(ctx, gemm, atom, a, bb, place.memory, place.start, place.memory.mbarrier);
  loadAccumulator(ctx, c, place, n);
  return success();
}

LogicalResult Tcgen05Lowering::enterHeldAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                                    const MmaAtom &atom) const {
  FailureOr<PreparedGemm> prepared = prepareGemm(ctx, gemm, atom);
  if (failed(prepared))
    return failure();
  storeAccumulator(ctx, *prepared->buffers.c, prepared->place, gemm.getN());
  return success();
}

LogicalResult Tcgen05Lowering::leaveHeldAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                                    const MmaAtom &atom) const {
  FailureOr<PreparedGemm> prepared = prepareGemm(ctx, gemm, atom);
  if (failed(prepared))
    return failure();
  // A commit tracks every earlier MMA of the issuing thread: the last one
  // completes the loop's.
  OpBuilder &b = ctx.builder();
  const AccumulatorPlace &place = prepared->place;
  ifThen(b, ctx.loc(), isIssuer(ctx, place.memory),
         [&] { commitTo(b, ctx.loc(), place.memory.mbarrier, place.memory.pair); });
  loadAccumulator(ctx, *prepared->buffers.c, place, gemm.getN());
  return success();
}

const Tcgen05Lowering kTcgen05Lowering;

} // namespace
} // namespace lowering

bool sm100::isTcgen05Atom(const MmaAtom &atom) {
  return atom.lowering == &lowering::kTcgen05Lowering;
}

bool sm100::runsAsCtaPair(tile::KernelOp kernel) {
  bool pair = false;
  kernel.walk([&](tile::PipelinedOp loop) {
    if (auto schedule = loop->getAttrOfType<mlir::DictionaryAttr>(kScheduleAttr))
      if (auto name = schedule.getAs<mlir::StringAttr>("strategy"))
        pair |= name.getValue() == sm100::kCtaPairStrategy;
  });
  return pair;
}

const std::vector<MmaAtom> &getSm100Tcgen05Atoms() {
  const lowering::Tcgen05Lowering &lowering = lowering::kTcgen05Lowering;
  static const auto *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {"SM100_128xNx16_F32F16F16F32_SS", 128, 16, 16, {"f16"}, 128},
        {"SM100_128xNx16_F32BF16BF16F32_SS", 128, 16, 16, {"bf16"}, 128},
        {"SM100_128xNx32_F32E4M3E4M3F32_SS", 128, 16, 32, {"e4m3"}, 128},
        {"SM100_128xNx32_F32E5M2E5M2F32_SS", 128, 16, 32, {"e5m2"}, 128},
    };
    for (MmaAtom &atom : *list) {
      // kind::f16 and kind::f8f6f4 with M = 128 take N from 16 to 256 in
      // steps of 16 (§9.7.16.10.1).
      atom.maxN = 256;
      atom.readsSharedAsync = true;
      // 8-bit operands are read K-major, as on sm90.
      atom.kMajorOnly = atom.k != 16;
      atom.lowering = &lowering;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
