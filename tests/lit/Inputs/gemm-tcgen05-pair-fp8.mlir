// A 128 x 128 block of C = A B^T in FP8 (e4m3) on one warpgroup: A is
// M x K and B is N x K (K-major, as 8-bit tensor cores read it). M is
// promised a multiple of 256, so the blocks along y come in pairs.
module attributes {tile.target = #tile.target<"sm_100a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf8E4M3FN>, %B: !tile.tensor<?x?xf8E4M3FN>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 128)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 256, 16, 8, 16, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x128xf8E4M3FN, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<128x128xf8E4M3FN, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf8E4M3FN>
    %count = arith.ceildivui %k, %c128 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    tile.pipelined %i = 0 to %count stages 4 {
      %kk = arith.muli %i, %c128 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf8E4M3FN> to !tile.buffer<128x128xf8E4M3FN, shared>
      tile.copy %B[%col, %kk] to %Bs : !tile.tensor<?x?xf8E4M3FN> to !tile.buffer<128x128xf8E4M3FN, shared>
      tile.gemm %As, %Bs, %acc {transpose_b} : !tile.buffer<128x128xf8E4M3FN, shared>, !tile.buffer<128x128xf8E4M3FN, shared>, !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
