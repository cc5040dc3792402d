//===- AtomLowering.cpp - Helpers every atom lowering shares --------------===//
//
// This file implements the helpers atom lowerings share: checking a gemm's
// buffers, and the two raw forms of an instruction (inline PTX and an LLVM
// intrinsic call) where MLIR has no typed op for it.
//
//===----------------------------------------------------------------------===//

#include "contract/AtomLowering.h"

#include <string>

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessera::lowering {

using namespace mlir;

FailureOr<GemmBuffers> getGemmBuffers(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                      const MmaAtom &atom, const AccumulatorStep &step) {
  GemmBuffers buffers{&ctx.buffer(gemm.getA()), &ctx.buffer(gemm.getB()), &ctx.buffer(gemm.getC())};
  if (!step.matches(buffers.c->mma))
    return gemm.emitOpError() << "atom " << atom.name
                              << " needs its accumulator laid out by tile-layout-inference";
  return buffers;
}

SmallVector<Value> emitPtx(OpBuilder &b, Location loc, StringRef text, StringRef constraints,
                           ValueRange operands, ArrayRef<Type> resultTypes, bool sideEffects) {
  MLIRContext *ctx = b.getContext();
  Type resultType;
  if (resultTypes.size() == 1)
    resultType = resultTypes.front();
  else if (!resultTypes.empty())
    resultType = LLVM::LLVMStructType::getLiteral(ctx, resultTypes);
  auto op = LLVM::InlineAsmOp::create(
      b, loc, resultType, operands, b.getStringAttr(text), b.getStringAttr(constraints),
      sideEffects ? b.getUnitAttr() : nullptr, nullptr,
      LLVM::TailCallKindAttr::get(ctx, LLVM::tailcallkind::TailCallKind::None),
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), nullptr);
  SmallVector<Value> results;
  if (resultTypes.size() == 1)
    results.push_back(op.getResult(0));
  else
    for (size_t i = 0; i < resultTypes.size(); ++i)
      results.push_back(
          LLVM::ExtractValueOp::create(b, loc, op.getResult(0), ArrayRef<int64_t>{int64_t(i)}));
  return results;
}

SmallVector<Value> callIntrinsic(OpBuilder &b, Location loc, StringRef name, ValueRange operands,
                                 ArrayRef<Type> resultTypes) {
  Type resultType = resultTypes.size() == 1
                        ? resultTypes.front()
                        : LLVM::LLVMStructType::getLiteral(b.getContext(), resultTypes);
  auto call = LLVM::CallIntrinsicOp::create(b, loc, resultType, b.getStringAttr(name), operands);
  if (resultTypes.size() == 1)
    return {call.getResult(0)};
  SmallVector<Value> results;
  for (size_t i = 0; i < resultTypes.size(); ++i)
    results.push_back(
        LLVM::ExtractValueOp::create(b, loc, call.getResult(0), ArrayRef<int64_t>{int64_t(i)}));
  return results;
}

SmallVector<Value> fenceValues(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  // Inline assembly with no instruction (MLIR has no op that pins values in
  // place): each value an in/out operand of the same register.
  // NVPTX's register classes: f32 "f", f64 "d", 16-bit "h", i32 "r", i64 "l".
  auto constraint = [](Type type) -> std::string {
    if (type.isF32())
      return "f";
    if (type.isF64())
      return "d";
    unsigned width = type.getIntOrFloatBitWidth();
    return width == 16 ? "h" : width == 64 ? "l" : "r";
  };
  std::string constraints;
  for (size_t r = 0; r < values.size(); ++r)
    constraints += (r ? ",=" : "=") + constraint(values[r].getType());
  for (size_t r = 0; r < values.size(); ++r)
    constraints += "," + std::to_string(r);
  SmallVector<Type> types;
  for (Value v : values)
    types.push_back(v.getType());
  return emitPtx(b, loc, "", constraints, values, types, true);
}

int64_t warpTileCost(int64_t m, int64_t n) { return std::max(m, n) * 1000 / std::min(m, n); }

std::optional<WarpTiling> chooseWarpGridTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                               int64_t threads, bool wholeRows,
                                               const AccumulatorStep &step, int64_t warpsM) {
  int64_t warps = threads / 32;
  int64_t stepM = atom.warpM ? atom.warpM : atom.m;
  int64_t stepN = atom.warpN ? atom.warpN : atom.n * 2;
  std::optional<WarpTiling> best;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm != 0)
      continue;
    int64_t wn = warps / wm;
    if ((wholeRows && wn != 1) || (warpsM && wm != warpsM))
      continue;
    if (m % (wm * stepM) != 0 || n % (wn * stepN) != 0)
      continue;
    int64_t tm = m / wm, tn = n / wn;
    // Prefer square warp tiles (fewest shared loads per MMA), then taller.
    if (!best || warpTileCost(tm, tn) < warpTileCost(m / best->warpsM, n / best->warpsN))
      best = WarpTiling{wm, wn, step};
  }
  return best;
}

} // namespace tessera::lowering
