//===- Dp4a.cpp - Pascal's dp4a atoms (sm_61, sm_62) ----------------------===//
//
// This file defines the sm60 family's integer atoms and their lowering:
// each thread computes its chunks of an i32 accumulator with one dp4a per
// element and four k (PTX ISA, integer arithmetic: dp4a; sm_61+), the
// typed nvvm.dot.accumulate.4way. Its operands are four bytes along K in
// one 32-bit register: a K-major operand (A as M x K, B as N x K) gives
// them with one aligned 4-byte shared load, the other form with four byte
// loads packed into the register.
//
//===----------------------------------------------------------------------===//

#include "backends/sm60/Dp4a.h"

#include "contract/AtomLowering.h"
#include "contract/NvvmOps.h"
#include "backends/common/SimtGemm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera {
namespace lowering {
namespace {

using namespace mlir;

/// The bytes of K one dp4a consumes (its operands' register holds four).
constexpr int64_t kBytesPerDp4a = 4;

/// C += A * B four k at a time, over the chunks of the accumulator's
/// distribution this thread owns.
class Dp4aLowering final : public MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override;
};

/// Bytes k..k+3 of row or column `index` of a shared operand as a
/// vector<4xi8>: one 4-byte load where K is the buffer's contiguous
/// dimension (`kMajor`; K a multiple of 4 keeps it aligned), else four.
static Value loadFourK(GemmLoweringContext &ctx, const BufferInfo &operand, bool kMajor,
                       Value index, Value k) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  Type word = VectorType::get({kBytesPerDp4a}, builder.getI8Type());
  if (kMajor)
    return LLVM::LoadOp::create(builder, loc, word, ctx.sharedPointer(operand, {index, k}),
                                /*alignment=*/kBytesPerDp4a);
  SmallVector<Value> bytes;
  for (int64_t e = 0; e < kBytesPerDp4a; ++e)
    bytes.push_back(memref::LoadOp::create(
        builder, loc, operand.memref,
        ctx.sharedIndices(operand, {ctx.add(k, ctx.cst(e)), index})));
  return ctx.packVector(bytes);
}

LogicalResult Dp4aLowering::lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                      const MmaAtom &atom) const {
  const BufferInfo &a = ctx.buffer(gemm.getA());
  const BufferInfo &b = ctx.buffer(gemm.getB());
  if (gemm.getK() % kBytesPerDp4a != 0)
    return gemm.emitOpError() << "with atom " << atom.name << " needs K a multiple of "
                              << kBytesPerDp4a;
  // A as M x K and B as N x K (transpose_b) hold K contiguous.
  bool aKMajor = !gemm.getTransposeA(), bKMajor = gemm.getTransposeB();
  bool aSigned = !a.type.getElementType().isUnsignedInteger();
  bool bSigned = !b.type.getElementType().isUnsignedInteger();
  auto loadA = [&](Value k, Value i) -> SmallVector<Value> {
    return {loadFourK(ctx, a, aKMajor, i, k)};
  };
  auto loadB = [&](Value k, Value j) -> SmallVector<Value> {
    return {loadFourK(ctx, b, bKMajor, j, k)};
  };
  auto update = [&](ArrayRef<Value> av, ArrayRef<Value> bv, Value acc) {
    return dp4a(ctx.builder(), ctx.loc(), av[0], aSigned, bv[0], bSigned, acc);
  };
  return lowerSimtGemm(ctx, gemm, atom, kBytesPerDp4a, loadA, loadB, update);
}

} // namespace
} // namespace lowering

const std::vector<MmaAtom> &getSm61Dp4aAtoms() {
  static const lowering::Dp4aLowering lowering;
  static const std::vector<MmaAtom> *atoms = [] {
    auto *list = new std::vector<MmaAtom>{
        {"SM61_DP4A_1x1x4_S32S8S8S32", 1, 1, 4, {"s8"}, 1},
        {"SM61_DP4A_1x1x4_S32U8U8S32", 1, 1, 4, {"u8"}, 1},
    };
    for (MmaAtom &atom : *list) {
      atom.accumulatorTypes = {"s32"};
      atom.lowering = &lowering;
    }
    return list;
  }();
  return *atoms;
}

} // namespace tessera
