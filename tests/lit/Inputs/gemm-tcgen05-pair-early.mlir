// gemm-tcgen05.mlir with M a multiple of 256 and a shared buffer (Ws) the
// code before the loop uses, where the stages lie: the lowering moves it
// after the ring's mbarriers.
module attributes {tile.target = #tile.target<"sm_100a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 128)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 256, 8, 8, 8, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    %mx = tile.alloc_fragment {name = "mx"} : !tile.buffer<128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %Ws = tile.alloc_shared {name = "Ws"} : !tile.buffer<128x64xf16, shared>
    %w = tile.alloc_fragment {name = "w"} : !tile.buffer<128x64xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    %c0 = arith.constant 0 : index
    tile.copy %A[%row, %c0] to %Ws : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
    tile.copy %Ws to %w : !tile.buffer<128x64xf16, shared> to !tile.buffer<128x64xf32, fragment>
    tile.copy %w to %C[%row, %c0] : !tile.buffer<128x64xf32, fragment> to !tile.tensor<?x?xf16>
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
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
