//===- paged_gather.cc - Rows of a paged KV cache into a dense tensor -----===//
//
// The addressing of a paged KV cache (vLLM's PagedAttention): keys live in
// a pool of pages, Pool: [pages, P, d], and sequence b's page k is
// Table[b, k]; sequence b has Lens[b] rows. The kernel copies each
// sequence's rows into a dense Out: [batch, seq, d], Out[b, r] =
// Pool[Table[b, r / P], r % P] for r < Lens[b] (rows of the last page past
// Lens[b] are copied too, up to Out's seq). Each block walks `chunk` pages
// of one sequence in a pipelined loop whose iteration count comes from
// Lens and whose tile offsets come from Table: the page index is read from
// the table inside the loop, so the page loads of later iterations are in
// flight while this one is stored.
//
//   bazel run //examples:paged_gather -- --target=sm_90a --emit=ptx
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"

namespace tessera::examples {

Kernel PagedGather(int64_t pageSize, int64_t d, int64_t chunk, int threads, int stages,
                   const std::string& name) {
  KernelBuilder T(name);
  Dim batch = Dim::Dynamic("B"), maxPages = Dim::Dynamic("MP");
  auto Pool = T.Tensor("Pool", {Dim::Dynamic("PAGES"), pageSize, d}, f16);
  auto Table = T.Tensor("Table", {batch, maxPages}, i32);
  auto Lens = T.Tensor("Lens", {batch}, i32);
  auto Out = T.Tensor("Out", {batch, Dim::Dynamic("S"), d}, f16);
  T.Launch({CeilDiv(maxPages, chunk), batch}, threads, [&](Index g, Index b) {
    auto page = T.AllocShared({pageSize, d}, f16, "page");
    // This block's pages: [first, first + count) of the sequence's.
    Index pages = CeilDiv(Lens(b), Index(pageSize));
    Index first = Min(pages, g * chunk);
    T.Pipelined(Min(Index(chunk), pages - first), stages, [&](Index k) {
      Index p = Table(b, first + k);
      T.Copy(Pool.Tile(p, 0, 0).Along({1, 2}), page);
      T.Copy(page, Out.Tile(b, (first + k) * pageSize, 0).Along({1, 2}));
    });
  });
  return T.Build();
}

Example PagedGatherExample() {
  return {"paged_gather", [](const std::string&) {
            return PagedGather(/*pageSize=*/16, /*d=*/128, /*chunk=*/8, /*threads=*/128,
                               /*stages=*/3, "paged_gather");
          }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::PagedGatherExample())
