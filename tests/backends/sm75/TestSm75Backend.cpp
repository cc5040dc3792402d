//===- TestSm75Backend.cpp - A backend that lives outside backends/ ------===//
//
// This file defines a test-only Turing (sm_75) backend that brings its own
// MMA atom family and that family's lowering, and its own pipelining
// strategy, to prove the plugin seam: nothing in passes/, lowering/ or
// backends/ names it, and it passes the shared conformance compile suite
// (//tests/backends:sm75_conformance). Its atom, TEST_SM75_SIMT_1x1x2_F32,
// is a SIMT atom that steps k by two (two fused multiply-adds per element
// and step); the built-in SIMT atom follows it in the preference list for
// gemms whose K is odd. Its strategy, "test-sm75-single-stage-prefetch",
// loads the next iteration's tiles into registers while the body computes
// on one shared stage, then stores them over it between two barriers.
//
// //tests/backends:test_sm75_registered adds it to the global registry when
// linked (alwayslink), as an out-of-tree plugin would; registry_test adds
// it to registries of its own.
//
//===----------------------------------------------------------------------===//

#include "tests/backends/sm75/TestSm75Backend.h"

#include <memory>

#include "contract/AtomLowering.h"
#include "contract/Backend.h"
#include "contract/PipelineLoweringContext.h"
#include "contract/PipelineStrategy.h"
#include "backends/common/MmaAtoms.h"
#include "backends/common/NVVMLowering.h"
#include "backends/common/Pipelines.h"
#include "backends/common/SimtGemm.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::testing {
namespace {

using namespace mlir;
using lowering::BufferInfo;
using lowering::GemmLoweringContext;

/// C += A * B with k stepped by two: for each of the thread's accumulator
/// elements, acc = fma(a[k+1], b[k+1], fma(a[k], b[k], acc)).
class PairedFmaLowering final : public lowering::MmaAtomLowering {
public:
  LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                          const MmaAtom &atom) const override {
    OpBuilder &builder = ctx.builder();
    Location loc = ctx.loc();
    const BufferInfo &a = ctx.buffer(gemm.getA());
    const BufferInfo &b = ctx.buffer(gemm.getB());
    bool transA = gemm.getTransposeA(), transB = gemm.getTransposeB();
    Type f32 = builder.getF32Type();
    // Elements (row, k) and (row, k + 1) of A, or (k, col) and (k + 1, col)
    // of B, as f32; `transposed` swaps the coordinates.
    auto loadPair = [&](const BufferInfo &operand, bool transposed, bool kIsRow, Value k,
                        Value index) {
      SmallVector<Value> pair;
      for (Value kk : {k, ctx.add(k, ctx.cst(1))}) {
        Value row = kIsRow ? kk : index, col = kIsRow ? index : kk;
        SmallVector<Value> at = transposed ? SmallVector<Value>{col, row}
                                           : SmallVector<Value>{row, col};
        Value v = memref::LoadOp::create(builder, loc, operand.memref,
                                         ctx.sharedIndices(operand, at));
        pair.push_back(ctx.convert(v, f32));
      }
      return pair;
    };
    auto loadA = [&](Value k, Value i) { return loadPair(a, transA, /*kIsRow=*/false, k, i); };
    auto loadB = [&](Value k, Value j) { return loadPair(b, transB, /*kIsRow=*/true, k, j); };
    auto update = [&](ArrayRef<Value> av, ArrayRef<Value> bv, Value acc) -> Value {
      acc = math::FmaOp::create(builder, loc, av[0], bv[0], acc);
      return math::FmaOp::create(builder, loc, av[1], bv[1], acc);
    };
    return lowering::lowerSimtGemm(ctx, gemm, atom, /*kStep=*/2, loadA, loadB, update);
  }
};

/// Register prefetch over a single shared stage: iteration k's tiles are in
/// stage 0; while the body computes on them, iteration k + 1's load into
/// registers; a barrier, the registers stored over stage 0, a barrier.
/// (Slower than double buffering, which needs no first barrier: a strategy
/// of this backend's own, written with the PipelineLoweringContext's services.)
class SingleStagePrefetch final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return "test-sm75-single-stage-prefetch"; }
  /// One stage: the next tiles wait in registers, not in a second copy.
  int64_t stagesFor(int64_t, int64_t) const override { return 1; }
  std::string tryPlan(lowering::PipelineLoweringContext &, tile::PipelinedOp,
                      PipelineLoopPlan &plan) const override {
    return plan.ahead.empty() ? "the loop copies nothing into staged shared buffers" : "";
  }
  LogicalResult lower(lowering::PipelineLoweringContext &kl, tile::PipelinedOp loop, Value count,
                      const PipelineLoopPlan &plan) const override {
    OpBuilder &b = kl.builder();
    Location loc = kl.loc();
    auto load = [&](Value iteration) {
      return common::loadIterationToRegisters(kl, loop, plan.ahead, iteration);
    };
    auto store = [&](ArrayRef<Value> tiles) {
      common::storeRegistersToStage(kl, loop, plan.ahead, tiles, kl.cst(0));
      kl.barrier();
    };
    kl.barrier();
    store(load(kl.cst(0)));
    auto forOp = scf::ForOp::create(b, loc, kl.cst(0), count, kl.cst(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    Value next = arith::MinUIOp::create(b, loc, kl.add(k, kl.cst(1)),
                                        arith::SubIOp::create(b, loc, count, kl.cst(1)));
    SmallVector<Value> tiles = load(next);
    kl.noteBarrier();
    if (failed(kl.lowerStagedBody(loop, plan.ahead, k, kl.cst(0), /*inFlight=*/-1)))
      return failure();
    kl.noteSharedAccess();
    kl.barrier();
    store(tiles);
    kl.noteSharedAccess();
    return success();
  }
};

/// Turing TU10x (7.5): 64 KiB of shared memory per SM and per block,
/// ldmatrix, no cp.async. From the CUDA C++ Programming Guide, "Technical
/// Specifications per Compute Capability".
const TargetCapabilities kTestSm75 = [] {
  TargetCapabilities caps;
  caps.sharedMemoryPerBlock = 64 * 1024;
  caps.sharedMemoryPerSM = 64 * 1024;
  caps.maxThreadsPerBlock = 1024;
  caps.hasLdmatrix = true;
  caps.hasTanhApprox = true;
  caps.hasScopedMemoryOrder = true;
  caps.mmaShapes = {"m16n8k8", "m8n8k4"};
  caps.ptxFeature = "+ptx70";
  return caps;
}();

class TestSm75Backend final : public Backend {
public:
  llvm::StringRef getName() const override { return "test-sm75"; }
  std::vector<ComputeCapability> getServedCapabilities() const override {
    return {{7, 5, false}};
  }
  const TargetCapabilities &getCapabilities(const ComputeCapability &) const override {
    return kTestSm75;
  }
  void buildLoweringTail(mlir::OpPassManager &pm, const ComputeCapability &cc) const override {
    addCommonNVVMLowering(pm, cc);
  }
  std::vector<MmaAtom> getMmaAtoms(const ComputeCapability &) const override {
    static const PairedFmaLowering lowering;
    MmaAtom paired{"TEST_SM75_SIMT_1x1x2_F32", 1, 1, 2, {"f16", "bf16", "f32"}, 1};
    paired.lowering = &lowering;
    return {paired, getSimtFmaAtom()};
  }
  std::vector<const PipelineStrategy *>
  getPipelineStrategies(const ComputeCapability &) const override {
    static const SingleStagePrefetch prefetch;
    return {&prefetch, &common::inOrderPipeline()};
  }
  std::vector<ConformanceSkip> getConformanceSkips() const override { return {}; }
};

} // namespace

std::unique_ptr<Backend> makeTestSm75Backend() { return std::make_unique<TestSm75Backend>(); }

} // namespace tessera::testing
