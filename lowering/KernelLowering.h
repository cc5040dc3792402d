//===- KernelLowering.h - tile-lower-to-gpu's per-kernel lowering -*- C++ -*-===//
//
// The state and helpers of lowering one tile.kernel to a gpu.func: the
// lowering library tile-lower-to-gpu (passes/) runs and the backends'
// pipelining strategies drive. Its files: LowerKernel.cpp (the kernel and
// the op dispatch), LowerLayouts.cpp, LowerCopy.cpp, LowerParallel.cpp,
// LowerPipelined.cpp (planning a loop, handing it to its strategy),
// LowerStreamK.cpp and LowerGemm.cpp (which asks the gemm's atom).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LOWERING_KERNELLOWERING_H
#define TESSERA_LOWERING_KERNELLOWERING_H

#include <functional>
#include <unordered_map>

#include "contract/AtomLowering.h"
#include "contract/Backend.h"
#include "contract/PipelineLoweringContext.h"
#include "contract/PipelineStrategy.h"
#include "lowering/TileQueries.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace tessera::lowering {

using namespace mlir;
using namespace tessera::tile;

/// Global address space of NVPTX (PTX ISA §5.1, .global).
constexpr unsigned kGlobalAddressSpace = 1;
/// The name of the gpu.module holding a tile module's kernels.
constexpr llvm::StringLiteral kGpuModuleName = "tessera_kernels";
/// The largest divisor the divisibility analysis tracks.
constexpr int64_t kMaxDivisor = 1 << 20;

/// Lowers one tile.kernel to a gpu.func. Lends its services to the MMA
/// atoms' lowerings (GemmLoweringContext, contract/AtomLowering.h) and to
/// the pipelining strategies (PipelineLoweringContext,
/// contract/PipelineLoweringContext.h); its state is private.
class KernelLowering final : public PipelineLoweringContext {
public:
  KernelLowering(KernelOp kernel, const Backend &backend, const ComputeCapability &cc)
      : kernel_(kernel), backend_(backend), cc_(cc), caps_(backend.getCapabilities(cc)),
        loc_(kernel.getLoc()), b_(kernel.getContext()) {
    auto module = kernel->getParentOfType<ModuleOp>();
    fastMath_ = !(module && module->hasAttr(kExactMathAttr));
  }

  /// Lowers the kernel: creates the gpu.func, reads the schedules,
  /// lowers the body, erases the tile.kernel.
  LogicalResult run();

  // GemmLoweringContext: what an atom's lowering uses (the index helpers,
  // convert, barrier, ptx, thread and warp coordinates, forEachChunk and
  // shared addressing are the members of the same names below).
  OpBuilder &builder() override { return b_; }
  Location loc() override { return loc_; }
  int64_t threads() override { return kernel_.getThreads(); }
  Value threadId() override { return threadId_; }
  const BufferInfo &buffer(Value tileBuffer) override { return buffers_[tileBuffer]; }
  void noteSharedAccess() override {
    lastWasBarrier_ = false;
    sharedWritesPending_ = true;
  }
  void noteSharedRead() override { lastWasBarrier_ = false; }
  FragmentPrefetch *fragmentPrefetch() override { return fragmentPrefetch_; }
  void issueDeferredCopies() override {
    if (pendingIssue_) {
      pendingIssue_();
      pendingIssue_ = nullptr;
    }
  }
  bool inAsyncMmaPipeline() override { return inAsyncMmaPipeline_; }
  int64_t asyncMmaInFlight() override { return asyncMmaInFlight_; }
  bool genericSharedWrites() override { return genericSharedWrites_; }
  bool accumulatorHeld(Value fragment) override { return heldAccumulators_.contains(fragment); }
  Value mmaCompletionBarrier() override { return mmaCompletionBarrier_; }
  void holdAccumulator(Value fragment, bool held) override {
    if (held)
      heldAccumulators_.insert(fragment);
    else
      heldAccumulators_.erase(fragment);
  }
  void setMmaCompletionBarrier(Value barrier) override { mmaCompletionBarrier_ = barrier; }
  GemmLoweringContext &gemmContext() override { return *this; }
  void addAsyncAccumulator(Value fragment, int64_t regs) override {
    std::pair<Value, int64_t> inFlight(fragment, regs);
    if (!llvm::is_contained(asyncAccumulators_, inFlight))
      asyncAccumulators_.push_back(inFlight);
  }

  // PipelineLoweringContext: what a pipelining strategy uses beyond the
  // atom's services (the helpers of the same names below, and these).
  KernelOp kernel() override { return kernel_; }
  const Backend &backend() override { return backend_; }
  const ComputeCapability &computeCapability() override { return cc_; }
  const TargetCapabilities &capabilities() override { return caps_; }
  Block *entryBlock() override { return entry_; }
  IRMapping &valueMap() override { return map_; }
  const TensorInfo &tensor(Value tileTensor) override { return tensors_[tileTensor]; }
  void setStage(Value tileBuffer, Value stage) override { buffers_[tileBuffer].stage = stage; }
  Value iterationOffset() override { return ivOffset_; }
  void setIterationOffset(Value offset) override { ivOffset_ = offset; }
  void noteBarrier() override {
    lastWasBarrier_ = true;
    sharedWritesPending_ = false;
  }
  void setAsyncMmaPipeline(bool inPipeline, int64_t inFlight) override {
    inAsyncMmaPipeline_ = inPipeline;
    asyncMmaInFlight_ = inFlight;
  }
  ArrayRef<AsyncAccumulator> asyncAccumulators() override { return asyncAccumulators_; }
  void fenceAsyncAccumulators() override {
    for (auto [fragment, regs] : asyncAccumulators_)
      fenceRegisters(fragment, regs);
    asyncAccumulators_.clear();
  }
  void setFragmentPrefetch(FragmentPrefetch *prefetch) override { fragmentPrefetch_ = prefetch; }
  void deferCopies(std::function<void()> issue) override { pendingIssue_ = std::move(issue); }
  Value sharedBase() override { return sharedBase_; }
  int64_t relocatedSharedBytes() override { return relocatedSharedBytes_; }
  void keepRelocation() override { keepRelocation_ = true; }
  bool keepsRelocation() override { return keepRelocation_; }
  int64_t launchSharedBytes() override;
  void setLaunchSharedBytes(int64_t bytes) override;
  void setBlockThreads(int64_t threads) override;
  void setClusterBlocks(int64_t x, int64_t y) override;
  void setTilesPerBlock(int64_t tiles) override;
  void noteBulkStoresPending() override { bulkStoresPending_ = true; }
  bool pingPong() override { return pingPong_; }
  bool persistent() override { return persistent_; }
  bool streamK() override { return streamK_; }
  Value launchedThreadId() override { return rawThreadId_; }
  int64_t consumerThreads() override { return consumerThreads_; }
  PipelinedOp specializedLoop() override { return specialized_; }
  Operation *onceAnchor() override { return onceAnchor_; }
  Value blockIdY() override { return blockIdY_; }
  Value tileSlot() override { return tileSlotOp_->getResult(0); }
  scf::ForOp tileLoop() override { return tileLoop_; }
  Value ringBase() override { return ringBase_; }
  FailureOr<SmallVector<Value>>
  blockResource(Operation *op, StringRef key, int64_t sharedBytes,
                llvm::function_ref<SmallVector<Value>(Value shared)> setUp,
                std::function<void(ArrayRef<Value>)> tearDown) override;
  Value workTile() override { return workTile_; }
  Value streamKWholeTiles() override { return streamKWholeTiles_; }
  LogicalResult withStreamKRecomputed(PipelinedOp loop,
                                      llvm::function_ref<LogicalResult()> body) override;

  // Below: the lowering's helpers, public to the lowering library's files
  // and to the passes (strategies and atoms reach them through their
  // contexts only), then its private state.

  // Helpers building index arithmetic.
  /// An index constant: one per value, at the start of the kernel's entry
  /// block once there is one (it dominates every use; the canonicalizer
  /// would otherwise fold thousands of copies into these).
  Value cst(int64_t v) override {
    if (!entry_)
      return arith::ConstantIndexOp::create(b_, loc_, v);
    Value &slot = indexConstants_[v];
    if (!slot) {
      OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(entry_);
      slot = arith::ConstantIndexOp::create(b_, loc_, v);
    }
    return slot;
  }
  Value add(Value x, Value y) override { return b_.createOrFold<arith::AddIOp>(loc_, x, y); }
  Value mul(Value x, Value y) override { return b_.createOrFold<arith::MulIOp>(loc_, x, y); }
  Value lt(Value x, Value y) override {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::slt, x, y);
  }
  Value le(Value x, Value y) override {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sle, x, y);
  }
  Value eq(Value x, Value y) override {
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::eq, x, y);
  }
  /// Whether this is thread `t` of the block as launched (producers too).
  Value isThread(int64_t t) override { return eq(rawThreadId_, cst(t)); }
  Value andi(Value x, Value y) override { return x ? arith::AndIOp::create(b_, loc_, x, y) : y; }
  /// An index as the i32 inline PTX takes.
  Value toI32(Value index) override {
    return arith::IndexCastOp::create(b_, loc_, b_.getI32Type(), index);
  }
  /// Unsigned 32-bit arithmetic (the stream-K decomposition, whose tile and
  /// iteration counts stay below 2^32): an i32 constant, an index truncated
  /// to u32, and a u32 zero-extended back to an index.
  Value cst32(int64_t v) override {
    return arith::ConstantIntOp::create(b_, loc_, b_.getI32Type(), v);
  }
  Value toU32(Value index) {
    return arith::IndexCastUIOp::create(b_, loc_, b_.getI32Type(), index);
  }
  Value fromU32(Value u32) {
    return arith::IndexCastUIOp::create(b_, loc_, b_.getIndexType(), u32);
  }
  /// Inline PTX without results that the compiler keeps in place.
  void ptx(StringRef text, StringRef constraints, ValueRange operands) override;
  Value convert(Value value, Type to) override;
  void barrier() override;
  /// The alignment a vector access of `bytes` may claim: tensor base pointers
  /// are only known to be aligned to the target's widest global access, so a
  /// wider vector (a converting copy into a narrower fragment) claims that.
  int64_t vectorAlignment(int64_t bytes) const {
    return std::min(bytes, caps_.globalVectorBytes);
  }

  LogicalResult lowerBlock(Block &block) override;
  LogicalResult lowerOp(Operation &op) override;
  LogicalResult lowerCopy(CopyOp copy);
  /// A store of an m16n8-layout fragment to a 16-bit tensor whose rows hold
  /// multiples of four atom tiles: the four lanes of a quad transpose their
  /// pairs with three shuffles so that each stores 8 consecutive elements
  /// (16 bytes) instead of 2, and a warp's stores fill whole 32-byte
  /// sectors. False (nothing emitted) for any other copy.
  bool lowerMmaFragmentStore(CopyOp copy) override;
  /// A store of an m16n8-layout fragment to a 1-byte tensor whose rows hold
  /// multiples of eight atom tiles: each lane stores 16 consecutive bytes
  /// (byteFragmentChunk). False (nothing emitted) for any other copy.
  bool lowerByteFragmentStore(CopyOp copy);
  /// This lane's quad index and its bits.
  QuadLanes quadLanes() override;
  /// Columns 64 g + 16 t .. + 15 (t: the lane's quad index) of row
  /// 16 mi + 8 h + lane / 4 of the warp's tile of an m16n8-layout fragment,
  /// converted to the 1-byte `dstElt`, as a vector<4xi32>: the quad's pairs
  /// of eight atom tiles exchanged (shuffles, then byte permutes).
  Value byteFragmentChunk(const BufferInfo &frag, Type dstElt, const QuadLanes &quad, int64_t mi,
                          int64_t h, int64_t g) override;
  /// convertElement, in one cvt.rn.satfinite per element where the target
  /// has it (caps_.hasFp8Convert) and the conversion is a saturating one of
  /// an f32 (or narrower float) to FP8; the integer emulation otherwise.
  Value convertCast(Value value, Type from, Type to, bool saturate);
  /// lowerCopy without the warp-specialized strategy's epilogue form (what
  /// that form emits where it keeps the direct stores).
  LogicalResult lowerCopyDirectly(CopyOp copy) override {
    bool saved = directCopies_;
    directCopies_ = true;
    LogicalResult result = lowerCopy(copy);
    directCopies_ = saved;
    return result;
  }
  /// Fragment slots `slot` and `slot` + 1, converted to the 16-bit `elt` and
  /// packed in 32 bits (an MMA accumulator's pair, as stores move it).
  Value packedPair(const BufferInfo &frag, int64_t slot, Type elt);
  /// A copy of an m16n8-layout fragment to a 16-bit shared buffer of its
  /// shape on a target with stmatrix: one stmatrix.x4 per 16 x 16 of a warp's
  /// tile (each lane's pairs are the matrices' fragments as they are) instead
  /// of a 4-byte store per pair. False (nothing emitted) for any other copy.
  bool lowerMmaFragmentToShared(CopyOp copy);
  /// stmatrix.x4 of columns [colBegin, colBegin + cols) of each warp's
  /// tile of an m16n8-layout fragment to the same rows of `dst`, its
  /// column colBegin at dst's column 0.
  void storeMatrices(const BufferInfo &frag, const BufferInfo &dst, int64_t colBegin,
                     int64_t cols) override;
  /// This thread's warp in the block, and lane in its warp.
  Value warpId() override;
  Value laneId() override;
  /// The first row / column of warp `warp`'s tile in an MMA-layout fragment
  /// of `shape`: warps in row-major order over warps_m x warps_n.
  Value warpTileRow(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp) override;
  Value warpTileCol(ArrayRef<int64_t> shape, MmaLayoutAttr mma, Value warp) override;
  /// What `lane` adds to the rows (`rows`) or columns of its elements in
  /// each step of `mma`: its lane bits times their bases.
  Value laneOffset(Value lane, MmaLayoutAttr mma, bool rows) override;
  LogicalResult lowerFill(Value buffer, Value value);
  /// lowerFill with the zero of the buffer's element type (tile.clear).
  LogicalResult lowerClear(Value buffer);
  LogicalResult lowerParallel(ParallelOp loop);
  Value lowerFastMath(Operation &op, IRMapping &map);
  LogicalResult lowerPipelined(PipelinedOp loop);
  /// Block-uniform control flow (LowerControlFlow.cpp).
  LogicalResult lowerIf(IfOp op);
  LogicalResult lowerSerial(SerialOp op);
  /// tile.var, tile.var_get, tile.var_set (a private one-element array per
  /// thread, which LLVM keeps in registers) and tile.require (no code).
  LogicalResult lowerVariable(Operation *op);
  /// Maps `loop`'s induction variable to `iteration`, then walks the body:
  /// clones its index arithmetic (dimensions, pure ops) and calls `onCopy`
  /// for each copy in `ahead`, in body order. The caller saves and restores
  /// map_.
  void mapIteration(PipelinedOp loop, const llvm::SmallPtrSetImpl<Operation *> &ahead,
                    Value iteration, llvm::function_ref<void(CopyOp)> onCopy) override;
  /// This thread's elements of a tensor -> shared copy's source tile, in a
  /// per-thread array (registers after SROA; converted to the buffer's type),
  /// and their store to the copy's destination.
  Value loadTileToRegisters(CopyOp copy) override;
  void storeRegistersToTile(CopyOp copy, Value registers) override;
  /// Lowers a pipelined loop's body for iteration `k` on stage `stage` of
  /// its staged buffers (the copies in `ahead` were issued earlier).
  /// `inFlight` >= 0: the body's async MMA keeps that many groups in flight
  /// (the loop fenced the proxies); -1: no async MMA.
  LogicalResult lowerStagedBody(PipelinedOp loop, const llvm::SmallPtrSetImpl<Operation *> &ahead,
                                Value k, Value stage, int64_t inFlight) override;
  /// Asks the gemm's atom (MmaAtom::lowering) to emit it.
  LogicalResult lowerGemm(GemmOp gemm);

  /// Calls `body` once per chunk this thread owns in a tile of `shape`
  /// spread as `dist`, guarding chunks past the tile's end.
  void forEachChunk(ArrayRef<int64_t> shape, DistributionAttr dist,
                    llvm::function_ref<void(const Chunk &)> body) override;
  /// Calls `body` once per chunk of a fragment layout (a distribution or an
  /// MMA accumulator layout) that this thread owns.
  void forEachOwned(ArrayRef<int64_t> shape, DistributionAttr dist, MmaLayoutAttr mma,
                    llvm::function_ref<void(const Chunk &)> body);
  /// The memref indices of a shared buffer element, swizzle applied.
  SmallVector<Value> sharedIndices(const BufferInfo &info, ArrayRef<Value> coords) override;
  /// The shared-window byte address (i64) of a shared buffer element.
  Value sharedAddress(const BufferInfo &info, ArrayRef<Value> coords) override;
  /// The byte offset of memref `indices` (sharedIndices') of a shared
  /// buffer, counted from the buffer's start, or from its stage's start
  /// when the indices leave the stage out.
  Value sharedByteOffset(const BufferInfo &info, ArrayRef<Value> indices);
  /// The 32-bit shared-window address (PTX's "r" operand of ldmatrix and
  /// cp.async) of element `coords` + `shift` of a 2-D shared buffer: the
  /// stage in use's base plus the element's offset within a stage. Where
  /// `shift` moves whole swizzle periods (rows by a multiple of 8, columns by
  /// whole panels) it adds a constant last (an immediate of the instruction),
  /// so the chunks of one thread share the register of their offset, which
  /// depends on nothing the loop changes; other shifts move the coordinates.
  Value sharedAddress32(const BufferInfo &info, ArrayRef<Value> coords,
                        ArrayRef<int64_t> shift = {}) override;
  /// Fences the first `regs` slots of a fragment (fenceValues,
  /// contract/AtomLowering.h) in place.
  void fenceRegisters(Value fragment, int64_t regs) override;
  LogicalResult lowerReduce(ReduceOp reduce);
  /// A reduction of an MMA-layout fragment into the row slice of its layout
  /// (LowerRowReduce.cpp): per-thread columns, xor-shuffles among the lanes
  /// sharing a row, and shared scratch across warps that split the columns.
  LogicalResult lowerRowReduce(ReduceOp reduce);
  /// A copy of a row-slice fragment to a tile of a global tensor
  /// (LowerRowReduce.cpp): each row written once, by the thread of lane
  /// column 0 (and warp column 0) that holds it, bounds-checked.
  LogicalResult lowerRowSliceStore(CopyOp copy);
  /// Calls `body` once per row this thread holds in a row slice of `rows`
  /// rows of `mma`: coords {row}, firstSlot its slot, vector 1.
  void forEachOwnedRow(int64_t rows, MmaLayoutAttr mma,
                       llvm::function_ref<void(const Chunk &)> body);
  /// The row-slice slot of the row of accumulator slot `accumulatorSlot` in
  /// an MMA-layout fragment of `shape` (what a tile.parallel over the
  /// accumulator reads a row slice at).
  int64_t rowSliceSlot(ArrayRef<int64_t> shape, MmaLayoutAttr mma, int64_t accumulatorSlot);
  /// `x` from the lane `offset` away in xor order (shfl.sync.bfly over the
  /// whole warp; 16-bit values travel as f32).
  Value shuffleXor(Value x, int32_t offset);
  /// A reduction's identity in `type`, and its combination of two values.
  Value reductionIdentity(ReduceKind kind, Type type);
  Value combineReduction(ReduceKind kind, Value x, Value y);
  // The steps lowerReduce and lowerRowReduce share (LowerParallel.cpp).
  /// A thread's partial results: `count` registers of `type` (allocated at
  /// the kernel's entry), each set to the identity of `kind`.
  Value allocReductionPartials(ReduceKind kind, Type type, int64_t count);
  /// Slot `slot` of the fragment `src` as an operand of `kind`: converted
  /// to `type`, and its absolute value for abssum.
  Value loadReductionOperand(const BufferInfo &src, int64_t slot, Type type, ReduceKind kind);
  /// The `count` partials, each combined with those of the lanes that
  /// differ from this one in the bits of `laneMasks`: one xor-shuffle per
  /// mask, in order (the lanes sharing a row, rowSliceLaneMasks, or the
  /// whole warp's butterfly).
  SmallVector<Value> combineAcrossLanes(ReduceKind kind, Value partials, int64_t count,
                                        ArrayRef<int32_t> laneMasks);
  /// Stores `results` into slots 0.. of the register fragment `dst`,
  /// combined with what it holds unless `reduce` clears it.
  void storeReductionResults(ReduceOp reduce, Value dst, ArrayRef<Value> results);
  /// The row-major slot of `indices` in a replicated fragment: a constant
  /// when the indices are, else a value.
  OpFoldResult replicatedSlot(const BufferInfo &info, ArrayRef<Value> indices);
  /// Reads / writes a replicated fragment element; a dynamic index selects
  /// among the slots so the fragment stays in registers.
  Value loadReplicated(const BufferInfo &info, ArrayRef<Value> indices);
  void storeReplicated(const BufferInfo &info, ArrayRef<Value> indices, Value value);
  /// A vector of `values` (one type), and the elements of a vector.
  Value packVector(ArrayRef<Value> values) override;
  SmallVector<Value> unpackVector(Value vec) override;
  /// sharedAddress as a pointer into shared memory (address space 3).
  Value sharedPointer(const BufferInfo &info, ArrayRef<Value> coords) override;
  /// Whether `vector` consecutive elements of a row of shared buffer `info`
  /// (starting at a multiple of `vector`) move as one 4-, 8- or 16-byte
  /// access (they stay contiguous under the swizzle).
  bool isSharedVector(const BufferInfo &info, int64_t vector);
  /// `values` at `coords` and the elements after it along the last
  /// dimension (coords' last a multiple of their count): one vector access
  /// where isSharedVector allows, else one per element.
  void storeShared(const BufferInfo &info, ArrayRef<Value> coords, ArrayRef<Value> values);
  SmallVector<Value> loadShared(const BufferInfo &info, ArrayRef<Value> coords, int64_t vector);
  /// A distribution for cooperative copies of a tile through shared memory.
  DistributionAttr copyDistribution(BufferType tile, Type globalElementType) override;
  /// True when every vector of `vector` elements the copy touches in `tensor`
  /// at `offsets` (tile-level values) is aligned to its size.
  bool isVectorAligned(const TensorInfo &tensor, ValueRange offsets, int64_t vector) override;
  /// The tensor a copy reads or writes as its tile addresses it: for a slice
  /// (tile.copy's tensor_dims) a view of the spanned dimensions at the fixed
  /// offsets, computed at the insertion point, whose first dimension is 0
  /// when a fixed offset lies outside its dimension; else the whole tensor.
  /// A copy of an m16n8 MMA fragment to a tensor of `elementBytes`-byte
  /// elements: each warp's 16-row and 8-column tiles (mt, nt); nullopt for
  /// any other copy.
  struct MmaStoreTiles {
    int64_t mt, nt;
  };
  std::optional<MmaStoreTiles> mmaFragmentStoreTiles(CopyOp copy, int64_t elementBytes);
  TensorInfo copyTensor(CopyOp copy) override;
  /// copyTensor without `until`: the whole tensor, or the slice tensor_dims
  /// names.
  TensorInfo copyTensorSlice(CopyOp copy);
  /// The element strides of a row-major tensor of `dims`.
  SmallVector<Value> rowMajorStrides(ArrayRef<Value> dims);
  /// The tile's origin in copyTensor (CopyOp::getTileOffsets, lowered).
  SmallVector<Value> copyOffsets(CopyOp copy) override;
  /// Element address in a tensor (or `coords` further than address `from`
  /// in it), and the in-bounds predicates of a vector of `vector` elements at
  /// global coordinates `coords`.
  Value elementAddress(const TensorInfo &tensor, ArrayRef<Value> coords, Value from = {}) override;
  void boundsPredicates(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                        Value &rowsInBounds, Value &fullVector);

  SmallVector<Value> loadGlobal(const TensorInfo &tensor, ArrayRef<Value> coords, int64_t vector,
                                bool aligned) override;
  void storeGlobal(const TensorInfo &tensor, ArrayRef<Value> coords, ArrayRef<Value> values,
                   bool aligned);
  /// `access()` (a value of the tensor's element type) under a check that
  /// `indices` lie inside `tensor`, else 0.
  /// With `onlyIf`, also under that condition.
  Value elementInBounds(const TensorInfo &tensor, ArrayRef<Value> indices,
                        function_ref<Value()> access, Value onlyIf = {});
  /// The element of an integer tensor at `indices` (lowered values), 0
  /// outside the tensor.
  Value readElement(const TensorInfo &tensor, ArrayRef<Value> indices);
  /// tile.read's element at `indices` (lowered values) as an index, 0
  /// outside the tensor.
  Value readIndex(ReadOp read, ArrayRef<Value> indices);
  /// A tile.view's type and known divisors (no values: what planning needs).
  TensorInfo viewTypeInfo(ViewOp view);
  /// Reads a tile.view's address and records its TensorInfo.
  LogicalResult lowerView(ViewOp view);
  /// tile.atomic at `indices` with `value`: the old element, 0 outside
  /// (or where `onlyIf`, when given, is false).
  Value atomicElement(AtomicOp atomic, ArrayRef<Value> indices, Value value, Value onlyIf = {});
  /// Adds `values` (consecutive along the tensor's last axis from `coords`)
  /// into the tensor, an atomic per element inside its bounds; with
  /// `aligned` (the run starts at a multiple of its size) and f32 pairs or
  /// quads on a target with vector reductions, one vector `red` where the
  /// whole run is inside; f16 or bf16 pairs likewise one packed `red` each.
  void atomicAddGlobal(const TensorInfo &tensor, ArrayRef<Value> coords, ArrayRef<Value> values,
                       Value onlyIf = {}, bool aligned = false);

  /// fence.proxy.async.shared::cta (PTX ISA §9.7.12.4): orders the generic
  /// proxy's shared writes before the async proxy's reads.
  void fenceProxyAsync() override;
  /// The block coordinates of linear tile `t` (x fastest).
  SmallVector<Value> tileCoords(Value t) override;
  /// The loop over this block's work items (iteration values `iterArgs`),
  /// the insertion point inside it; `tile`, `begin`, `end` the item's.
  scf::ForOp emitWorkItems(ValueRange iterArgs, Value &tile, Value &begin, Value &end) override;
  /// Computes gridExtents_ here; returns the grid's block count.
  Value emitGridExtents();
  /// Computes gridExtents_ and the stream-K decomposition (streamKTileIters_,
  /// streamKBlocks_, streamKWholeTiles_, streamKSplitIters_,
  /// streamKBlockIters_) here.
  void emitStreamKParams(PipelinedOp loop);
  /// Stream-K: a piece after its tile's first starts its accumulators at
  /// zero (those whose last use before the loop is not a tile.clear).
  void zeroLaterPieces(PipelinedOp loop);
  /// The distinct accumulators `loop`'s gemms add into, in order: what a
  /// stream-K piece exchanges.
  SmallVector<Value> loopAccumulators(PipelinedOp loop);
  /// Why the kernel cannot take stream-K, or nothing.
  std::optional<std::string> whyNoStreamK();
  /// Hands `loop` to the strategy its schedule names (schedules_).
  LogicalResult lowerPipelinedStrategy(PipelinedOp loop);
  /// What planning finds out about a pipelined loop from the tile IR
  /// (contract/PipelineStrategy.h): the staged copies, the stages, the MMA
  /// groups that may stay in flight. The schedule attribute then decides.
  using PipelinePlan = PipelineLoopPlan;
  PipelinePlan planPipelined(PipelinedOp loop);
  /// Sets up what planning asks of the kernel (the schedules requested by
  /// the tile.kernel, the tensors' divisibility, the shared memory moved
  /// after the mbarriers) without lowering anything: for
  /// tile-plan-pipelines, whose KernelLowering lowers nothing. Whenever
  /// planning has placed the shared buffers anew, it calls
  /// readKernelSchedule again (the rest does not depend on placement).
  void prepareForPlanning();
  /// An error on what no strategy can take in `loop`'s body (a gemm under a
  /// branch or a serial loop of it).
  LogicalResult checkPipelinedBody(PipelinedOp loop);
  /// Why `strategy` cannot run `loop` as its buffers are staged and placed
  /// now, or "" when it can; `plan` gets the loop's facts and what the
  /// strategy decided (PipelineStrategy::tryPlan).
  std::string tryStrategy(const PipelineStrategy &strategy, PipelinedOp loop, PipelinePlan &plan);
  /// The schedule attribute (kScheduleAttr) of `strategy` running a loop
  /// as `plan` says.
  DictionaryAttr printSchedule(const PipelineStrategy &strategy, const PipelinePlan &plan);
  /// A schedule attribute's entries: the strategy it names (one of the
  /// backend's), its stages and MMA groups in flight, and the strategy's
  /// own entries (`own`, read into `params` by its parseSchedule).
  struct ScheduleEntries {
    const PipelineStrategy *strategy = nullptr;
    int64_t stages = 1, inFlight = 0;
    DictionaryAttr own;
    std::shared_ptr<const StrategyParams> params;
  };
  /// Reads `schedule`, an error on `loop` where it is malformed or names a
  /// strategy the backend lacks.
  FailureOr<ScheduleEntries> readScheduleEntries(PipelinedOp loop, DictionaryAttr schedule);
  /// The kernel's own schedule (kScheduleAttr on the tile.kernel): whether
  /// it is persistent and runs stream-K, with a remark where stream-K or
  /// multicast was asked for and does not apply. After the loops' schedules.
  DictionaryAttr planKernelSchedule();
  /// streamK_ from the kernel's schedule.
  LogicalResult readKernelStreamK();
  /// A loop's schedule as lowering uses it: its strategy and plan.
  struct ScheduledLoop {
    const PipelineStrategy *strategy = nullptr;
    PipelinePlan plan;
  };
  /// Reads `loop`'s schedule attribute as tile-plan-pipelines decided or
  /// checked it (an error on the loop when it is missing or malformed,
  /// names no strategy of the backend, or disagrees with the stages of the
  /// loop's buffers). Decides nothing.
  FailureOr<ScheduledLoop> readSchedule(PipelinedOp loop);
  /// Whether `value` (tile IR at the kernel's top level) is pure arithmetic
  /// of the kernel's arguments, block coordinates and tensor dimensions:
  /// what valueAt can recompute elsewhere.
  bool isRecomputable(Value value) override;
  /// The values (not tensors or buffers) `loop`'s body takes from before it:
  /// what a producer, running apart from the consumers, recomputes.
  llvm::SetVector<Value> valuesFromBefore(PipelinedOp loop) override;
  /// A grid-launched kernel's producer fills the stages from the kernel's
  /// start, while the consumers run the code before `loop`: the unstaged
  /// buffers that code accesses (earlyBuffers) move after the mbarriers
  /// (slotShift_) where the plan gave them bytes of the stages (their
  /// lifetimes, in program order, do not overlap). Planning checked that
  /// they fit (earlyBuffersEnd).
  void relocateEarlyBuffers(PipelinedOp loop);
  /// The unstaged shared buffers the code before `loop` accesses that share
  /// bytes with the stages.
  llvm::SetVector<AllocSharedOp> earlyBuffers(PipelinedOp loop) override;
  /// Where `buffers` end once packed after the mbarriers (relocationStart).
  int64_t packedEnd(ArrayRef<AllocSharedOp> buffers) override;
  /// After a stream-K piece's loop: pieces after a tile's first give their
  /// accumulators to the workspace; the first piece adds them, and only
  /// whole tiles and first pieces run the rest of the body (the insertion
  /// point is left inside that condition).
  void exchangePartials(PipelinedOp loop);
  void dropPingPong();
  // The steps of run(), in order.
  /// The gpu.func in the module's gpu.module, with one parameter per
  /// pointer, dynamic dimension and scalar (func_, entry_).
  void createKernelFunc();
  /// Maps the kernel's arguments, block indices and thread index to the
  /// gpu.func's (tensors_, map_).
  void mapArguments();
  /// Ping-pong, persistence and stream-K as the kernel asks and can take:
  /// the workspace parameter, the tile slots, the relocation placeholder.
  LogicalResult setUpKernelSchedule();
  /// Reads every pipelined loop's schedule (schedules_) and, for a
  /// warp-specialized first loop, prepares the consumers' side.
  LogicalResult readLoopSchedules();
  /// A persistent kernel's loop over the grid's tiles (stream-K: over the
  /// block's work items), the insertion point left inside it.
  void emitTileLoop();
  /// Reads the schedules the tile.kernel asks for (ping-pong, persistent)
  /// and, for them, packs the unstaged shared buffers after the mbarriers
  /// (relocatedSharedBytes_): what run() and planning both start from.
  void readKernelSchedule();
  /// Where buffers moved out of the plan start: after the mbarriers of the
  /// kernel's deepest staging, 128-byte aligned.
  int64_t relocationStart();
  /// Moves `allocs` (unstaged, planned) one after the other from `start`
  /// (relocationStart()), each 128-byte aligned (their slotShift_); returns
  /// the bytes they take there.
  int64_t packAfterMbarriers(ArrayRef<AllocSharedOp> allocs, int64_t start);
  /// Where a warp-specialized loop's mbarriers start: after the buffers
  /// tile-plan-shared-memory placed, 8-byte aligned.
  /// Whether tile-plan-shared-memory gave the kernel shared memory.
  int64_t mbarrierOffset() override {
    auto bytes = kernel_->getAttrOfType<IntegerAttr>(kSharedMemoryBytesAttr);
    return llvm::alignTo(bytes ? bytes.getInt() : 0, 8);
  }
  /// Replaces a placeholder op's value by the constant `value`, erases it
  /// and clears `op`.
  void foldPlaceholder(Operation *&op, int64_t value);
  /// Emits `body` in a new scf.if on `condition` (no else), then continues
  /// after it.
  void ifThen(Value condition, llvm::function_ref<void()> body) override;
  /// The value `value` (tile IR before the pipelined loop) has in another
  /// tile: the pure arithmetic it depends on, cloned with `at` (seeded with
  /// that tile's block coordinates); failure when it depends on anything
  /// else.
  FailureOr<Value> valueAt(Value value, IRMapping &at) override;
  /// Appends a tensor-map parameter (a 64-byte aligned pointer, passed by
  /// value) for kernel argument `tensor` to the gpu.func and records it in
  /// kTensorMapArgsAttr and kTensorMapsAttr (`box` outermost first, one
  /// extent per dimension of the tensor, `swizzle` bytes) for the runtime to
  /// encode; returns it, null on failure.
  Value addTensorMap(Value tensor, ArrayRef<int64_t> box, int64_t swizzle) override;
  /// Whether `value` (tile IR) depends on the block coordinates.
  bool dependsOnBlockIndices(Value value) override;
  /// Whether `value` (tile IR) depends on any of `roots`.
  bool dependsOnAny(Value value, ArrayRef<Value> roots) override;
  /// The grid's extent along `dim`, evaluated from the dynamic dimensions.
  Value gridExtent(unsigned dim) override;

private:
  // The lowering's state: the strategies and atoms reach it through their
  // contexts' methods, never directly.
  bool directCopies_ = false;
  /// Bulk tensor stores were issued: thread 0 waits for them at the end.
  bool bulkStoresPending_ = false;
  KernelOp kernel_;
  const Backend &backend_;
  ComputeCapability cc_;
  const TargetCapabilities &caps_;
  Location loc_;
  OpBuilder b_;
  IRMapping map_;
  DenseMap<Value, TensorInfo> tensors_;
  DenseMap<Value, BufferInfo> buffers_;
  Value threadId_;
  Value sharedBase_;
  Block *entry_ = nullptr;
  /// The index constants cst() made, by value. Not a DenseMap: that
  /// reserves INT64_MAX and INT64_MAX - 1 as its empty and tombstone keys,
  /// and a kernel's grid may hold either.
  std::unordered_map<int64_t, Value> indexConstants_;
  bool lastWasBarrier_ = false;
  /// Shared memory may have been written since the last barrier (by other
  /// threads than the reader): a shared read waits for a barrier first.
  /// Reads alone leave it unset, so a read after reads needs no barrier.
  bool sharedWritesPending_ = false;
  /// Set while lowering the body of a pipelined loop whose gemm reads shared
  /// memory through the async proxy: the loop fences the proxies before its
  /// barrier, and the gemm keeps this many MMA groups in flight.
  bool inAsyncMmaPipeline_ = false;
  /// Set by the cp.async strategy for an mma.sync body: issues the loop's
  /// next copies; the atom's lowering calls it (issueDeferredCopies) after
  /// its first ldmatrix loads.
  std::function<void()> pendingIssue_;
  /// Set by the cp.async strategy when the body is one gemm from staged
  /// buffers whose atom prefetches its fragments (FragmentPrefetch).
  FragmentPrefetch *fragmentPrefetch_ = nullptr;
  /// Shared memory was written through the generic proxy (st.shared) since
  /// the last proxy fence: an async-proxy reader (wgmma) fences first.
  bool genericSharedWrites_ = false;
  int64_t asyncMmaInFlight_ = 0;
  /// Accumulators of async MMAs a pipelined loop leaves in flight, with
  /// their register counts: fenced after the loop's final wait.
  SmallVector<std::pair<Value, int64_t>> asyncAccumulators_;
  /// Nonzero in a kernel with a warp-specialized loop: the consumers'
  /// thread count, which barriers synchronize (the producer leaves at
  /// onceAnchor_, before the kernel's own code).
  int64_t consumerThreads_ = 0;
  /// The thread's index in the launched block; threadId_ is its index among
  /// the threads of its tile (they differ under the ping-pong schedule).
  Value rawThreadId_;
  /// The ping-pong schedule (tile.kernel's `pingpong`), while it may still
  /// apply: the block runs two tiles of the grid adjacent along y, tile slot
  /// s (0 or 1; 2 for a producer) on threads s * threads ..; y's block
  /// coordinate is 2 blockIdx.y + s. `tileSlotOp_` and `tilesPerBlockOp_`
  /// define s and the 2; dropPingPong makes them 0 and 1 (the grid as
  /// written) when the pipelined loop cannot take the schedule.
  bool pingPong_ = false;
  Operation *tileSlotOp_ = nullptr, *tilesPerBlockOp_ = nullptr;
  Value blockIdY_;
  /// A persistent kernel (tile.kernel's `persistent`): the body runs in
  /// `tileLoop_` over the grid's blocks (blockIdx.x, stepping by gridDim.x);
  /// `ringBase_` (per thread) counts the iterations of the block's earlier
  /// tiles, where a warp-specialized loop's ring of stages continues.
  bool persistent_ = false;
  scf::ForOp tileLoop_;
  Value ringBase_;
  SmallVector<Value> gridExtents_;
  /// Stream-K (tile.kernel's `stream_k`): the grid's first `streamKWholeTiles_` tiles
  /// (whole waves of the launched blocks) run whole; the rest, `streamKTileIters_`
  /// loop iterations each, are split into `streamKBlockIters_` consecutive iterations per
  /// launched block. A block's work items: its whole tiles, then at most two
  /// pieces (the end of one tile, the start of the next). `workspace_` holds
  /// each block's partial accumulators (`streamKSlotBytes_`), then one counter per
  /// tile.
  bool streamK_ = false;
  Value workspace_, streamKTileIters_, streamKWholeTiles_, streamKBlockIters_, streamKBlocks_;
  /// The split iterations: (tiles after the whole waves) x streamKTileIters_.
  Value streamKSplitIters_;
  int64_t streamKSlotBytes_ = 0;
  /// The consumers' current item: tile, iterations [workBegin_, workEnd_).
  Value workTile_, workBegin_, workEnd_;
  /// Added to a pipelined loop's iteration index (a stream-K piece's start).
  Value ivOffset_;
  /// Where the once-per-block code of a warp-specialized loop goes (its
  /// mbarriers, the producer, the register rebalance): the kernel's start,
  /// or in a stream-K kernel before the consumers' work items (else, in a
  /// persistent kernel, before tileLoop_).
  Operation *onceAnchor_ = nullptr;
  /// Where block resources are set up (the kernel's start), and the
  /// resources set up so far (blockResource), torn down in reverse order
  /// before the block exits.
  Operation *resourceAnchor_ = nullptr;
  /// Accumulators a strategy holds in their MMAs' storage through its loop,
  /// and the mbarrier the current iteration's MMAs signal.
  llvm::SmallPtrSet<Value, 4> heldAccumulators_;
  Value mmaCompletionBarrier_;
  struct BlockResource {
    std::string key;
    SmallVector<Value> values;
    std::function<void(ArrayRef<Value>)> tearDown;
  };
  SmallVector<BlockResource> blockResources_;
  /// Every pipelined loop's schedule, read by run() before the kernel's
  /// body is lowered.
  llvm::DenseMap<Operation *, ScheduledLoop> schedules_;
  /// The loop whose schedule splits the block into producer and consumer
  /// warps, if any (the kernel's first top-level loop only).
  PipelinedOp specialized_;
  /// Shared buffers other than a pipelined loop's stages must not share
  /// bytes with the stages when a producer fills stages for another tile
  /// while they are in use (the planner may reuse the stages' bytes after
  /// the loop): under ping-pong or persistence they are packed after the
  /// mbarriers, `slotShift_` bytes after the planned offset (times
  /// `relocateOp_`'s value: 1, or 0 once keepRelocation_ stays false), slot
  /// 1's copy pingPongSlotBytes_ after slot 0's; the shared memory the block
  /// then needs.
  DenseMap<Operation *, int64_t> slotShift_;
  Operation *relocateOp_ = nullptr;
  bool keepRelocation_ = false;
  int64_t pingPongSlotBytes_ = 0, relocatedSharedBytes_ = 0;
  /// The grid's symbols: the dynamic tensor dimensions in argument order,
  /// then the size arguments.
  SmallVector<Value> dynamicDims_;
  /// Under the ping-pong schedule, each tile's consumers synchronize on
  /// their own named barrier (1 + tile slot).
  Value consumerBarrierId_;
  /// Approximate tanh, exp, erf and f32 division (CompileOptions::fastMath).
  bool fastMath_ = true;
  gpu::GPUFuncOp func_;
};

/// Decides the schedule of each tile.pipelined loop of `kernel` (or checks
/// the one it has) and writes it into the loop (kScheduleAttr), its stage
/// count onto the buffers the loop stages: tile-plan-pipelines.
/// `placeBuffers` places the kernel's shared buffers at the stages they
/// carry and returns the bytes they take (what tile-plan-shared-memory
/// does); planning calls it for every stage count it weighs.
LogicalResult planPipelines(KernelOp kernel, const Backend &backend, const ComputeCapability &cc,
                            llvm::function_ref<int64_t()> placeBuffers);

} // namespace tessera::lowering

#endif // TESSERA_LOWERING_KERNELLOWERING_H
