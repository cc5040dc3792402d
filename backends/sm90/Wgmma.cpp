//===- Wgmma.cpp - Hopper's wgmma.mma_async atoms -------------------------===//
//
// This file defines the sm90 family's MMA atoms and their lowering:
// wgmma.mma_async.sync.aligned.m64nNkK (PTX ISA §9.7.15.5), B from a
// swizzled shared buffer through a matrix descriptor and A either through
// one too (_SS) or, for 16-bit types, from registers in m16n8k16's A layout
// (_RS). k16 for f16 (f32 or f16 accumulators) and bf16, k8 for TF32, k32
// for FP8 (e4m3, e5m2; f32 or f16 accumulators) and s8/u8 (s32).
// Architecture-specific: sm_90a.
//
//===----------------------------------------------------------------------===//

#include "backends/sm90/Wgmma.h"

#include <string>

#include "contract/NvvmOps.h"
#include "backends/sm80/MmaSync.h"
#include "lowering/TileQueries.h"
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
  /// Warpgroups stacked along M, each one m64nN instruction wide, or two
  /// (128 rows: each warp then holds two m16 tiles, see lowerGemm).
  bool tilesAccumulatorOverWarps() const override { return true; }
  /// Groups committed and waited for with wgmma.wait_group.
  bool keepsMmaInFlight() const override { return true; }
  std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                             int64_t threads, bool wholeRows,
                                             int64_t warpsM) const override {
    int64_t warpgroups = threads / 128;
    if ((m != 64 * warpgroups && m != 128 * warpgroups) || n % atom.n != 0 || n > atom.maxN ||
        (warpsM && warpsM != 4 * warpgroups))
      return std::nullopt;
    return WarpTiling{4 * warpgroups, 1, {}};
  }
  std::string whyIllegal(const MmaAtom &atom, tile::GemmOp gemm, int64_t threads) const override;
};

std::string WgmmaLowering::whyIllegal(const MmaAtom &atom, tile::GemmOp gemm,
                                      int64_t threads) const {
  int64_t warpgroups = threads / 128;
  if (gemm.getM() != 64 * warpgroups && gemm.getM() != 128 * warpgroups)
    return atom.name + " needs 64 or 128 rows of the tile per warpgroup (tile M " +
           std::to_string(gemm.getM()) + ", " + std::to_string(warpgroups) + " warpgroups)";
  if (gemm.getM() == 128 * warpgroups && gemm.getTransposeA())
    return atom.name + " takes 128 rows per warpgroup only with A not transposed (tile M " +
           std::to_string(gemm.getM()) + ", " + std::to_string(warpgroups) + " warpgroups)";
  if (gemm.getN() > atom.maxN)
    return atom.name + " takes N up to " + std::to_string(atom.maxN) + " (tile N " +
           std::to_string(gemm.getN()) + ")";
  // Descriptors describe swizzled 32-, 64- or 128-byte rows.
  for (Value operand : {gemm.getA(), gemm.getB()}) {
    auto type = cast<tile::BufferType>(operand.getType());
    if (type.isShared() && getSharedSwizzle(type).rowBytes == 0)
      return atom.name + " needs shared rows of a multiple of 32 bytes (" +
             std::to_string(type.getShape()[1] * tile::getElementBytes(type.getElementType())) +
             " here)";
  }
  return "";
}

} // namespace

SmallVector<Value> sharedMatrixDescriptors(GemmLoweringContext &ctx, const BufferInfo &buffer,
                                           Value row, Value col, bool mnMajor, int64_t steps,
                                           int64_t groupStride, uint64_t extraHighBits) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  // Bits 0-13: start address >> 4; 16-29: leading byte offset >> 4; 32-45:
  // stride byte offset >> 4; 62-63: swizzle (1: 128 B, 2: 64 B, 3: 32 B).
  // K-major: 8-row groups are 8 rows apart (stride); the leading offset is
  // unused. MN-major: 8-row groups along K likewise; panels along M or N
  // are the leading offset apart.
  const SharedSwizzle &swizzle = buffer.swizzle;
  int64_t rows = buffer.type.getShape()[0];
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
      builder.getIntegerAttr(i64, int64_t((uint64_t((stride >> 4) & 0x3FFF) << 32) |
                                          (uint64_t(mode) << 62) | extraHighBits)));
  SmallVector<Value> descriptors;
  for (int64_t ks = 0; ks < steps; ++ks) {
    // A k-step along K: 16 whole rows of an MN-major tile (rows rowBytes
    // apart); 32 bytes within a K-major tile's swizzled rows (the hardware
    // swizzles the addresses it forms), panels rows x rowBytes apart.
    int64_t bytes = 32 * ks;
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

namespace {

/// One gemm's wgmma instructions: shape, types and operand forms.
struct WgmmaForm {
  int64_t n = 8, reps = 1, kStep = 16, steps = 1;
  bool registersA = false, transA = false, transB = false;
  /// PTX types: "f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"; and the
  /// accumulator's: "f32", "f16", "s32".
  std::string type, acc;
};

/// The inline assembly of one gemm: the fence, every k-step's instructions
/// (the accumulators are in/out operands once, not once per k-step), the
/// commit; and its constraints. Operands: the accumulator registers, then
/// per k-step A (a descriptor per instruction, or four registers) and B's
/// descriptor, then the accumulators again (tied).
void wgmmaText(const WgmmaForm &form, std::string &text, std::string &constraints) {
  int64_t elements = form.n / 2;
  int64_t regs = form.acc == "f16" ? elements / 2 : elements;
  int64_t perStep = (form.registersA ? 4 : 1) * form.reps + 1;
  bool sixteenBit = form.type == "f16" || form.type == "bf16";
  auto operandRef = [&](int64_t index) { return "$" + std::to_string(regs * form.reps + index); };
  text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.fence.sync.aligned;\n";
  for (int64_t ks = 0; ks < form.steps; ++ks) {
    int64_t first = perStep * ks;
    for (int64_t r = 0; r < form.reps; ++r) {
      std::string regList;
      for (int64_t i = 0; i < regs; ++i)
        regList += (i ? ", $" : "$") + std::to_string(r * regs + i);
      std::string aOperand = operandRef(first + r);
      if (form.registersA)
        aOperand = "{" + operandRef(first + 4 * r) + ", " + operandRef(first + 4 * r + 1) +
                   ", " + operandRef(first + 4 * r + 2) + ", " + operandRef(first + 4 * r + 3) +
                   "}";
      // scale-d p; imm-scale-a/b 1 (floats); imm-trans-a/b (16-bit only;
      // none for A in registers).
      std::string tail = form.acc == "s32" ? "" : ", 1, 1";
      if (sixteenBit)
        tail += std::string(form.registersA ? "" : form.transA ? ", 1" : ", 0") +
                (form.transB ? ", 0" : ", 1");
      text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(form.n) + "k" +
              std::to_string(form.kStep) + "." + form.acc + "." + form.type + "." + form.type +
              " {" + regList + "}, " + aOperand + ", " + operandRef(first + perStep - 1) + ", p" +
              tail + ";\n";
    }
  }
  text += "wgmma.commit_group.sync.aligned;\n}";
  std::string out = form.acc == "f32" ? "f" : "r";
  constraints.clear();
  for (int64_t r = 0; r < regs * form.reps; ++r)
    constraints += (r ? ",=" : "=") + out;
  for (int64_t ks = 0; ks < form.steps; ++ks)
    for (int64_t r = 0; r <= form.reps; ++r)
      constraints += r == form.reps ? ",l" : form.registersA ? ",r,r,r,r" : ",l";
  for (int64_t r = 0; r < regs * form.reps; ++r)
    constraints += "," + std::to_string(r);
}

/// Instruction r's A registers at k-step ks when a warpgroup holds 128
/// rows (two m64 instructions whose rows interleave in 8-row groups, see
/// lowerGemm): the fragment's m16 tiles 0 and 1 of the warp take the place
/// of the instruction's row halves, each at its own row half r; registers
/// as m16n8k16's A (PTX ISA §9.7.15.5.1.1.2): rows (tile 0, tile 1) by
/// k halves. The accumulator of such a gemm has this layout too, so an A
/// cast from it stays in each thread's registers.
static SmallVector<Value> interleavedARegisters(GemmLoweringContext &ctx, const BufferInfo &a,
                                                int64_t r, int64_t ks) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  int64_t tiles = a.type.getShape()[1] / 8;
  SmallVector<Value> regs;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t mi = 0; mi < 2; ++mi) {
      int64_t slot = (mi * tiles + 2 * ks + half) * 4 + 2 * r;
      SmallVector<Value> pair;
      for (int64_t e = 0; e < 2; ++e)
        pair.push_back(
            memref::LoadOp::create(builder, loc, a.memref, ValueRange{ctx.cst(slot + e)}));
      regs.push_back(LLVM::BitcastOp::create(builder, loc, builder.getI32Type(),
                                             ctx.packVector(pair)));
    }
  return regs;
}

LogicalResult WgmmaLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                       const MmaAtom &atom) const {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  // Each warp's share of the m64nN accumulator is a column of m16n8 tiles.
  FailureOr<GemmBuffers> buffers = getGemmBuffers(ctx, gemm, atom);
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
  if (reps < 1 || reps > 2 || (reps > 1 && transA))
    return gemm.emitOpError() << "atom " << atom.name
                              << " takes 64 or 128 rows per warpgroup (128 only with A not "
                                 "transposed)";
  Value row0 = ctx.mul(arith::DivUIOp::create(builder, loc, ctx.threadId(), ctx.cst(128)),
                       ctx.cst(64 * reps));
  // The operand and accumulator types: 16-bit inputs take k16 steps and
  // transpose flags; TF32 (k8), FP8 and 8-bit integers (k32) are K-major
  // only. f16 accumulators travel as packed pairs, s32 as b32 registers.
  Type elt = a.type.getElementType(), accElt = c.type.getElementType();
  WgmmaForm form;
  form.n = n;
  form.reps = reps;
  form.registersA = registersA;
  form.transA = transA;
  form.transB = transB;
  form.type = elt.isBF16()                            ? "bf16"
              : elt.isF16()                           ? "f16"
              : elt.isF32()                           ? "tf32"
              : isa<Float8E4M3FNType>(elt)            ? "e4m3"
              : isa<Float8E5M2Type>(elt)              ? "e5m2"
              : elt.isUnsignedInteger(8)              ? "u8"
                                                      : "s8";
  form.acc = accElt.isF16() ? "f16" : accElt.isSignlessInteger(32) ? "s32" : "f32";
  form.kStep = 32 / tile::getElementBytes(elt);
  form.steps = gemm.getK() / form.kStep;
  int64_t elements = n / 2, tilesN = n / 8;
  int64_t regs = form.acc == "f16" ? elements / 2 : elements;
  auto slot = [&](int64_t r, int64_t i) {
    int64_t j = i / 4, h = (i / 2) % 2, e = i % 2;
    return reps == 1 ? i : ((h * tilesN + j) * 2 + r) * 2 + e;
  };
  int64_t steps = form.steps;
  std::string text, constraints;
  wgmmaText(form, text, constraints);
  // A is 64 x 16 at (row0, k0): K-major unless transposed; or this warp's
  // registers of it. B is 16 x N at k0: MN-major unless transposed (then
  // N x 16, K-major).
  SmallVector<SmallVector<Value>> aDescriptors;
  if (!registersA && transA)
    aDescriptors.push_back(sharedMatrixDescriptors(ctx, a, ctx.cst(0), row0, true, steps));
  else if (!registersA)
    for (int64_t r = 0; r < reps; ++r)
      aDescriptors.push_back(sharedMatrixDescriptors(ctx, a, ctx.add(row0, ctx.cst(8 * r)),
                                                     ctx.cst(0), false, steps, reps));
  SmallVector<Value> bDescriptors =
      sharedMatrixDescriptors(ctx, b, ctx.cst(0), ctx.cst(0), !transB, steps);
  SmallVector<Value> operands;
  for (int64_t ks = 0; ks < steps; ++ks) {
    for (int64_t r = 0; registersA && r < reps; ++r)
      llvm::append_range(operands, reps == 1 ? fragmentARegisters(ctx, a, 0, ks)
                                             : interleavedARegisters(ctx, a, r, ks));
    for (const SmallVector<Value> &descriptors : aDescriptors)
      operands.push_back(descriptors[ks]);
    operands.push_back(bDescriptors[ks]);
  }
  // The accumulators stay SSA values through the gemm (one load and one
  // store of the fragment), fenced so LLVM orders other accesses around it.
  // f16 accumulators: element pairs (2 i, 2 i + 1) share register i.
  bool packed = form.acc == "f16";
  Type regType = form.acc == "f32" ? Type(builder.getF32Type()) : Type(builder.getI32Type());
  SmallVector<Value> acc;
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t i = 0; i < elements; i += packed ? 2 : 1) {
      auto element = [&](int64_t e) -> Value {
        return memref::LoadOp::create(builder, loc, c.memref, ValueRange{ctx.cst(slot(r, e))});
      };
      if (!packed)
        acc.push_back(element(i));
      else
        acc.push_back(LLVM::BitcastOp::create(builder, loc, regType,
                                              ctx.packVector({element(i), element(i + 1)})));
    }
  acc = fenceValues(builder, loc, acc);
  operands.append(acc.begin(), acc.end());
  acc = emitPtx(builder, loc, text, constraints, operands,
                SmallVector<Type>(regs * reps, regType), true);
  int64_t wait = ctx.inAsyncMmaPipeline() ? ctx.asyncMmaInFlight() : 0;
  if (wait != kMmaWaitByStrategy)
    wgmmaWaitGroup(builder, loc, wait);
  if (wait == 0)
    acc = fenceValues(builder, loc, acc);
  Type half2 = VectorType::get({2}, builder.getF16Type());
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t i = 0; i < regs; ++i) {
      Value reg = acc[r * regs + i];
      SmallVector<Value> values = {reg};
      if (packed)
        values = ctx.unpackVector(LLVM::BitcastOp::create(builder, loc, half2, reg));
      for (auto [e, value] : llvm::enumerate(values))
        memref::StoreOp::create(builder, loc, value, c.memref,
                                ValueRange{ctx.cst(slot(r, i * values.size() + e))});
    }
  if (wait != 0)
    ctx.addAsyncAccumulator(gemm.getC(), elements * reps);
  // wgmma reads its shared operands and writes only registers.
  ctx.noteSharedRead();
  return success();
}

} // namespace
} // namespace lowering

const std::vector<MmaAtom> &getSm90WgmmaAtoms() {
  static const lowering::WgmmaLowering lowering;
  static const auto *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {"SM90_64xNx16_F32F16F16F32_SS", 64, 8, 16, {"f16"}, 128},
        {"SM90_64xNx16_F32BF16BF16F32_SS", 64, 8, 16, {"bf16"}, 128},
        {"SM90_64xNx16_F32F16F16F32_RS", 64, 8, 16, {"f16"}, 128},
        {"SM90_64xNx16_F32BF16BF16F32_RS", 64, 8, 16, {"bf16"}, 128},
        {"SM90_64xNx16_F16F16F16F16_SS", 64, 8, 16, {"f16"}, 128},
        {"SM90_64xNx16_F16F16F16F16_RS", 64, 8, 16, {"f16"}, 128},
        {"SM90_64xNx32_F32E4M3E4M3F32_SS", 64, 8, 32, {"e4m3"}, 128},
        {"SM90_64xNx32_F32E5M2E5M2F32_SS", 64, 8, 32, {"e5m2"}, 128},
        {"SM90_64xNx32_F16E4M3E4M3F16_SS", 64, 8, 32, {"e4m3"}, 128},
        {"SM90_64xNx32_F16E5M2E5M2F16_SS", 64, 8, 32, {"e5m2"}, 128},
        {"SM90_64xNx8_F32TF32TF32F32_SS", 64, 8, 8, {"tf32"}, 128},
        // Integer wgmma takes N of 8, 16, 24 and multiples of 16 to 256.
        {"SM90_64xNx32_S32S8S8S32_SS", 64, 16, 32, {"s8"}, 128},
        {"SM90_64xNx32_S32U8U8S32_SS", 64, 16, 32, {"u8"}, 128},
    };
    for (MmaAtom &atom : *list) {
      atom.maxN = 256;
      atom.readsSharedAsync = true;
      llvm::StringRef name = atom.name;
      // _RS: A from registers (each warp its 16 rows in the m16n8k16 A
      // layout), B through a descriptor.
      bool rs = name.ends_with("_RS");
      atom.aFromShared = !rs;
      atom.aFromRegisters = rs;
      // Only 16-bit operands may be MN-major (the instruction's transpose
      // flags); the others are read K-major.
      atom.kMajorOnly = atom.k != 16;
      if (name.contains("F16F16F16F16") || name.starts_with("SM90_64xNx32_F16"))
        atom.accumulatorTypes = {"f16"};
      else if (name.contains("S32"))
        atom.accumulatorTypes = {"s32"};
      atom.lowering = &lowering;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
