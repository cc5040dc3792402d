// A GEMM whose A is a tile.view (its address read from a pointer array): on
// sm_90a no tensor map can describe it, so the remark names the view and the
// k-loop is the cp.async pipeline feeding wgmma; sm_80 runs the same loop
// with mma.sync. The `align` promise is checked once (a trap) and lets the
// view's copies move 16 bytes.
// RUN: %tessera-compile %s --target=sm_90a --emit=ptx 2>%t.remarks | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: sed -e 's/sm_90a/sm_80/' %s | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM80

// REMARK: remark: pipelining with cp-async-multistage instead of tma-warp-specialized: the copy into 'As' cannot be a bulk tensor copy: its tensor is a tile.view, whose address is read from data
// CHECK: ld.global.b64
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: cp.async.cg.shared.global
// SM90: wgmma.mma_async
// SM80: mma.sync.aligned.m16n8k16
// CHECK: trap;
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @gemm(%P: !tile.tensor<?xi64>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4] -> (s4 ceildiv 128, s2 ceildiv 128)>) threads(256) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %m = tile.dim %C[0] : !tile.tensor<?x?xf16>
    %k = tile.dim %B[0] : !tile.tensor<?x?xf16>
    %A = tile.view %P[%c0] sizes(%m, %k) {align = 16} : !tile.tensor<?xi64> to !tile.tensor<?x?xf16>
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
