//===- moe.h - The mixture-of-experts layer's kernels -----------*- C++ -*-===//
//
// Declares examples/moe.cc's kernels (see there for the layer and its
// arguments) so the workloads and the benchmarks name their shapes.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_EXAMPLES_MOE_H_
#define TESSERA_EXAMPLES_MOE_H_

#include <string>

#include "examples/gemm.h"
#include "frontend/Tessera.h"

namespace tessera::examples {

/// The rows of a permuted row block: each expert's rows are padded to a
/// multiple (the grouped GEMM's contiguous layout, GroupedConfig's bm).
inline constexpr int64_t kMoeBlockRows = 128;

/// Ids [N] i32 (N = T * TOPK, entry t * TOPK + s), Rank [N] i32, Counts [E]
/// i32 (zero on entry; each entry's expert counted).
Kernel MoeAlign(const std::string &name);
/// Counts [E] i32, Start [E + 1] i32, Group [MB] i32.
Kernel MoePlan(const std::string &name);
/// X [T, H] bf16, Ids [T, TOPK] i32, Rank [T, TOPK] i32, Start [E + 1] i32,
/// Counts [E] i32 (cleared), Xp [MP, H] bf16.
Kernel MoeGather(const std::string &name);
/// Xp [MP, H], W13 [E, 2F, H], Group [MB] i32, Act [MP, F] (bf16 or the
/// config's dtype).
Kernel MoeUp(const GemmConfig &c, const std::string &name);
/// D [MP, H] bf16, Ids [T, TOPK] i32, Rank [T, TOPK] i32, Weights [T, TOPK]
/// f32, Start [E + 1] i32, Y [T, H] bf16.
Kernel MoeCombine(const std::string &name);

}  // namespace tessera::examples

#endif  // TESSERA_EXAMPLES_MOE_H_
