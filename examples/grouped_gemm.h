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
GemmConfig GroupedConfig(const std::string &target, DType dtype);

/// 1 where `x` > 0, else 0.
Index Positive(const Index &x);

/// The block's tile {column, row block} of a grid of `columns` x `rows`
/// tiles in `c`'s raster order.
std::pair<Index, Index> GroupedTileOf(const GemmConfig &c, const Index &x, const Index &y,
                                      const Index &columns, const Index &rows);

/// DeepGEMM's contiguous layout: A [M, K] (every group's rows, each group
/// padded to whole 128-row blocks), B [G, N, K], Group [M / 128] (a row
/// block's group; negative for padding, whose C rows get zeros), C [M, N].
Kernel GroupedGemmContiguous(const GemmConfig &c, const std::string &name);

/// DeepGEMM's masked layout: A [G, MAXM, K], Count [G], C [G, MAXM, N].
Kernel GroupedGemmMasked(const GemmConfig &c, const std::string &name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_GROUPED_GEMM_H_
