// An FP8 slice of a rank-3 tensor (tensor_dims: a group's [rows, K] of a
// [G, N, K] e4m3 tensor, as the grouped FP8 GEMM loads B) copied into
// shared memory and back out: the slice's start is an address of the
// element's storage type (LLVM has no FP8 type: an f8 getelementptr made
// the translation to LLVM IR crash).
// RUN: %tessera-compile %s --target=sm_80 --emit=ptx | FileCheck %s
// RUN: %tessera-compile %s --target=sm_60 --emit=ptx | FileCheck %s
// RUN: %tessera-compile %s --target=sm_80 --emit=lowered | FileCheck %s --check-prefix=GEP

// CHECK: .entry fp8_slice(
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
// GEP: llvm.getelementptr inbounds %{{.*}} : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// GEP-NOT: f8E4M3FN
module {
  tile.kernel @fp8_slice(%B: !tile.tensor<?x?x128xf8E4M3FN>, %O: !tile.tensor<?x?x128xf8E4M3FN>)
      grid(affine_map<()[s0, s1, s2, s3] -> (s1 ceildiv 64, s0)>) threads(128) blocks(%bx, %g)
      attributes {dim_groups = {G = array<i64: 0, 2>, N = array<i64: 1, 3>}} {
    %bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf8E4M3FN, shared>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row0 = arith.muli %bx, %c64 : index
    tile.copy %B[%g, %row0, %c0] to %bs {tensor_dims = array<i64: 1, 2>} : !tile.tensor<?x?x128xf8E4M3FN> to !tile.buffer<64x128xf8E4M3FN, shared>
    tile.copy %bs to %O[%g, %row0, %c0] {tensor_dims = array<i64: 1, 2>} : !tile.buffer<64x128xf8E4M3FN, shared> to !tile.tensor<?x?x128xf8E4M3FN>
  }
}
