//===- NvvmOps.cpp - Typed NVVM ops for the kernel lowering ---------------===//
//
// This file implements the builders of NvvmOps.h: one NVVM op each (with
// the constants, casts and extractions it needs), the only file of the
// lowering that includes NVVMDialect.h.
//
//===----------------------------------------------------------------------===//

#include "contract/NvvmOps.h"

#include <array>

#include "contract/AtomLowering.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace tessera::lowering {

using namespace mlir;

void insertNvvmDialect(DialectRegistry &registry) { registry.insert<NVVM::NVVMDialect>(); }

void cpAsyncCommitGroup(OpBuilder &b, Location loc) { NVVM::CpAsyncCommitGroupOp::create(b, loc); }

void cpAsyncWaitGroup(OpBuilder &b, Location loc, int64_t n) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(n));
}

void fenceProxyAsyncShared(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

void wgmmaWaitGroup(OpBuilder &b, Location loc, int64_t n) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(n));
}

void setMaxRegisters(OpBuilder &b, Location loc, int64_t count, bool increase) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(count),
      NVVM::SetMaxRegisterActionAttr::get(b.getContext(),
                                          increase ? NVVM::SetMaxRegisterAction::increase
                                                   : NVVM::SetMaxRegisterAction::decrease));
}

void bulkCommitGroup(OpBuilder &b, Location loc) { NVVM::CpAsyncBulkCommitGroupOp::create(b, loc); }

void gridDependencyControl(OpBuilder &b, Location loc, bool wait) {
  NVVM::GriddepcontrolOp::create(
      b, loc, wait ? NVVM::GridDepActionKind::wait : NVVM::GridDepActionKind::launch_dependents);
}

void bulkWaitGroup(OpBuilder &b, Location loc, int64_t n, bool read) {
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(n),
                                       read ? b.getUnitAttr() : UnitAttr());
}

void fenceMbarrierInit(OpBuilder &b, Location loc) { NVVM::FenceMbarrierInitOp::create(b, loc); }

void mbarrierWaitParity(OpBuilder &b, Location loc, Value barrier, Value parity,
                        bool clusterScope) {
  // Inline PTX: nvvm.mbarrier.try_wait.parity has no intrinsic (only
  // convert-nvvm-to-llvm lowers it) and always adds a suspend-time hint.
  // The labels are local to the braces' scope.
  std::string scope = clusterScope ? ".acquire.cluster" : "";
  emitPtx(b, loc,
          "{\n.reg .pred done;\nwait:\nmbarrier.try_wait.parity" + scope +
              ".shared::cta.b64 done, [$0], $1;\n@done bra ready;\nbra wait;\nready:\n}",
          "r,r", {barrier, parity}, {}, /*sideEffects=*/true);
}

Value mapaShared(OpBuilder &b, Location loc, Value address, Value rank) {
  // Inline PTX: nvvm.mapa maps pointers (64-bit mapa.shared::cluster.u64
  // and conversions), not the 32-bit shared addresses used here.
  return emitPtx(b, loc, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", {address, rank},
                 {b.getI32Type()}, /*sideEffects=*/false)[0];
}

Value clusterCtaRank(OpBuilder &b, Location loc) {
  return NVVM::ClusterId::create(b, loc, b.getI32Type());
}

void clusterArrive(OpBuilder &b, Location loc) {
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/b.getUnitAttr());
}

void clusterWait(OpBuilder &b, Location loc) {
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/b.getUnitAttr());
}

/// An i32 constant operand (printed as an immediate).
static Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(v));
}

void namedBarrierSync(OpBuilder &b, Location loc, Value id, int64_t threads) {
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32Constant(b, loc, threads),
                          /*reductionOp=*/{}, /*reductionPredicate=*/Value());
}

void namedBarrierSync(OpBuilder &b, Location loc, int64_t id, int64_t threads) {
  namedBarrierSync(b, loc, i32Constant(b, loc, id), threads);
}

void membarGpu(OpBuilder &b, Location loc) {
  NVVM::MembarOp::create(b, loc,
                         NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::GPU));
}

/// The members of an LLVM struct value.
static SmallVector<Value> members(OpBuilder &b, Location loc, Value aggregate, int64_t count) {
  SmallVector<Value> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, aggregate, ArrayRef<int64_t>{i}));
  return values;
}

Value dp4a(OpBuilder &b, Location loc, Value a, bool signedA, Value bVec, bool signedB, Value c) {
  auto type = [](bool isSigned) {
    return isSigned ? NVVM::DotAccumulateType::SIGNED : NVVM::DotAccumulateType::UNSIGNED;
  };
  return NVVM::DotAccumulate4WayOp::create(b, loc, b.getI32Type(), a, type(signedA), bVec,
                                           type(signedB), c);
}

SmallVector<Value> mmaM8n8k4(OpBuilder &b, Location loc, bool colA, bool colB, ValueRange a,
                             ValueRange bRegs, ValueRange c) {
  MLIRContext *ctx = b.getContext();
  Type pair = VectorType::get({2}, b.getF16Type());
  auto asPairs = [&](ValueRange regs) {
    SmallVector<Value> pairs;
    for (Value reg : regs)
      pairs.push_back(LLVM::BitcastOp::create(b, loc, pair, reg));
    return pairs;
  };
  // D has C's types: eight f32, or four f16 pairs (the .f16 C/D form).
  SmallVector<Type> dTypes(c.getTypes());
  auto layout = [](bool col) { return col ? NVVM::MMALayout::col : NVVM::MMALayout::row; };
  auto mma = NVVM::MmaOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(ctx, dTypes), asPairs(a), asPairs(bRegs), c,
      ArrayRef<int64_t>{8, 8, 4}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16, NVVM::MMATypes::f16},
      std::array<NVVM::MMALayout, 2>{layout(colA), layout(colB)});
  return members(b, loc, mma, c.size());
}

SmallVector<Value> mmaSync(OpBuilder &b, Location loc, int64_t m, int64_t n, int64_t k,
                           StringRef a, StringRef acc, ValueRange aRegs, ValueRange bRegs,
                           ValueRange c) {
  MLIRContext *ctx = b.getContext();
  NVVM::MMATypes type = *NVVM::symbolizeMMATypes(a);
  // Operands as the op types them: f16 pairs as vector<2xf16>, the other
  // 32-bit registers as i32, f64 as f64.
  Type half2 = VectorType::get({2}, b.getF16Type());
  auto operand = [&](Value reg) -> Value {
    if (a == "f16")
      return LLVM::BitcastOp::create(b, loc, half2, reg);
    return reg;
  };
  SmallVector<Value> aOps = llvm::map_to_vector(aRegs, operand);
  SmallVector<Value> bOps = llvm::map_to_vector(bRegs, operand);
  // f16 accumulators travel in pairs.
  SmallVector<Value> cOps;
  bool halfAcc = acc == "f16";
  if (halfAcc) {
    for (size_t i = 0; i < c.size(); i += 2) {
      Value pair = LLVM::UndefOp::create(b, loc, half2);
      for (int64_t e = 0; e < 2; ++e)
        pair = LLVM::InsertElementOp::create(
            b, loc, pair, c[i + e],
            LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(e)));
      cOps.push_back(pair);
    }
  } else {
    cOps.assign(c.begin(), c.end());
  }
  SmallVector<Type> resultTypes(cOps.size(), cOps.front().getType());
  std::optional<NVVM::MMAIntOverflow> overflow;
  if (type == NVVM::MMATypes::s8 || type == NVVM::MMATypes::u8)
    overflow = NVVM::MMAIntOverflow::wrapped;
  auto mma = NVVM::MmaOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(ctx, resultTypes), aOps, bOps, cOps,
      ArrayRef<int64_t>{m, n, k}, std::nullopt, overflow,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> d = members(b, loc, mma, cOps.size());
  if (!halfAcc)
    return d;
  SmallVector<Value> elements;
  for (Value pair : d)
    for (int64_t e = 0; e < 2; ++e)
      elements.push_back(LLVM::ExtractElementOp::create(
          b, loc, pair, LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(e))));
  return elements;
}

} // namespace tessera::lowering
