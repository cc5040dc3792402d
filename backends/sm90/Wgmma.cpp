//===- Wgmma.cpp - Hopper's wgmma.mma_async atoms -------------------------===//
//
// This file defines the sm90 family's MMA atoms and their lowering:
// wgmma.mma_async.sync.aligned.m64nNk16 (PTX ISA §9.7.15.5), B from a
// swizzled shared buffer through a matrix descriptor and A either through
// one too (_SS) or from registers in m16n8k16's A layout (_RS).
// Architecture-specific: sm_90a.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/Wgmma.h"

#include <string>

#include "backends/NvvmOps.h"
#include "backends/sm80/MmaSync.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;
using tile::MmaLayoutAttr;

/// A warpgroup's m64nN accumulator per instruction; 128 rows per
/// warpgroup as two instructions per k-step.
class WgmmaLowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
};

/// The 64-bit wgmma matrix descriptors of `steps` operand tiles of
/// `buffer`, the first starting at (row, col) (`row` a multiple of 8), each
/// next one 16 elements further along K: along the rows when `mnMajor` (the
/// buffer's rows run along K, its columns along M or N), along the columns
/// otherwise. `groupStride`: 8-row groups of a K-major operand this many
/// groups apart (2 interleaves two m64 instructions' rows, see lowerGemm).
/// Only the first is computed in full; the others add their constant byte
/// offset to its start address.
SmallVector<Value> wgmmaDescriptors(GemmLoweringContext &ctx, const BufferInfo &buffer, Value row,
                                    Value col, bool mnMajor, int64_t steps,
                                    int64_t groupStride = 1) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  // Bits 0-13: start address >> 4; 16-29: leading byte offset >> 4; 32-45:
  // stride byte offset >> 4; 62-63: swizzle (1: 128 B, 2: 64 B, 3: 32 B).
  // K-major: 8-row groups are 8 rows apart (stride); the leading offset is
  // unused. MN-major: 8-row groups along K likewise; panels along M or N
  // are the leading offset apart.
  const SharedSwizzle &swizzle = buffer.swizzle;
  int64_t rows = buffer.type.getShape()[0];
  int64_t element = tile::getElementBytes(buffer.type.getElementType());
  int64_t stride = 8 * swizzle.rowBytes * groupStride;
  int64_t leading = mnMajor ? rows * swizzle.rowBytes : 16;
  int64_t mode = swizzle.rowBytes == 128 ? 1 : swizzle.rowBytes == 64 ? 2 : 3;
  Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
  auto i32Constant = [&](int64_t v) { return arith::ConstantIntOp::create(builder, loc, i32, v); };
  // The low word: start address and leading offset. Shared addresses stay
  // below 2^18, so a later step's start (at most the tile's end) never
  // carries out of its 14 bits; the high word is a constant.
  Value address = ctx.sharedAddress32(buffer, {row, col});
  Value low = arith::OrIOp::create(
      builder, loc,
      arith::ShRUIOp::create(builder, loc,
                             arith::AndIOp::create(builder, loc, address, i32Constant(0x3FFFF)),
                             i32Constant(4)),
      i32Constant(((leading >> 4) & 0x3FFF) << 16));
  Value high = arith::ConstantOp::create(
      builder, loc,
      builder.getIntegerAttr(
          i64, int64_t((uint64_t((stride >> 4) & 0x3FFF) << 32) | (uint64_t(mode) << 62))));
  SmallVector<Value> descriptors;
  for (int64_t ks = 0; ks < steps; ++ks) {
    // 16 elements along K: whole 8-row groups of an MN-major tile (rows
    // rowBytes apart); within a K-major tile's swizzled rows (the hardware
    // swizzles the addresses it forms), panels rows x rowBytes apart.
    int64_t bytes = 16 * ks * element;
    int64_t offset =
        mnMajor ? 16 * ks * swizzle.rowBytes
                : bytes / swizzle.rowBytes * rows * swizzle.rowBytes + bytes % swizzle.rowBytes;
    Value stepLow = ks == 0 ? low
                            : arith::AddIOp::create(builder, loc, low, i32Constant(offset >> 4),
                                                    arith::IntegerOverflowFlags::nuw);
    descriptors.push_back(arith::OrIOp::create(
        builder, loc, arith::ExtUIOp::create(builder, loc, i64, stepLow), high));
  }
  return descriptors;
}

LogicalResult WgmmaLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                       const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  // Each warp's share of the m64nN accumulator is a column of m16n8 tiles.
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom, 16, 8);
  if (failed(buffers))
    return failure();
  const BufferInfo &a = *buffers->a, &b = *buffers->b, &c = *buffers->c;
  MmaLayoutAttr mma = c.mma;
  int64_t n = gemm.getN();
  bool registersA = a.type.isFragment();
  if (mma.getWarpsN() != 1 || mma.getWarpsM() * 32 != ctx.threads() ||
      (!registersA && a.swizzle.rowBytes == 0) || b.swizzle.rowBytes == 0 || !b.type.isShared() ||
      (registersA && a.mma != mma))
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its accumulator, A fragment and swizzled shared "
                                 "operands laid out by tile-layout-inference";
  bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
  std::string type = a.type.getElementType().isBF16() ? "bf16" : "f16";
  Type f32 = builder.getF32Type();
  if (!ctx.inAsyncMmaPipeline() || ctx.genericSharedWrites()) {
    // Shared writes so far went through the generic proxy.
    ctx.fenceProxyAsync();
    ctx.barrier();
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
  int64_t warpgroups = ctx.threads() / 128;
  int64_t reps = gemm.getM() / (64 * warpgroups);
  if (reps < 1 || reps > 2 || (reps > 1 && (registersA || transA)))
    return gemm.emitOpError() << "atom " << atom.name
                              << " takes 64 or 128 rows per warpgroup "
                                 "(128 only with A in shared memory, not transposed)";
  Value row0 = ctx.mul(arith::DivUIOp::create(builder, loc, ctx.threadId(), ctx.cst(128)),
                       ctx.cst(64 * reps));
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
  // Inline PTX: MLIR 22's nvvm.wgmma.mma_async takes its accumulators as
  // one struct per instruction, where one asm block here keeps them in
  // place across every k-step; the fence and commit go in the same block.
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
      text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." +
              type + " {" + regList + "}, " + aOperand + ", " + operandRef(first + perStep - 1) +
              ", p, 1, 1, " +
              (registersA ? ""
               : transA   ? "1, "
                          : "0, ") +
              (transB ? "0" : "1") + ";\n";
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
    aDescriptors.push_back(wgmmaDescriptors(ctx, a, ctx.cst(0), row0, true, steps));
  else if (!registersA)
    for (int64_t r = 0; r < reps; ++r)
      aDescriptors.push_back(
          wgmmaDescriptors(ctx, a, ctx.add(row0, ctx.cst(8 * r)), ctx.cst(0), false, steps, reps));
  SmallVector<Value> bDescriptors =
      wgmmaDescriptors(ctx, b, ctx.cst(0), ctx.cst(0), !transB, steps);
  SmallVector<Value> operands;
  for (int64_t ks = 0; ks < steps; ++ks) {
    if (registersA)
      llvm::append_range(operands, fragmentARegisters(ctx, a, 0, ks));
    for (const SmallVector<Value> &descriptors : aDescriptors)
      operands.push_back(descriptors[ks]);
    operands.push_back(bDescriptors[ks]);
  }
  // The accumulators stay SSA values through the gemm (one load and one
  // store of the fragment), fenced so LLVM orders other accesses around it.
  SmallVector<Value> acc;
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t i = 0; i < regs; ++i)
      acc.push_back(
          memref::LoadOp::create(builder, loc, c.memref, ValueRange{ctx.cst(slot(r, i))}));
  acc = fenceValues(builder, loc, acc);
  operands.append(acc.begin(), acc.end());
  acc =
      emitPtx(builder, loc, text, constraints, operands, SmallVector<Type>(regs * reps, f32), true);
  int64_t wait = ctx.inAsyncMmaPipeline() ? ctx.asyncMmaInFlight() : 0;
  wgmmaWaitGroup(builder, loc, wait);
  if (wait == 0)
    acc = fenceValues(builder, loc, acc);
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t i = 0; i < regs; ++i)
      memref::StoreOp::create(builder, loc, acc[r * regs + i], c.memref,
                              ValueRange{ctx.cst(slot(r, i))});
  if (wait != 0)
    ctx.addAsyncAccumulator(gemm.getC(), regs * reps);
  ctx.noteSharedAccess();
  return success();
}

} // namespace
} // namespace lowering

const std::vector<MmaAtom> &getSm90WgmmaAtoms() {
  static const lowering::WgmmaLowering lowering;
  static const auto *atoms = [] {
    constexpr MmaAtomKind kWgmma = MmaAtomKind::kWarpgroupMma;
    auto *list = new std::vector<MmaAtom>{
        {kWgmma, "SM90_64xNx16_F32F16F16F32_SS", 64, 8, 16, {"f16"}, 128},
        {kWgmma, "SM90_64xNx16_F32BF16BF16F32_SS", 64, 8, 16, {"bf16"}, 128},
        {kWgmma, "SM90_64xNx16_F32F16F16F32_RS", 64, 8, 16, {"f16"}, 128},
        {kWgmma, "SM90_64xNx16_F32BF16BF16F32_RS", 64, 8, 16, {"bf16"}, 128},
    };
    for (MmaAtom &atom : *list) {
      atom.maxN = 256;
      atom.readsSharedAsync = true;
      // _RS: A from registers (each warp its 16 rows in the m16n8k16 A
      // layout), B through a descriptor.
      bool rs = llvm::StringRef(atom.name).ends_with("_RS");
      atom.aFromShared = !rs;
      atom.aFromRegisters = rs;
      atom.lowering = &lowering;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
