module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %bias: !tile.tensor<1x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s6 ceildiv 9223372036854775806, s0 ceildiv 9223372036854775807)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 8, 1, 8>, persistent} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %bs = tile.alloc_shared {name = "bias_tile"} : !tile.buffer<1x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    tile.pipelined %i = 0 to %count stages 4 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %bias[%c0, %col] to %bs : !tile.tensor<1x?xf16> to !tile.buffer<1x128xf16, shared>
    tile.parallel (%i, %j) in [128, 128] {
      %v = tile.load %acc[%i, %j] : !tile.buffer<128x128xf32, fragment>
      %b = tile.load %bs[%c0, %j] : !tile.buffer<1x128xf16, shared>
      %bf = arith.extf %b : f16 to f32
      %s = arith.addf %v, %bf : f32
      tile.store %s, %acc[%i, %j] : !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
