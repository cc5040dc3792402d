//===- MmaSync.cpp - Ampere's ldmatrix + mma.sync.m16n8k16 atoms ----------===//
//
// This file defines the sm80 family's MMA atoms and their lowering: each
// warp's tile of the accumulator as m16n8 tiles, computed by
// mma.sync.aligned.m16n8kK (PTX ISA §9.7.14.5.8) per k-step of 32 bytes
// (k16 for f16 and bf16, with f32 or, for f16, f16 accumulators; k8 for
// TF32; k32 for s8 and u8 with s32 accumulators), its operands loaded from
// swizzled shared buffers by ldmatrix.x4 (§9.7.14.5.15) or, for a 16-bit A,
// taken from a fragment in the A layout. Later backends (sm90) list the
// same atoms.
//
//===----------------------------------------------------------------------===//

#include "backends/sm80/MmaSync.h"

#include <string>

#include "contract/NvvmOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {

using namespace mlir;
using tile::MmaLayoutAttr;

namespace {

/// ldmatrix + mma.sync.m16n8k16 over a warp's m16n8 accumulator tiles.
class MmaSyncLowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
  bool tilesAccumulatorOverWarps() const override { return true; }
  std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                             int64_t threads, bool wholeRows,
                                             int64_t warpsM) const override {
    return chooseWarpGridTiling(atom, m, n, threads, wholeRows, {}, warpsM);
  }
  /// ldmatrix loads go before the loop's next copies (issueDeferredCopies).
  bool defersLoopCopies() const override { return true; }
  bool canPrefetchFragments() const override { return true; }
  MmaFragments loadFragments(GemmLoweringContext &ctx, tile::GemmOp gemm,
                             int64_t ks) const override;
};

} // namespace

MmaFragments MmaSyncLowering::loadFragments(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                            int64_t ks) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  const BufferInfo &a = ctx.buffer(gemm.getA()), &b = ctx.buffer(gemm.getB());
  MmaLayoutAttr mma = ctx.buffer(gemm.getC()).mma;
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  int64_t mt = gemm.getM() / mma.getWarpsM() / 16, nt = gemm.getN() / mma.getWarpsN() / 8;
  SmallVector<int64_t> shape = {gemm.getM(), gemm.getN()};
  Value warp = ctx.warpId(), lane = ctx.laneId();
  Value mat = arith::DivUIOp::create(builder, loc, lane, ctx.cst(8));
  Value within = arith::RemUIOp::create(builder, loc, lane, ctx.cst(8));
  Value matLow = arith::RemUIOp::create(builder, loc, mat, ctx.cst(2));
  Value matHigh = arith::DivUIOp::create(builder, loc, mat, ctx.cst(2));
  Value warpRow = ctx.warpTileRow(shape, mma, warp);
  Value warpCol = ctx.warpTileCol(shape, mma, warp);
  SmallVector<Type> four(4, builder.getI32Type());
  // ldmatrix moves 8 x 16-byte rows per matrix: `chunk` elements of a row;
  // a k-step is two chunks (32 bytes: k16 of f16, k8 of tf32, k32 of s8).
  int64_t chunk = 16 / tile::getElementBytes(a.type.getElementType());
  // ldmatrix (PTX ISA §9.7.14.5.15): four 8x8 b16 matrices, row addresses
  // from lanes 8i..8i+7 for matrix i. The thread's row and column within
  // an x4 load and the load's constant offset from them (so the loads of
  // one thread share address registers).
  auto ldmatrix = [&](const BufferInfo &buffer, Value row, Value col, int64_t rowShift,
                      int64_t colShift, bool trans) {
    // Inline PTX: nvvm.ldmatrix takes a shared pointer, 64-bit in NVPTX: a
    // cvt.u64.u32 of this 32-bit address before every load.
    std::string text = std::string("ldmatrix.sync.aligned.m8n8.x4") + (trans ? ".trans" : "") +
                       ".shared.b16 {$0, $1, $2, $3}, [$4];";
    return emitPtx(builder, loc, text, "=r,=r,=r,=r,r",
                   {ctx.sharedAddress32(buffer, {row, col}, {rowShift, colShift})}, four,
                   /*sideEffects=*/true);
  };
  int64_t k0 = ks * 2 * chunk;
  MmaFragments fragments;
  // A: one x4 load per 16-row atom tile (a0..a7 of mma.m16n8k16).
  for (int64_t mi = 0; mi < mt; ++mi) {
    if (a.type.isFragment())
      fragments.a.push_back(fragmentARegisters(ctx, a, mi, ks));
    else if (!transA)
      fragments.a.push_back(ldmatrix(a,
                                     ctx.add(warpRow, ctx.add(within, ctx.mul(matLow, ctx.cst(8)))),
                                     ctx.mul(matHigh, ctx.cst(chunk)), mi * 16, k0, false));
    else
      fragments.a.push_back(ldmatrix(a, ctx.add(within, ctx.mul(matHigh, ctx.cst(8))),
                                     ctx.add(warpRow, ctx.mul(matLow, ctx.cst(8))), k0, mi * 16,
                                     true));
  }
  // B: one x4 load per pair of 8-column atom tiles (b0..b3 of each).
  for (int64_t np = 0; np < nt / 2; ++np) {
    if (!transB)
      fragments.b.push_back(ldmatrix(b, ctx.add(within, ctx.mul(matLow, ctx.cst(8))),
                                     ctx.add(warpCol, ctx.mul(matHigh, ctx.cst(8))), k0, np * 16,
                                     true));
    else
      fragments.b.push_back(
          ldmatrix(b, ctx.add(warpCol, ctx.add(within, ctx.mul(matHigh, ctx.cst(8)))),
                   ctx.mul(matLow, ctx.cst(chunk)), np * 16, k0, false));
  }
  return fragments;
}

/// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (PTX
/// ISA §9.7.14.5.8, sm_89+): A four b32, B two, C four f32 (the s8 form's
/// registers); returns D.
static SmallVector<Value> mmaSyncFp8(OpBuilder &builder, Location loc, StringRef type,
                              ArrayRef<Value> operands) {
  // Inline PTX: MLIR 22's nvvm.mma.sync has no dense e4m3/e5m2 shape.
  std::string text = ("mma.sync.aligned.m16n8k32.row.col.f32." + type + "." + type +
                      ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
                      "{$10, $11, $12, $13};")
                         .str();
  return emitPtx(builder, loc, text, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", operands,
                 SmallVector<Type>(4, builder.getF32Type()), /*sideEffects=*/false);
}

LogicalResult MmaSyncLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                         const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  // The PTX types of the operands and the accumulator.
  Type elt = a.type.getElementType(), accElt = c.type.getElementType();
  std::string type = elt.isBF16()                ? "bf16"
                     : elt.isF32()               ? "tf32"
                     : elt.isUnsignedInteger(8)  ? "u8"
                     : elt.isSignlessInteger(8)  ? "s8"
                     : isa<Float8E4M3FNType>(elt) ? "e4m3"
                     : isa<Float8E5M2Type>(elt)  ? "e5m2"
                                                 : "f16";
  bool fp8 = type == "e4m3" || type == "e5m2";
  std::string accType = accElt.isF16() ? "f16" : accElt.isSignlessInteger(32) ? "s32" : "f32";
  int64_t kStep = 32 / tile::getElementBytes(elt);
  int64_t tm = gemm.getM() / mma.getWarpsM(), tn = gemm.getN() / mma.getWarpsN();
  int64_t mt = tm / 16, nt = tn / 8;
  Type f32 = builder.getF32Type();
  // A prefetching pipeline synchronizes before the last k-step instead.
  if (!ctx.fragmentPrefetch())
    ctx.barrier();
  // A in registers: its fragment has the accumulator's whole-row tiling,
  // so a 16 x 16 A tile is two adjacent m16n8 tiles of it: m16n8k16's
  // a0..a7 (PTX ISA §9.7.14.5.8) are their (row g, row g + 8) pairs.
  if (a.type.isFragment() && (a.mma != mma || mma.getWarpsN() != 1))
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its A fragment laid out by tile-layout-inference";
  // The accumulators stay SSA values through the gemm.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    acc.push_back(memref::LoadOp::create(builder, loc, c.memref, ValueRange{ctx.cst(r)}));
  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (PTX
  // ISA §9.7.14.5.8) through NVVM's intrinsic, which NVPTX prints as that
  // one instruction: its f16 form takes the packed registers as <2 x half>,
  // the bf16 form as i32.
  bool bf16 = type == "bf16";
  // The other types and accumulators: nvvm.mma.sync.
  bool typedOp = accType != "f32" || (type != "f16" && type != "bf16");
  StringRef mmaIntrinsic =
      bf16 ? "llvm.nvvm.mma.m16n8k16.row.col.bf16" : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
  Type half2 = VectorType::get({2}, builder.getF16Type());
  auto packed = [&](Value reg) -> Value {
    return (bf16 || typedOp) ? reg : LLVM::BitcastOp::create(builder, loc, half2, reg).getResult();
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
        ValueRange regs(operands);
        SmallVector<Value> d =
            fp8       ? mmaSyncFp8(builder, loc, type, operands)
            : typedOp ? mmaSync(builder, loc, 16, 8, kStep, type, accType, regs.take_front(4),
                                regs.slice(4, 2), regs.drop_front(6))
                      : callIntrinsic(builder, loc, mmaIntrinsic, operands,
                                      SmallVector<Type>(4, f32));
        std::copy(d.begin(), d.end(), acc.begin() + base);
      }
    }
  };
  // A pipelined loop's deferred copies go after the first fragment loads.
  auto issueDeferred = [&] { ctx.issueDeferredCopies(); };
  int64_t steps = gemm.getK() / kStep;
  if (!ctx.fragmentPrefetch()) {
    for (int64_t ks = 0; ks < steps; ++ks) {
      MmaFragments fragments = loadFragments(ctx, gemm, ks);
      if (ks == 0)
        issueDeferred();
      mmaStep(fragments);
    }
  } else {
    // Step 0's fragments came with the iteration (loaded before the last
    // step of the one before); each step loads the next one's, and the last
    // synchronizes and loads the next iteration's first (the strategy's
    // beforeLastStep), so neither waits on its loads.
    MmaFragments current = ctx.fragmentPrefetch()->current;
    for (int64_t ks = 0; ks < steps; ++ks) {
      // With checked copies beside, the copies first: only step 0's
      // fragments and the accumulators are live across their address
      // arithmetic (ptxas predicates both sides of the branch); else the
      // next step's loads first, their latency behind the copies.
      if (ks == 0 && ctx.fragmentPrefetch()->copiesFirst)
        issueDeferred();
      MmaFragments next;
      if (ks + 1 < steps)
        next = loadFragments(ctx, gemm, ks + 1);
      if (ks == 0)
        issueDeferred();
      if (ks + 1 == steps)
        ctx.fragmentPrefetch()->beforeLastStep();
      mmaStep(current);
      current = std::move(next);
    }
  }
  for (int64_t r = 0; r < mt * nt * 4; ++r)
    memref::StoreOp::create(builder, loc, acc[r], c.memref, ValueRange{ctx.cst(r)});
  ctx.noteSharedAccess();
  return success();
}

SmallVector<Value> fragmentARegisters(GemmLoweringContext &ctx, const BufferInfo &a, int64_t mi,
                                      int64_t ks) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  Type i32 = builder.getI32Type();
  int64_t tiles = a.type.getShape()[1] / 8;
  auto pack = [&](int64_t slot) {
    SmallVector<Value> pair;
    for (int64_t e = 0; e < 2; ++e)
      pair.push_back(memref::LoadOp::create(builder, loc, a.memref, ValueRange{ctx.cst(slot + e)}));
    return LLVM::BitcastOp::create(builder, loc, i32, ctx.packVector(pair)).getResult();
  };
  SmallVector<Value> regs;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t h = 0; h < 2; ++h)
      regs.push_back(pack((mi * tiles + 2 * ks + half) * 4 + 2 * h));
  return regs;
}

} // namespace lowering

const std::vector<MmaAtom> &getSm80MmaSyncAtoms() {
  static const lowering::MmaSyncLowering lowering;
  static const auto *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {"SM80_16x8x16_F32F16F16F32_TN", 16, 8, 16, {"f16"}, 32},
        {"SM80_16x8x16_F32BF16BF16F32_TN", 16, 8, 16, {"bf16"}, 32},
        {"SM80_16x8x16_F16F16F16F16_TN", 16, 8, 16, {"f16"}, 32},
        {"SM80_16x8x8_F32TF32TF32F32_TN", 16, 8, 8, {"tf32"}, 32},
        {"SM80_16x8x32_S32S8S8S32_TN", 16, 8, 32, {"s8"}, 32},
        {"SM80_16x8x32_S32U8U8S32_TN", 16, 8, 32, {"u8"}, 32},
    };
    (*list)[2].accumulatorTypes = {"f16"};
    (*list)[4].accumulatorTypes = (*list)[5].accumulatorTypes = {"s32"};
    for (MmaAtom &atom : *list) {
      // 16-bit inputs: A from ldmatrix on a shared buffer, or straight from
      // a fragment in its A layout; ldmatrix transposes them either way.
      // TF32 and 8-bit inputs: both K-major (ldmatrix transposes 16-bit
      // elements only), A from shared memory.
      bool sixteenBit = atom.k == 16;
      atom.aFromRegisters = sixteenBit;
      atom.kMajorOnly = !sixteenBit;
      atom.lowering = &lowering;
    }
    return list;
  }();
  return *atoms;
}

const std::vector<MmaAtom> &getSm89Fp8MmaAtoms() {
  static const auto *atoms = [] {
    // The same lowering as the other mma.sync atoms: FP8's registers are
    // s8's (ldmatrix moves 32 bytes of K per step), both operands K-major.
    const lowering::MmaAtomLowering *lowering = getSm80MmaSyncAtoms().front().lowering;
    auto *list = new std::vector<MmaAtom>{
        {"SM89_16x8x32_F32E4M3E4M3F32_TN", 16, 8, 32, {"e4m3"}, 32},
        {"SM89_16x8x32_F32E5M2E5M2F32_TN", 16, 8, 32, {"e5m2"}, 32},
    };
    for (MmaAtom &atom : *list) {
      atom.kMajorOnly = true;
      atom.lowering = lowering;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
