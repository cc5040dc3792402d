//===- Tcgen05PairPipeline.cpp - The CTA-pair (2-SM) gemm loop ------------===//
//
// The strategy `tcgen05-pair` (CtaPair.h): a tile.pipelined gemm loop run by
// the two blocks of a cluster as one tcgen05.mma.cta_group::2 of M = 256.
//
//   {strategy = "tcgen05-pair", stages = 4, in_flight = 0, pair_dim = 1}
//
// Planning takes the loop where sm90's TMA warp-specialized strategy would
// hold its accumulator in tensor memory, and where the tile allows the pair:
// a grid launch (one tile per block) whose blocks along grid dimension
// `pair_dim` load the same B tile in every iteration, with the same count,
// and differ in A; that dimension's extent provably even (the tensors'
// promised divisibility), so every block has its peer; one gemm in the
// kernel, of a tcgen05 atom, and a loop body of its two copies (and index
// arithmetic); B's N columns split in two: whole swizzle panels when B is
// stored K x N, whole 8-row groups when N x K.
//
// Emission, per block of the pair (rank 0 the leader):
//   - a producer warpgroup, whose elected thread acquires each stage of its
//     own ring (sm90's StageRing), the leader's also arming the leader's
//     "full" barrier with the bytes of both blocks, and loads its A tile
//     and its half of B into its own shared memory (cp.async.bulk.tensor
//     .cta_group::2), completing on the leader's full barrier;
//   - the consumers (the kernel's threads): the leader's wait on each
//     stage and issue the MMAs, which commit to the stage's "empty" barrier
//     in both blocks (tcgen05.commit .multicast::cluster), so each block's
//     producer reloads it; the peer's consumers skip the loop and wait, as
//     the leader's do, for the final commit before reading their rows.
// The accumulator moves in and out of tensor memory through the atom
// (Tcgen05Mma.cpp), which issues every tcgen05 instruction with
// .cta_group::2 in such a kernel.
//
// Compiled and assembled in CI (ptxas for sm_100a), never executed here.
//
//===----------------------------------------------------------------------===//

#include "backends/sm100/CtaPair.h"

#include "backends/sm90/StageRing.h"
#include "backends/sm90/TmaWarpSpecialized.h"
#include "contract/NvvmOps.h"
#include "contract/PipelineLoweringContext.h"
#include "lowering/TileQueries.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <string>

namespace tessera::sm100 {
namespace {

using namespace mlir;
using namespace tessera::lowering;
using namespace tessera::tile;

constexpr llvm::StringLiteral kPairDimKey = "pair_dim";

/// What the strategy decides beyond the shared plan: the grid dimension
/// along which a cluster's two blocks lie.
struct CtaPairParams final : StrategyParams {
  int64_t dim = 0;
};

const CtaPairParams &pairParams(const PipelineLoopPlan &plan) {
  static const CtaPairParams kNone;
  // Only this strategy's tryPlan and parseSchedule set the params of the
  // plans it is handed.
  if (const StrategyParams *params = plan.params.get())
    return *static_cast<const CtaPairParams *>(params);
  return kNone;
}

/// The loop's gemm and the copies of its two operands.
struct PairOperands {
  GemmOp gemm;
  CopyOp a, b;
};

/// The gemm and its operand copies where the body is those three and index
/// arithmetic, or why not.
std::string findOperands(PipelineLoweringContext &kl, PipelinedOp loop,
                         const PipelineLoopPlan &plan, PairOperands &found) {
  int64_t gemms = 0;
  kl.kernel().walk([&](GemmOp) { ++gemms; });
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      found.gemm = gemm;
      continue;
    }
    if (plan.ahead.contains(&op) || isMemoryEffectFree(&op))
      continue;
    return "the body does more than load the gemm's operands and run it ('" +
           op.getName().getStringRef().str() + "')";
  }
  if (!found.gemm || gemms != 1)
    return "the pair runs a kernel whose one gemm is in this loop";
  for (Operation *op : plan.ahead) {
    auto copy = cast<CopyOp>(op);
    if (copy.getDst() == found.gemm.getA())
      found.a = copy;
    else if (copy.getDst() == found.gemm.getB())
      found.b = copy;
    else
      return "the body loads more than the gemm's A and B";
  }
  if (!found.a || !found.b)
    return "the body does not load both of the gemm's operands";
  std::optional<MmaAtom> atom =
      findMmaAtom(found.gemm, kl.backend(), kl.computeCapability(), kl.kernel().getThreads());
  if (!atom || !isTcgen05Atom(*atom))
    return "the gemm does not run on a tcgen05.mma atom";
  for (CopyOp copy : {found.a, found.b})
    if (copy.getTensorDims() || copy.getTileType().getRank() != 2 ||
        cast<TileTensorType>(copy.getSrc().getType()).getRank() != 2)
      return "the pair loads 2-D tiles of 2-D tensors";
  return "";
}

/// Why B's tile cannot be split in two halves of its N columns, or "".
std::string whyNoSplit(GemmOp gemm) {
  auto type = cast<BufferType>(gemm.getB().getType());
  SharedSwizzle swizzle = getSharedSwizzle(type);
  int64_t n = gemm.getN();
  if (n % 32 != 0 || n < 64)
    return "the pair's MMA (M = 256) takes N a multiple of 32 from 64 (N is " + std::to_string(n) +
           ")";
  // N x K (K-major): half the rows; K x N: half the panels.
  if (gemm.getTransposeB())
    return (n / 2) % 8 == 0 ? ""
                            : "B's half of " + std::to_string(n / 2) +
                                  " rows is not whole "
                                  "8-row groups";
  if (swizzle.panels % 2 != 0)
    return "B's " + std::to_string(swizzle.panels) + " swizzle panel(s) do not split in two";
  return "";
}

/// Whether grid extent `dim` is even for every launch: an even constant, or
/// a dimension ceil- or floor-divided by a tile it is promised to be a
/// multiple of twice.
bool gridExtentEven(KernelOp kernel, int64_t dim) {
  AffineExpr extent = kernel.getGrid().getResult(dim);
  if (auto constant = dyn_cast<AffineConstantExpr>(extent))
    return constant.getValue() % 2 == 0;
  auto divided = dyn_cast<AffineBinaryOpExpr>(extent);
  if (!divided || (divided.getKind() != AffineExprKind::CeilDiv &&
                   divided.getKind() != AffineExprKind::FloorDiv))
    return false;
  auto symbol = dyn_cast<AffineSymbolExpr>(divided.getLHS());
  auto tile = dyn_cast<AffineConstantExpr>(divided.getRHS());
  return symbol && tile && tile.getValue() > 0 &&
         kernel.getDynamicDimDivisibility(symbol.getPosition()) % (2 * tile.getValue()) == 0;
}

/// The grid dimension whose neighbouring blocks share B and differ in A,
/// with an even extent; none when no dimension does.
std::optional<int64_t> choosePairDim(PipelineLoweringContext &kl, PipelinedOp loop,
                                     PairOperands operands) {
  ArrayRef<BlockArgument> indices = kl.kernel().getBlockIndices();
  for (int64_t d = 0; d < std::min<int64_t>(2, indices.size()); ++d) {
    Value index = indices[d];
    bool sharesB = !kl.dependsOnAny(loop.getCount(), {index});
    for (Value offset : operands.b.getSrcOffsets())
      sharesB &= !kl.dependsOnAny(offset, {index});
    bool differsInA = false;
    for (Value offset : operands.a.getSrcOffsets())
      differsInA |= kl.dependsOnAny(offset, {index});
    if (sharesB && differsInA && gridExtentEven(kl.kernel(), d))
      return d;
  }
  return std::nullopt;
}

/// One loop of the pair being emitted.
class PairLoop {
public:
  PairLoop(PipelineLoweringContext &kernel, PipelinedOp loop, Value count,
           const PipelineLoopPlan &plan)
      : kl(kernel), b(kernel.builder()), loc(kernel.loc()), loop(loop), count(count),
        ahead(plan.ahead), stages(plan.stages), dim(pairParams(plan).dim) {}

  LogicalResult emit();

private:
  /// An operand's tile load: its tensor map, and the box each block loads.
  struct Load {
    CopyOp copy;
    Value map;
    int64_t rows, columns, panels;
    /// B's: each block loads half of the N columns (`byRows`: half the
    /// rows of an N x K tile; else half the panels of a K x N one).
    bool half = false, byRows = false;
  };
  LogicalResult collectLoads();
  void setUp();
  LogicalResult emitProducer();
  void issueLoad(Load load, Value stage, Value barrier);
  void issueBox(Value target, Value map, ArrayRef<Value> coords, Value barrier);
  LogicalResult emitConsumers();

  PipelineLoweringContext &kl;
  OpBuilder &b;
  Location loc;
  PipelinedOp loop;
  Value count;
  const llvm::SmallPtrSetImpl<Operation *> &ahead;
  int64_t stages, dim;
  SmallVector<Load> loads;
  /// Bytes of both blocks' loads of one stage (what the leader arms).
  int64_t pairBytes = 0;
  std::optional<sm90::StageRing> ring;
  /// This block's rank in the pair (i32) and whether it is the leader.
  Value rank, leader;
};

LogicalResult PairLoop::collectLoads() {
  auto gemm = cast<GemmOp>(*llvm::find_if(loop.getBodyBlock(), llvm::IsaPred<GemmOp>));
  for (Operation &op : loop.getBodyBlock().without_terminator()) {
    if (!ahead.contains(&op))
      continue;
    auto copy = cast<CopyOp>(op);
    const BufferInfo &dst = kl.buffer(copy.getDst());
    int64_t element = getElementBytes(dst.type.getElementType());
    Load load{copy, Value(), copy.getTileType().getShape()[0], dst.swizzle.rowBytes / element,
              dst.swizzle.panels};
    int64_t bytes = dst.type.getNumElements() * element;
    load.half = copy.getDst() == gemm.getB();
    load.byRows = load.half && gemm.getTransposeB();
    // Each block loads its whole A tile and half of B's.
    pairBytes += load.half ? bytes : 2 * bytes;
    int64_t boxRows = load.byRows ? load.rows / 2 : load.rows;
    load.map = kl.addTensorMap(copy.getSrc(), {boxRows, load.columns}, dst.swizzle.rowBytes);
    if (!load.map)
      return failure();
    loads.push_back(load);
  }
  return success();
}

void PairLoop::issueBox(Value target, Value map, ArrayRef<Value> coords, Value barrier) {
  // Inline PTX: nvvm.cp.async.bulk.tensor.shared.cluster.global takes 64-bit
  // shared pointers (and its CTA-group form a predicate and cache hints).
  // With .cta_group::2 the copy may complete on the peer's barrier.
  SmallVector<Value> operands = {target, LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), map),
                                 kl.toI32(coords[0]), kl.toI32(coords[1]), barrier};
  kl.ptx("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx"
         "::bytes [$0], [$1, {$2, $3}], [$4];",
         "r,l,r,r,r", operands);
}

void PairLoop::issueLoad(Load load, Value stage, Value barrier) {
  const BufferInfo &dst = kl.buffer(load.copy.getDst());
  auto staged = kl.useStage({load.copy.getDst()}, stage);
  // The tile's origin, rows then columns.
  Value row = kl.valueMap().lookupOrDefault(load.copy.getSrcOffsets()[0]);
  Value column = kl.valueMap().lookupOrDefault(load.copy.getSrcOffsets()[1]);
  Value rankIndex = arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
  int64_t panels = load.half && !load.byRows ? load.panels / 2 : load.panels;
  if (load.byRows)
    row = kl.add(row, kl.mul(rankIndex, kl.cst(load.rows / 2)));
  else if (load.half)
    column = kl.add(column, kl.mul(rankIndex, kl.cst(panels * load.columns)));
  // Panel p of this block's share into panel p of its own buffer: both
  // blocks' halves lie at the same offsets, as the pair's MMA reads them.
  for (int64_t p = 0; p < panels; ++p) {
    Value target = arith::TruncIOp::create(
        b, loc, b.getI32Type(), kl.sharedAddress(dst, {kl.cst(0), kl.cst(p * load.columns)}));
    issueBox(target, load.map, {kl.add(column, kl.cst(p * load.columns)), row}, barrier);
  }
}

void PairLoop::setUp() {
  // mbarriers after the planned buffers: full[s], then empty[s]; each empty
  // barrier counts the leader's commit.
  // Buffers the code before the loop uses, where they overlap the stages,
  // lie after the mbarriers (the lowering relocates them).
  int64_t offset = kl.mbarrierOffset();
  kl.setLaunchSharedBytes(kl.keepsRelocation()
                              ? std::max(kl.relocatedSharedBytes(), offset + 16 * stages)
                              : offset + 16 * stages);
  Value sharedStart = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, kl.sharedBase());
  ring.emplace(kl, sharedStart, offset, stages);
  kl.ifThen(kl.isThread(0), [&] { ring->init(1); });
  // The pair's blocks synchronize before either arrives on the other's
  // barriers (these and the atom's, set up before them).
  clusterArrive(b, loc);
  clusterWait(b, loc);
  rank = clusterCtaRank(b, loc);
  leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                 arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
}

LogicalResult PairLoop::emitProducer() {
  int64_t consumers = kl.kernel().getThreads();
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, kl.launchedThreadId(),
                                           kl.cst(consumers));
  LogicalResult produced = success();
  kl.ifThen(isProducer, [&] {
    kl.ifThen(kl.isThread(consumers), [&] {
      // What the loop takes from the consumers' code (which follows),
      // recomputed here at this block's coordinates.
      IRMapping saved = kl.valueMap(), at;
      for (Value v : kl.valuesFromBefore(loop)) {
        FailureOr<Value> value = kl.valueAt(v, at);
        if (failed(value)) {
          produced = loop.emitOpError() << "a value the pair's loop uses depends on more than the "
                                           "block coordinates and kernel arguments";
          return;
        }
        kl.valueMap().map(v, *value);
      }
      FailureOr<Value> iterations = kl.valueAt(loop.getCount(), at);
      if (failed(iterations)) {
        produced = loop.emitOpError() << "the pair's iteration count depends on more than the "
                                         "block coordinates and kernel arguments";
        return;
      }
      Value zero = kl.cst(0);
      auto forOp = scf::ForOp::create(b, loc, zero, *iterations, kl.cst(1));
      {
        OpBuilder::InsertionGuard inLoop(b);
        b.setInsertionPoint(forOp.getBody()->getTerminator());
        sm90::StageRing::Position pos = ring->at(Value(), forOp.getInductionVar());
        ring->producerAcquire(pos);
        kl.ifThen(leader, [&] { ring->producerArm(pos.stage, pairBytes); });
        Value leaderFull = mapaShared(b, loc, ring->full(pos.stage), kl.cst32(0));
        kl.mapIteration(loop, ahead, forOp.getInductionVar(), [&](CopyOp copy) {
          issueLoad(*llvm::find_if(loads, [&](const Load &l) { return l.copy == copy; }), pos.stage,
                    leaderFull);
        });
      }
      // The block stays until the leader's MMAs have released every stage
      // (their commits arrive on this block's barriers).
      auto tail = scf::ForOp::create(b, loc, zero, kl.cst(stages), kl.cst(1));
      OpBuilder::InsertionGuard inTail(b);
      b.setInsertionPoint(tail.getBody()->getTerminator());
      ring->producerAcquire(ring->at(*iterations, tail.getInductionVar()));
      kl.valueMap() = saved;
    });
    kl.ptx("exit;", "", {}); // inline PTX: nvvm.exit is noreturn to LLVM
  });
  return produced;
}

LogicalResult PairLoop::emitConsumers() {
  kl.noteSharedAccess();
  if (failed(sm90::moveHeldAccumulators(kl, loop, /*enter=*/true)))
    return failure();
  // The leader's consumers run the iterations: each waits for both blocks'
  // loads of its stage; thread 0 issues the MMAs, which release the stage
  // in both blocks when they complete.
  LogicalResult lowered = success();
  kl.ifThen(leader, [&] {
    auto forOp = scf::ForOp::create(b, loc, kl.cst(0), count, kl.cst(1));
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    Value k = forOp.getInductionVar();
    sm90::StageRing::Position pos = ring->at(Value(), k);
    ring->consumerWait(pos);
    kl.noteBarrier(); // the full barrier orders this stage's reads
    kl.setMmaCompletionBarrier(ring->empty(pos.stage));
    lowered = kl.lowerStagedBody(loop, ahead, k, pos.stage, /*inFlight=*/0);
    kl.setMmaCompletionBarrier(Value());
  });
  if (failed(lowered) || failed(sm90::moveHeldAccumulators(kl, loop, /*enter=*/false)))
    return failure();
  kl.fenceAsyncAccumulators();
  kl.noteSharedAccess();
  return success();
}

LogicalResult PairLoop::emit() {
  if (failed(collectLoads()))
    return failure();
  kl.setClusterBlocks(dim == 0 ? 2 : 1, dim == 1 ? 2 : 1);
  kl.setBlockThreads(kl.kernel().getThreads() + 128);
  // The code before the loop ran on the consumers; its generic shared
  // writes are fenced for the MMAs' async proxy.
  if (kl.genericSharedWrites()) {
    kl.fenceProxyAsync();
    kl.barrier();
  }
  OpBuilder::InsertPoint atLoop = b.saveInsertionPoint();
  b.setInsertionPoint(kl.onceAnchor());
  setUp();
  if (failed(emitProducer()))
    return failure();
  b.restoreInsertionPoint(atLoop);
  return emitConsumers();
}

class CtaPairPipeline final : public PipelineStrategy {
public:
  llvm::StringRef getName() const override { return kCtaPairStrategy; }
  bool specializesWarps() const override { return true; }
  bool isOpportunistic() const override { return true; }
  int64_t stagesFor(int64_t requested, int64_t fitting) const override {
    return asyncCopyStages(requested, fitting);
  }
  std::string tryPlan(PipelineLoweringContext &kl, PipelinedOp loop,
                      PipelineLoopPlan &plan) const override;
  LogicalResult lower(PipelineLoweringContext &kl, PipelinedOp loop, Value count,
                      const PipelineLoopPlan &plan) const override {
    if (plan.inFlight != 0)
      return loop.emitOpError() << "schedule '" << getName()
                                << "' keeps no MMA group in flight, not " << plan.inFlight;
    return PairLoop(kl, loop, count, plan).emit();
  }
  void printSchedule(const PipelineLoopPlan &plan, Builder &b,
                     llvm::SmallVectorImpl<NamedAttribute> &entries) const override {
    entries.push_back(b.getNamedAttr(kPairDimKey, b.getI64IntegerAttr(pairParams(plan).dim)));
  }
  std::string parseSchedule(DictionaryAttr entries, PipelineLoopPlan &plan) const override;
  std::string checkSchedule(const PipelineLoopPlan &possible,
                            const PipelineLoopPlan &asked) const override {
    int64_t can = pairParams(possible).dim, wants = pairParams(asked).dim;
    if (wants != can)
      return "schedule pairs blocks along grid dimension " + std::to_string(wants) +
             "; this loop pairs them along " + std::to_string(can);
    return "";
  }
};

std::string CtaPairPipeline::tryPlan(PipelineLoweringContext &kl, PipelinedOp loop,
                                     PipelineLoopPlan &plan) const {
  if (kl.persistent() || kl.streamK() || kl.pingPong())
    return "the pair runs one tile per block of a grid launch";
  // The loop as sm90's strategy would run it, holding the accumulator.
  std::string why = sm90::tmaWarpSpecializedPipeline().tryPlan(kl, loop, plan);
  if (!why.empty())
    return why;
  if (!sm90::warpSpecializedParams(plan).holdAccumulators)
    return "the gemm's accumulator cannot stay in tensor memory through the loop";
  PairOperands operands;
  why = findOperands(kl, loop, plan, operands);
  if (why.empty())
    why = whyNoSplit(operands.gemm);
  if (!why.empty())
    return why;
  std::optional<int64_t> dim = choosePairDim(kl, loop, operands);
  if (!dim)
    return "no grid dimension of an extent known to be even has neighbouring blocks load the "
           "same B and different A";
  plan.inFlight = 0;
  auto params = std::make_shared<CtaPairParams>();
  params->dim = *dim;
  plan.params = std::move(params);
  return "";
}

std::string CtaPairPipeline::parseSchedule(DictionaryAttr entries, PipelineLoopPlan &plan) const {
  for (NamedAttribute entry : entries)
    if (entry.getName() != kPairDimKey)
      return "schedule entry '" + entry.getName().str() + "' is not one that strategy '" +
             getName().str() + "' takes (pair_dim = <i64>)";
  auto dim = entries.getAs<IntegerAttr>(kPairDimKey);
  if (!dim || (dim.getInt() != 0 && dim.getInt() != 1))
    return "strategy '" + getName().str() +
           "' needs pair_dim = 0 or 1 (the grid dimension of "
           "the pair)";
  auto params = std::make_shared<CtaPairParams>();
  params->dim = dim.getInt();
  plan.params = std::move(params);
  return "";
}

} // namespace

const PipelineStrategy &ctaPairPipeline() {
  static const CtaPairPipeline strategy;
  return strategy;
}

} // namespace tessera::sm100
