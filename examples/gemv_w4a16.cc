//===- gemv_w4a16.cc - Y = X * dequant(W) for a few rows of X -------------===//
//
// The decode form of examples/gemm_w4a16.cc: the same arguments and result
// (X: M x K f16; Wq: K/8 x N int32, eight 4-bit weights along K per word;
// S: ceil(K/128) x N f16 scales; Y: M x N f16), for M of 1 to a few rows,
// where the product is bound by reading the weights once. Tensor cores would
// idle on a 1-row tile and a dequantized f16 tile costs more shared-memory
// traffic than the packed weights themselves, so each thread unpacks its
// words in registers and multiplies every weight into each row of X on the
// CUDA cores. A block's `bn` columns over all of K:
//
//   - the pipelined loop streams k-tiles of packed words (`words` x `bn`
//     int32: a thread's words along a column's K), the matching X rows and
//     the tile's scales into shared memory;
//   - each thread adds, for each of its words, the eight weight-times-x
//     products, scaled by the group's scale, into its own partial sum per
//     word position (a fragment that lives across the loop);
//   - after the loop, the partial sums of a column meet through shared
//     memory and each column's total is stored once.
//
// Weights are unpacked without integer-to-float conversions (UnpackW4 in
// gemm_w4a16.h): per weight one logical operation, one add and one FMA per
// row, the 16^-e of a nibble folded into x (shared by the thread's columns).
//
//   bazel run //examples:gemv_w4a16 -- --target=sm_80 --emit=ptx
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/common/example.h"
#include "examples/gemm_w4a16.h"

namespace tessera::examples {

Kernel GemvW4A16(Dim M, Dim N, Dim K, const W4A16DecodeConfig& c, const std::string& name) {
  KernelBuilder T(name);
  Dim packed = Dim::Dynamic("KP"), groups = Dim::Dynamic("G");
  auto X = T.Tensor("X", {M, K}, f16), Wq = T.Tensor("Wq", {packed, N}, i32);
  auto S = T.Tensor("S", {groups, N}, f16), Y = T.Tensor("Y", {M, N}, f16);
  const int64_t bk = c.words * kW4PerWord, wordsPerGroup = kW4Group / kW4PerWord;
  const int64_t scaleRows = std::max<int64_t>(1, bk / kW4Group);
  T.Launch({CeilDiv(N, c.bn), CeilDiv(M, c.rows)}, c.threads, [&](Index bx, Index by) {
    RequireW4A16Shapes(T, X, Wq, S);
    auto Xs = T.AllocShared({c.rows, bk}, f16, "Xs");
    auto Qs = T.AllocShared({c.words, c.bn}, i32, "Qs");
    auto Ss = T.AllocShared({scaleRows, c.bn}, f16, "Ss");
    std::vector<Buffer> partial;
    for (int64_t r = 0; r < c.rows; ++r) {
      partial.push_back(T.AllocFragment({c.words, c.bn}, f32, absl::StrCat("partial", r)));
      T.Clear(partial.back());
    }
    T.Pipelined(CeilDiv(K, bk), c.stages, [&](Index k) {
      T.Copy(X.Tile(by * c.rows, k * bk), Xs);
      T.Copy(Wq.Tile(k * c.words, bx * c.bn), Qs);
      // The tile's groups: one row of scales per 128 rows of W (a k-tile
      // within a group reads that group's row).
      T.Copy(S.Tile(k * bk / kW4Group, bx * c.bn), Ss);
      T.Parallel({c.words, c.bn}, [&](Index p, Index j) {
        std::array<Scalar, kW4PerWord> weights = UnpackW4(Qs(p, j));
        std::vector<Scalar> dot(c.rows, Scalar(0.0));
        for (int i = 0; i < kW4PerWord; ++i)
          for (int64_t r = 0; r < c.rows; ++r)
            dot[r] = dot[r] +
                     weights[i] * (Cast(Xs(r, p * kW4PerWord + i), f32) * Scalar(UnpackedScale(i)));
        Scalar scale = Cast(Ss(p / wordsPerGroup, j), f32);
        for (int64_t r = 0; r < c.rows; ++r) partial[r](p, j) = partial[r](p, j) + dot[r] * scale;
      });
    });
    // Each column's partial sums, one per word position, meet in shared
    // memory; a thread per column adds them.
    auto sums = T.AllocShared({c.rows * c.words, c.bn}, f32, "sums");
    for (int64_t r = 0; r < c.rows; ++r)
      T.Parallel({c.words, c.bn},
                 [&](Index p, Index j) { sums(r * c.words + p, j) = partial[r](p, j); });
    auto out = T.AllocFragment({c.rows, c.bn}, f16, "out");
    T.Parallel({c.rows, c.bn}, [&](Index r, Index j) {
      Scalar total(0.0);
      for (int64_t p = 0; p < c.words; ++p) total = total + sums(r * c.words + p, j);
      out(r, j) = Cast(total, f16);
    });
    T.Copy(out, Y.Tile(by * c.rows, bx * c.bn));
  });
  return T.Build();
}

Example GemvW4A16Example() {
  return {"gemv_w4a16", [](const std::string& target) {
            return GemvW4A16(Dim::Dynamic("M"), Dim::Dynamic("N", 8), Dim::Dynamic("K", 8),
                             W4A16DecodeConfig::ForTarget(target), "gemv_w4a16");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::GemvW4A16Example())
