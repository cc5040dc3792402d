//===- TileQueries.h - What passes and lowering ask of tile IR --*- C++ -*-===//
//
// Questions the tile-level passes and the kernel lowering (and through it
// the backends' strategies) both ask: the MMA atom a gemm takes, how warps
// tile its accumulator, a shared buffer's swizzle, the planned shared
// memory. Defined in lowering/AtomSelection.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LOWERING_TILEQUERIES_H
#define TESSERA_LOWERING_TILEQUERIES_H

#include "contract/AtomLowering.h"
#include "contract/Backend.h"
#include "ir/TileDialect.h"

namespace tessera {

using lowering::WarpTiling;

/// The kernel attribute holding the planned shared memory size in bytes.
constexpr llvm::StringLiteral kSharedMemoryBytesAttr = "tile.shared_memory_bytes";

/// The warp tiling of an m x n accumulator for an atom whose family tiles
/// it over warps (asked of the atom's lowering), or none. `wholeRows`:
/// every warp spans all n columns (a gemm reading A from registers: each
/// warp holds whole rows of A). `warpsM` (0: any): only a tiling with that
/// many warps along M.
std::optional<WarpTiling> chooseWarpTiling(const MmaAtom &atom, int64_t m, int64_t n,
                                           int64_t threads, bool wholeRows = false,
                                           int64_t warpsM = 0);

/// The register slots per thread of a row slice of `rows` rows of `mma`
/// (per step of a warp's tile, one per row its registers reach), and the
/// lane masks whose xor-shuffles reach every lane holding the same row
/// (the lane bits whose bases are columns: within a quad for m16n8).
int64_t rowSliceSlots(int64_t rows, tile::MmaLayoutAttr mma);
llvm::SmallVector<int32_t> rowSliceLaneMasks(tile::MmaLayoutAttr mma);

/// The registers of a step of `mma` that hold consecutive columns (its
/// lowest register bases c1, c2, ...): what a thread reads or writes as one
/// vector.
int64_t mmaVectorRegisters(tile::MmaLayoutAttr mma);
/// What register `reg` of a step of `mma` adds to its element's row
/// (`rows`) or column: its index bits times their bases.
int64_t mmaRegisterOffset(tile::MmaLayoutAttr mma, int64_t reg, bool rows);

/// The swizzle of a shared buffer of `type` (SharedSwizzle, contract/AtomLowering.h).
SharedSwizzle getSharedSwizzle(tile::BufferType type);

/// Selects the MMA atom for `gemm` from the backend's preference list: a
/// forced atom (error if illegal), else the first legal one (a remark when
/// it is not the backend's first choice).
mlir::FailureOr<MmaAtom> selectMmaAtom(tile::GemmOp gemm, const Backend &backend,
                                       const ComputeCapability &cc, int64_t threads);

/// The atom selectMmaAtom would pick, without diagnostics; none when no atom
/// is legal for the gemm's operands as they are.
std::optional<MmaAtom> findMmaAtom(tile::GemmOp gemm, const Backend &backend,
                                   const ComputeCapability &cc, int64_t threads);

namespace lowering {

/// Whether `op` is plain arithmetic (index math and the like): no regions,
/// outside the tile dialect, free of memory effects. The lowering clones
/// such ops as they are, and may recompute them elsewhere.
bool isPlainArithmetic(mlir::Operation *op);

/// Whether `op` itself (not its regions) writes a shared buffer in the
/// generic proxy: a copy, tile.store, fill or clear into one.
bool writesSharedBuffer(mlir::Operation *op);

/// The largest power of two known to divide `value` (at most kMaxDivisor),
/// from constants, products and sums of the kernel's index arithmetic.
int64_t knownDivisor(mlir::Value value);

} // namespace lowering

} // namespace tessera

#endif // TESSERA_LOWERING_TILEQUERIES_H
