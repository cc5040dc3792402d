// A k-loop that stages a row of scales beside its operands: a [1, 64] f32
// tile of S (K/64 x N, rows contiguous) read by a tile.parallel after each
// iteration's gemm (tma-row-scales.mlir).
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @scaled(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %S: !tile.tensor<?x?xf32>, %C: !tile.tensor<?x?xf32>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5, s6, s7] -> (s7 ceildiv 64, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 8, 8, 8, 8, 1, 4, 8, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x64xf16, shared>
    %Ss = tile.alloc_shared {name = "Ss"} : !tile.buffer<1x64xf32, shared>
    %part = tile.alloc_fragment {name = "part"} : !tile.buffer<64x64xf32, fragment>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c64 : index
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x64xf16, shared>
      tile.copy %S[%i, %col] to %Ss : !tile.tensor<?x?xf32> to !tile.buffer<1x64xf32, shared>
      tile.clear %part : !tile.buffer<64x64xf32, fragment>
      tile.gemm %As, %Bs, %part : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
      tile.parallel (%r, %c) in [64, 64] {
        %p = tile.load %part[%r, %c] : !tile.buffer<64x64xf32, fragment>
        %s = tile.load %Ss[%c0, %c] : !tile.buffer<1x64xf32, shared>
        %a = tile.load %acc[%r, %c] : !tile.buffer<64x64xf32, fragment>
        %m = arith.mulf %p, %s : f32
        %n = arith.addf %a, %m : f32
        tile.store %n, %acc[%r, %c] : !tile.buffer<64x64xf32, fragment>
      }
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf32>
  }
}
