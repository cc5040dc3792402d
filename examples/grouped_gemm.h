//===- grouped_gemm.h - The grouped GEMM, for reuse --------------*- C++ -*-===//
//
// Declares examples/grouped_gemm.cc's kernels and their schedule so the MoE
// layer (examples/moe.cc) builds its down projection from the same kernel
// and its up projection from the same tiles.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_GROUPED_GEMM_H_
#define TESSERA_EXAMPLES_GROUPED_GEMM_H_

#include <string>
#include <utility>

#include "examples/gemm.h"
#include "frontend/Tessera.h"

namespace tessera::examples {

/// The schedule of a group's tiles: the target's GEMM tiles and schedule
/// (on sm_90a persistent), B K-major, 128-row blocks (the contiguous
/// layout's row block), the GEMM's grouped raster order.
GemmConfig GroupedConfig(const std::string& target, DType dtype);

/// 1 where `x` > 0, else 0.
Index Positive(const Index& x);

/// The block's tile {column, row block} of a grid of `columns` x `rows`
/// tiles in `c`'s raster order.
std::pair<Index, Index> GroupedTileOf(const GemmConfig& c, const Index& x, const Index& y,
                                      const Index& columns, const Index& rows);

/// DeepGEMM's contiguous layout: A [M, K] (every group's rows, each group
/// padded to whole 128-row blocks), B [G, N, K], Group [M / 128] (a row
/// block's group; negative for padding, whose C rows get zeros), C [M, N].
Kernel GroupedGemmContiguous(const GemmConfig& c, const std::string& name);

/// DeepGEMM's masked layout: A [G, MAXM, K], Count [G], C [G, MAXM, N].
Kernel GroupedGemmMasked(const GemmConfig& c, const std::string& name);

/// The rows of the contiguous layout's row block (each group padded to a
/// multiple).
inline constexpr int64_t kGroupedBlockRows = 128;

/// The pointer-array form: groups of any sizes, each operand its own
/// allocation. PtrA, PtrB, PtrC (i64, G entries) hold group g's addresses
/// of A (m x k), B (n x k, K-major) and C (m x n), row-major and dense;
/// Sizes (i32, G x 3) its m, n, k; TileEnd (i32, G) the running sum over
/// groups of ceil(m / 128) * ceil(n / 128) (kGroupedBlockRows x
/// kPointerTileColumns tiles), and the size argument TILES its last entry
/// (the grid). With `align` 16 the addresses and the rows of every operand
/// must be multiples of 16 bytes (n and k multiples of 8 in 16-bit types;
/// the kernel traps otherwise); with 0 any sizes and addresses of the
/// element type's alignment.
Kernel GroupedGemmPointers(const GemmConfig& c, int64_t align, const std::string& name);

/// The columns of a pointer-array tile (its rows: kGroupedBlockRows).
inline constexpr int64_t kPointerTileColumns = 128;
/// The rows and columns of grouped_gemm_ptr_any's tiles (align 0).
inline constexpr int64_t kPointerAnyTile = 64;

/// GroupedConfig with the pointer-array form's tiles: 128 x 128, on sm_90a
/// 128 x 256 (each block past a group's wider tiles idle).
GemmConfig PointerGroupedConfig(const std::string& target, DType dtype);

/// The block-scaled FP8 forms' tiles: `bm` divides 128 (a block lies in one
/// group), `bn` a multiple of 128 (whole scale blocks of B).
struct Fp8GroupedConfig {
  int64_t bm = 128, bn = 128;
  int threads = 256, stages = 4;
  static Fp8GroupedConfig ForTarget(const std::string& target);
};

/// Block-scaled FP8 (examples/fp8_gemm_blockwise.cc's scales), contiguous:
/// A [M, K] e4m3 with SA [K/128, M] f32 (A's scales transposed, per row and
/// 128 columns), B [G, N, K] e4m3 with SB [G, N/128, K/128] f32 (per 128 x
/// 128 block), Group [M / 128] i32, D [M, N] bf16.
Kernel GroupedGemmFp8Contiguous(const Fp8GroupedConfig& c, const std::string& name);

/// Block-scaled FP8, masked: A [G, MAXM, K] with SA [G, K/128, MAXM], B and
/// SB as above, Count [G] i32, D [G, MAXM, N] bf16.
Kernel GroupedGemmFp8Masked(const Fp8GroupedConfig& c, const std::string& name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_GROUPED_GEMM_H_
