//===- vector_add.cc - C = A + B, the first Tessera kernel ----------------===//
//
// Each block copies a tile of A and B into fragments (registers, 16-byte
// loads), adds them elementwise and copies the sum to C. The default tile
// (1024 elements, 256 threads: one 16-byte access per tensor per thread) was
// the fastest of the variants timed on the H200 (benchmarks/RESULTS.md). The compiler
// handles the tail when N is not a multiple of the tile.
//
//   bazel run //examples:vector_add -- --target=sm_80 --emit=ptx
//   bazel run //examples:vector_add              # run, check, time on a GPU
//
//===----------------------------------------------------------------------===//

#include "examples/common/example.h"

namespace tessera::examples {

Kernel VectorAdd(Dim n, int64_t block = 1024, int threads = 256,
                 const std::string& name = "vector_add") {
  KernelBuilder T(name);
  auto A = T.Tensor("A", {n}, f32), B = T.Tensor("B", {n}, f32), C = T.Tensor("C", {n}, f32);
  T.Launch({CeilDiv(n, block)}, threads, [&](Index bx) {
    auto a = T.AllocFragment({block}, f32, "a"), b = T.AllocFragment({block}, f32, "b");
    T.Copy(A.Tile(bx * block), a);
    T.Copy(B.Tile(bx * block), b);
    T.Parallel({block}, [&](Index i) { a(i) = a(i) + b(i); });
    T.Copy(a, C.Tile(bx * block));
  });
  return T.Build();
}

Example VectorAddExample() {
  return {"vector_add", [](const std::string&) { return VectorAdd(Dim::Dynamic("N")); }};
}

}  // namespace tessera::examples

TESSERA_EXAMPLE_MAIN(tessera::examples::VectorAddExample())
