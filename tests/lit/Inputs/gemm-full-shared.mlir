// A 128 x 256 x 64 wgmma GEMM with 4 stages (192 KiB) and a buffer `keep`
// live across the loop (written before it, read after it) that brings the plan
// to KEEP + 196608 bytes.
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>,
                    %X: !tile.tensor<?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s3 ceildiv 256, s0 ceildiv 128)>)
      threads(256) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x256xf16, shared>
    %keep = tile.alloc_shared {name = "keep"} : !tile.buffer<KEEPxf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x256xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%c0] to %keep : !tile.tensor<?xf16> to !tile.buffer<KEEPxf16, shared>
    tile.clear %acc : !tile.buffer<128x256xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c256 : index
    tile.pipelined %i = 0 to %count stages 4 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x256xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x256xf16, shared>, !tile.buffer<128x256xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x256xf32, fragment> to !tile.tensor<?x?xf16>
    tile.copy %keep to %X[%c0] : !tile.buffer<KEEPxf16, shared> to !tile.tensor<?xf16>
  }
}
