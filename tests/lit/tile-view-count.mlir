// A loop whose count is a tile.view's dimension: the producer of sm_90a's
// warp-specialized loop recomputes its count before the view exists, so the
// planner refuses it (naming why) and the loop runs as cp.async + wgmma,
// although its copies are of kernel arguments that TMA could load.
// RUN: %tessera-compile %s --target=sm_90a --emit=ptx 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// REMARK: remark: pipelining with cp-async-multistage instead of tma-warp-specialized: the iteration count is not arithmetic of the block coordinates and kernel arguments
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: cp.async.cg.shared.global
// CHECK: wgmma.mma_async
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @gemm(%P: !tile.tensor<?xi64>, %A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s6 ceildiv 128, s4 ceildiv 128)>) threads(256) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 8, 8, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %n = tile.read %P[%c0] : !tile.tensor<?xi64>
    %V = tile.view %P[%c0] sizes(%n) : !tile.tensor<?xi64> to !tile.tensor<?x64xf16>
    %k = tile.dim %V[0] : !tile.tensor<?x64xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
