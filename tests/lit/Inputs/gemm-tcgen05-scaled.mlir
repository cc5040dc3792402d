// gemm-tcgen05.mlir's kernel whose loop also squares the accumulator after
// each gemm (a body that reads and writes the accumulator).
module attributes {tile.target = #tile.target<"sm_100a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 128)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    %mx = tile.alloc_fragment {name = "mx"} : !tile.buffer<128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
      tile.parallel (%i2, %j2) in [128, 128] {
        %x = tile.load %acc[%i2, %j2] : !tile.buffer<128x128xf32, fragment>
        %x2 = arith.mulf %x, %x : f32
        tile.store %x2, %acc[%i2, %j2] : !tile.buffer<128x128xf32, fragment>
      }
    }
    tile.reduce max %acc into %mx {clear} : !tile.buffer<128x128xf32, fragment>, !tile.buffer<128xf32, fragment>
    tile.parallel (%r, %c) in [128, 128] {
      %v = tile.load %acc[%r, %c] : !tile.buffer<128x128xf32, fragment>
      %m = tile.load %mx[%r] : !tile.buffer<128xf32, fragment>
      %q = arith.divf %v, %m : f32
      tile.store %q, %acc[%r, %c] : !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
