// A persistent sm_90a GEMM of A (M x K) and B (N x K) of ELT, accumulated
// in f32, its accumulator scaled by an elementwise tile.parallel into a
// fragment `out` of OUT that is copied to D (the FP8 GEMM's epilogue);
// ELT, OUT, BK and ACCBK substituted with sed.
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xELT>, %B: !tile.tensor<?x?xELT>, %s: f32, %D: !tile.tensor<?x?xOUT>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s2 ceildiv 256, s0 ceildiv 128)>) threads(256) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 16, 16, 16, 1, 16>, persistent} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128xBKxELT, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<256xBKxELT, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x256xf32, fragment>
    %out = tile.alloc_fragment {name = "out"} : !tile.buffer<128x256xOUT, fragment>
    tile.clear %acc : !tile.buffer<128x256xf32, fragment>
    %cbk = arith.constant BK : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xELT>
    %count = arith.ceildivui %k, %cbk : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c256 : index
    tile.pipelined %i = 0 to %count stages 4 {
      %kk = arith.muli %i, %cbk : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xELT> to !tile.buffer<128xBKxELT, shared>
      tile.copy %B[%col, %kk] to %Bs : !tile.tensor<?x?xELT> to !tile.buffer<256xBKxELT, shared>
      tile.gemm %As, %Bs, %acc PREC {transpose_b} : !tile.buffer<128xBKxELT, shared>, !tile.buffer<256xBKxELT, shared>, !tile.buffer<128x256xf32, fragment>
    }
    tile.parallel (%i, %j) in [128, 256] {
      %x = tile.load %acc[%i, %j] : !tile.buffer<128x256xf32, fragment>
      %y = arith.mulf %x, %s : f32
      %z = tile.cast %y {saturate} : f32 to OUT
      tile.store %z, %out[%i, %j] : !tile.buffer<128x256xOUT, fragment>
    }
    tile.copy %out to %D[%row, %col] : !tile.buffer<128x256xOUT, fragment> to !tile.tensor<?x?xOUT>
  }
}
