//===- AtomLowering.h - The code half of an MMA atom ------------*- C++ -*-===//
//
// This file declares the part of the backend contract that holds code: an
// MMA atom's lowering (MmaAtomLowering), which lives in the folder of the
// backend that introduced the atom's instruction, and the services the
// shared lowering driver lends it (GemmLoweringContext): the builder, the
// kernel's buffers, index arithmetic, thread and warp coordinates, shared
// memory addressing and the state a pipelining strategy shares with the
// gemms of its body. Shared passes call an atom's lowering through
// `MmaAtom::lowering` and never name the instruction.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONTRACT_ATOMLOWERING_H
#define TESSERA_CONTRACT_ATOMLOWERING_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "contract/Backend.h"
#include "ir/TileDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

namespace tessera {

/// The layout of a swizzled shared buffer: rows of 16-byte chunks whose
/// chunk index is XOR-ed with the row (CuTe's Swizzle<3,4,3>, <2,4,3> and
/// <1,4,3> for 128-, 64- and 32-byte rows), so the eight rows an ldmatrix
/// or a wgmma core matrix reads fall in distinct banks; rows wider than
/// 128 bytes are stored as panels of 128-byte rows, one panel after the
/// other (the layout TMA writes and wgmma descriptors describe).
struct SharedSwizzle {
  /// Bytes of one row of a panel: 32, 64 or 128 (the widest that divides the
  /// row); 0 when the buffer's rows admit no swizzle (their size is not a
  /// multiple of 32 bytes).
  int64_t rowBytes = 0;
  /// Panels the buffer's rows are split into.
  int64_t panels = 1;
};

namespace lowering {

/// A lowered buffer.
struct BufferInfo {
  tile::BufferType type;
  /// memref<slots x elt> for fragments; memref<shape x elt, workgroup> for shared.
  mlir::Value memref;
  tile::DistributionAttr distribution;
  /// Set instead of `distribution` for MMA accumulator fragments.
  tile::MmaLayoutAttr mma;
  /// Fragments every thread holds whole (reduction results).
  bool replicated = false;
  /// 1-D fragments in the row slice of `mma` (per-row values of an
  /// accumulator, each thread holding the rows it owns there).
  bool rowSlice = false;
  /// Shared buffers: 16-byte chunks XOR-swizzled by row, wide rows in
  /// panels (see SharedSwizzle); rowBytes 0 when plain row-major.
  SharedSwizzle swizzle;
  /// Shared buffers of a pipelined loop: copies kept (a leading memref
  /// dimension) and the one the code being emitted uses.
  int64_t stages = 1;
  mlir::Value stage;
};

/// The elements one thread handles in one chunk of a distributed tile.
struct Chunk {
  /// Row-major coordinates of the chunk's first element in the tile.
  llvm::SmallVector<mlir::Value> coords;
  /// Where whole rows separate this chunk from the thread's first one:
  /// coords = `base` + `shift` (the first chunk's coordinates and a constant
  /// row offset); empty otherwise.
  llvm::SmallVector<mlir::Value> base;
  llvm::SmallVector<int64_t> shift;
  /// The first register slot of the chunk (fragments only).
  int64_t firstSlot;
  /// Contiguous elements along the last dimension, in consecutive slots.
  int64_t vector = 1;
};

/// The operand registers of one k-step of a warp-level atom, loaded ahead
/// of its MMAs: per row tile of A its registers, per column group of B its.
struct MmaFragments {
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> a, b;
};

/// Set by a pipelining strategy that prefetches a gemm's fragments: its
/// first k-step's fragments (loaded by the iteration before, or the
/// prologue), and what goes before the last k-step's MMAs (the wait and
/// barrier of the next stage and its first fragments).
struct FragmentPrefetch {
  MmaFragments current;
  std::function<void()> beforeLastStep;
  /// Issue the iteration's copies before the next k-step's loads (with
  /// checked copies: only step 0's fragments and the accumulators are live
  /// across their arithmetic); else after, the loads' latency behind the
  /// copies.
  bool copiesFirst = true;
};

/// asyncMmaInFlight's answer when the pipelining strategy places the waits
/// for an async MMA (and fences its accumulators after them): the atom
/// issues and commits, and waits for nothing.
inline constexpr int64_t kMmaWaitByStrategy = -1;

/// What the shared lowering driver lends an atom's lowering while it emits
/// one tile.gemm: implemented by tile-lower-to-gpu for the kernel it lowers.
class GemmLoweringContext {
public:
  virtual ~GemmLoweringContext() = default;

  // The builder, at the gemm's place in the lowered kernel.
  virtual mlir::OpBuilder &builder() = 0;
  virtual mlir::Location loc() = 0;
  /// Threads of the kernel's tile (consumers only under warp specialization).
  virtual int64_t threads() = 0;
  /// This thread's index among its tile's threads.
  virtual mlir::Value threadId() = 0;
  /// The lowered form of a tile buffer (an operand of the gemm).
  virtual const BufferInfo &buffer(mlir::Value tileBuffer) = 0;

  // Index arithmetic (folded where constant).
  virtual mlir::Value cst(int64_t v) = 0;
  virtual mlir::Value add(mlir::Value x, mlir::Value y) = 0;
  virtual mlir::Value mul(mlir::Value x, mlir::Value y) = 0;
  /// `value` converted to the element type `to`.
  virtual mlir::Value convert(mlir::Value value, mlir::Type to) = 0;
  /// A vector of `values` (one type), and the elements of a vector.
  virtual mlir::Value packVector(llvm::ArrayRef<mlir::Value> values) = 0;
  virtual llvm::SmallVector<mlir::Value> unpackVector(mlir::Value vec) = 0;

  // Synchronization.
  /// A block barrier (elided right after another).
  virtual void barrier() = 0;
  /// Code after the last barrier touched shared memory (wrote it, or may
  /// have): the next barrier is not elided, and a later shared read waits
  /// for one.
  virtual void noteSharedAccess() = 0;
  /// Code after the last barrier only read shared memory: the next barrier
  /// is not elided, but another read needs none (reads do not race reads).
  virtual void noteSharedRead() { noteSharedAccess(); }
  /// fence.proxy.async.shared::cta before async-proxy reads.
  virtual void fenceProxyAsync() = 0;
  /// Inline PTX without results that the compiler keeps in place.
  virtual void ptx(llvm::StringRef text, llvm::StringRef constraints,
                   mlir::ValueRange operands) = 0;

  // Threads, warps and the accumulator layouts of the kernel.
  virtual mlir::Value warpId() = 0;
  virtual mlir::Value laneId() = 0;
  /// The first row / column of warp `warp`'s tile in an MMA-layout fragment.
  virtual mlir::Value warpTileRow(llvm::ArrayRef<int64_t> shape, tile::MmaLayoutAttr mma,
                                  mlir::Value warp) = 0;
  virtual mlir::Value warpTileCol(llvm::ArrayRef<int64_t> shape, tile::MmaLayoutAttr mma,
                                  mlir::Value warp) = 0;
  /// What `lane` adds to the rows (`rows`) or columns of its elements in
  /// each step of the accumulator layout `mma` (its lane bases).
  virtual mlir::Value laneOffset(mlir::Value lane, tile::MmaLayoutAttr mma, bool rows) = 0;
  /// Calls `body` once per chunk this thread owns in a tile of `shape`
  /// spread as `dist`, guarding chunks past the tile's end.
  virtual void forEachChunk(llvm::ArrayRef<int64_t> shape, tile::DistributionAttr dist,
                            llvm::function_ref<void(const Chunk &)> body) = 0;

  // Shared memory addressing (the stage in use, the swizzle applied).
  virtual llvm::SmallVector<mlir::Value> sharedIndices(const BufferInfo &info,
                                                       llvm::ArrayRef<mlir::Value> coords) = 0;
  /// The 32-bit shared-window address of element `coords` + `shift`.
  virtual mlir::Value sharedAddress32(const BufferInfo &info, llvm::ArrayRef<mlir::Value> coords,
                                      llvm::ArrayRef<int64_t> shift = {}) = 0;
  /// A pointer into shared memory (address space 3) to an element.
  virtual mlir::Value sharedPointer(const BufferInfo &info, llvm::ArrayRef<mlir::Value> coords) = 0;

  // Per-block resources of an atom family (tensor memory, the mbarrier its
  // MMAs complete on).
  /// The values of the block resource `key`. The first call reserves
  /// `sharedBytes` of shared memory (8-byte aligned; an error on `op` and
  /// failure when the block's shared memory cannot hold them), runs `setUp`
  /// with their 32-bit shared address at the kernel's start (before the
  /// kernel's own code, on every thread of the block) and keeps the values
  /// it returns; `tearDown` runs with them before the block exits, on every
  /// thread. Later calls return the same values.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  blockResource(mlir::Operation *op, llvm::StringRef key, int64_t sharedBytes,
                llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value shared)> setUp,
                std::function<void(llvm::ArrayRef<mlir::Value>)> tearDown) = 0;

  // What the pipelining strategy of the enclosing loop shares with its
  // body's gemms.
  /// Fragments prefetched by the strategy, or null.
  virtual FragmentPrefetch *fragmentPrefetch() = 0;
  /// Issues the loop's next copies if the strategy deferred them until
  /// after the gemm's first fragment loads (then forgets them).
  virtual void issueDeferredCopies() = 0;
  /// Whether the enclosing loop fenced the proxies for an async MMA, and
  /// how many MMA groups it keeps in flight (0 outside such a loop), or
  /// kMmaWaitByStrategy: the strategy waits for the MMA itself.
  virtual bool inAsyncMmaPipeline() = 0;
  virtual int64_t asyncMmaInFlight() = 0;
  /// Shared memory was written through the generic proxy since the last
  /// proxy fence.
  virtual bool genericSharedWrites() = 0;
  /// An accumulator (and its register count) an async MMA leaves in
  /// flight: fenced after the loop's final wait.
  virtual void addAsyncAccumulator(mlir::Value fragment, int64_t regs) = 0;
  /// Under a strategy that holds the loop's accumulators
  /// (MmaAtomLowering::holdsAccumulatorAcrossLoop): whether `fragment` is
  /// held now (its registers are stale until the loop ends), and the
  /// mbarrier (32-bit shared address) the current iteration's MMAs signal
  /// when they complete (null outside such a loop).
  virtual bool accumulatorHeld(mlir::Value fragment) = 0;
  virtual mlir::Value mmaCompletionBarrier() = 0;
};

/// One step of an atom family's accumulator layout, as MmaLayoutAttr holds
/// it: m x n elements placed by lane and register bases (see
/// tile::kM16N8Lanes for their encoding). The default is mma.sync m16n8's.
struct AccumulatorStep {
  int64_t m = 16, n = 8;
  llvm::SmallVector<int64_t, 5> lanes{std::begin(tile::kM16N8Lanes), std::end(tile::kM16N8Lanes)};
  llvm::SmallVector<int64_t, 4> registers{std::begin(tile::kM16N8Registers),
                                          std::end(tile::kM16N8Registers)};
  /// Whether `mma` has this step.
  bool matches(tile::MmaLayoutAttr mma) const {
    return mma && mma.getM() == m && mma.getN() == n && mma.getLanes() == llvm::ArrayRef(lanes) &&
           mma.getRegisters() == llvm::ArrayRef(registers);
  }
};

/// How a block's warps tile an MMA accumulator, and the register pattern
/// of one warp's share: a grid of steps of the atom family's accumulator
/// layout (m16n8; m8n8k4's quadpairs; a row per lane; a warpgroup atom's
/// m64nN accumulator is, per warp, 16 rows of N / 8 m16n8 steps).
struct WarpTiling {
  int64_t warpsM, warpsN;
  AccumulatorStep step;
};

/// How far an m x n warp tile is from square (1000 when square): the
/// shared loads per MMA a warp tiling costs, lower first.
int64_t warpTileCost(int64_t m, int64_t n);

/// The warp tiling a warp-level atom family takes: the block's warps in a
/// grid over an m x n accumulator, each covering whole steps of the atom
/// (its warpM x warpN where set, else m x 2n: m16n8k16's B fragments load
/// two n-atoms at a time), squarest warp tiles first, then taller. None
/// when no grid fits. `wholeRows`: every warp spans all n columns. `step`:
/// the family's accumulator layout. `warpsM` (0: any): only grids of that
/// many warps along M.
std::optional<WarpTiling> chooseWarpGridTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                               int64_t threads, bool wholeRows,
                                               const AccumulatorStep &step = {},
                                               int64_t warpsM = 0);

/// The code of an MMA atom family: how one tile.gemm is emitted with it.
/// One object per family, in the folder of the backend that introduced the
/// instruction; atoms point at it (MmaAtom::lowering).
class MmaAtomLowering {
public:
  virtual ~MmaAtomLowering() = default;
  /// Emits `gemm` (C += A * B on the kernel's tiles) with `atom`.
  virtual mlir::LogicalResult lowerGemm(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                        const MmaAtom &atom) const = 0;
  /// Whether the family's accumulator is tiled over warps in an MMA layout
  /// (chooseWarpTiling) and its shared operands are read from swizzled
  /// buffers; false (the default) for a per-thread family (SIMT FMA, dp4a),
  /// whose accumulator is distributed over threads as any fragment is.
  virtual bool tilesAccumulatorOverWarps() const { return false; }
  /// How the block's warps tile an m x n accumulator for `atom`, or none.
  /// `wholeRows`: every warp must span all n columns (A in registers).
  /// `warpsM` (0: any): only a tiling with that many warps along M (another
  /// accumulator's row split, so that row vectors reduced from one scale
  /// the other in registers).
  virtual std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                                     int64_t threads, bool wholeRows,
                                                     int64_t warpsM) const {
    return std::nullopt;
  }
  /// Why the family cannot compute `gemm` with `atom` for reasons its data
  /// does not say (types, operand placement and shapes are checked from the
  /// data): e.g. a warpgroup's rows, or the swizzle its descriptors need.
  /// "" when it can.
  virtual std::string whyIllegal(const MmaAtom &atom, tile::GemmOp gemm, int64_t threads) const {
    return "";
  }
  /// Whether a cp.async pipelining loop whose first gemm reads A and B from
  /// staged shared buffers with this family issues its next copies after
  /// the body's first operand loads instead of before them (the lowering
  /// calls issueDeferredCopies after them; without that call, the copies
  /// follow the gemm): the loads' latency then hides behind the copies.
  virtual bool defersLoopCopies() const { return false; }
  /// Whether the family's async MMAs may stay in flight past the gemm, for
  /// a pipelining strategy to wait for later (wgmma's groups); false when
  /// the gemm completes its MMAs before it returns.
  virtual bool keepsMmaInFlight() const { return false; }
  /// Whether the family can hold a gemm's accumulator in the storage its
  /// MMAs accumulate in (tensor memory) through a pipelined loop. A
  /// strategy that has it do so moves the accumulator there before the loop
  /// (enterHeldAccumulator) and back after it (leaveHeldAccumulator), and
  /// names the mbarrier each iteration's MMAs signal when they complete
  /// (GemmLoweringContext::mmaCompletionBarrier); no thread waits for them
  /// inside the loop.
  virtual bool holdsAccumulatorAcrossLoop() const { return false; }
  virtual mlir::LogicalResult enterHeldAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                                   const MmaAtom &atom) const {
    return gemm.emitOpError() << "atom " << atom.name << " does not hold its accumulator";
  }
  virtual mlir::LogicalResult leaveHeldAccumulator(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                                   const MmaAtom &atom) const {
    return gemm.emitOpError() << "atom " << atom.name << " does not hold its accumulator";
  }
  /// Whether the family can load one k-step's operand fragments ahead of
  /// its MMAs (what a fragment-prefetching pipelining strategy needs).
  virtual bool canPrefetchFragments() const { return false; }
  /// The fragments of k-step `ks` of `gemm` from its buffers' current stage.
  virtual MmaFragments loadFragments(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                     int64_t ks) const {
    return {};
  }
};

/// A gemm's A, B and C buffers, C checked to have the atom's accumulator
/// layout (`step`); an error on the gemm otherwise.
struct GemmBuffers {
  const BufferInfo *a, *b, *c;
};
mlir::FailureOr<GemmBuffers> getGemmBuffers(GemmLoweringContext &ctx, tile::GemmOp gemm,
                                            const MmaAtom &atom, const AccumulatorStep &step = {});

/// Emits one PTX instruction as inline assembly (the raw form of an atom,
/// as CuTe's arch/ headers hold it) and returns its results. The last
/// resort, where MLIR has no typed op for the instruction.
llvm::SmallVector<mlir::Value> emitPtx(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef text,
                                       llvm::StringRef constraints, mlir::ValueRange operands,
                                       llvm::ArrayRef<mlir::Type> resultTypes, bool sideEffects);

/// Calls the LLVM intrinsic `name` (an NVVM intrinsic that NVPTX prints as
/// one PTX instruction) and returns its results. Where an atom's instruction
/// has one with no memory effects, it costs codegen far less than inline
/// assembly, whose constraint strings are parsed at every use.
llvm::SmallVector<mlir::Value> callIntrinsic(mlir::OpBuilder &b, mlir::Location loc,
                                             llvm::StringRef name, mlir::ValueRange operands,
                                             llvm::ArrayRef<mlir::Type> resultTypes);

/// An empty instruction that reads and rewrites `values`, so LLVM orders
/// every other access to them around it (what CUTLASS's
/// warpgroup_fence_operand does): accumulators of an async MMA are neither
/// read before its wait nor written after its fence. Returns the rewritten
/// values.
llvm::SmallVector<mlir::Value> fenceValues(mlir::OpBuilder &b, mlir::Location loc,
                                           llvm::ArrayRef<mlir::Value> values);

} // namespace lowering
} // namespace tessera

#endif // TESSERA_CONTRACT_ATOMLOWERING_H
