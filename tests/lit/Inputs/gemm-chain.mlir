// Two chained gemms, the second reading the first's result from registers:
// O = f16(Q K^T) V over tiles of 64 rows (attention without the softmax).
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @chain(%Q: !tile.tensor<?x64xf16>, %K: !tile.tensor<?x64xf16>, %V: !tile.tensor<?x64xf16>, %O: !tile.tensor<?x64xf16>)
      grid(affine_map<()[s0, s1, s2, s3] -> (s0 ceildiv 64)>) threads(128) blocks(%bx)
      attributes {dim_divisibility = array<i64: 1, 1, 1, 1>} {
    %Qs = tile.alloc_shared {name = "Qs"} : !tile.buffer<64x64xf16, shared>
    %Ks = tile.alloc_shared {name = "Ks"} : !tile.buffer<64x64xf16, shared>
    %Vs = tile.alloc_shared {name = "Vs"} : !tile.buffer<64x64xf16, shared>
    %s = tile.alloc_fragment {name = "s"} : !tile.buffer<64x64xf32, fragment>
    %p = tile.alloc_fragment {name = "p"} : !tile.buffer<64x64xf16, fragment>
    %o = tile.alloc_fragment {name = "o"} : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %bx, %c64 : index
    %n = tile.dim %K[0] : !tile.tensor<?x64xf16>
    %count = arith.ceildivui %n, %c64 : index
    tile.copy %Q[%row, %c0] to %Qs : !tile.tensor<?x64xf16> to !tile.buffer<64x64xf16, shared>
    tile.clear %o : !tile.buffer<64x64xf32, fragment>
    tile.pipelined %j = 0 to %count stages 2 {
      %kv = arith.muli %j, %c64 : index
      tile.copy %K[%kv, %c0] to %Ks : !tile.tensor<?x64xf16> to !tile.buffer<64x64xf16, shared>
      tile.copy %V[%kv, %c0] to %Vs : !tile.tensor<?x64xf16> to !tile.buffer<64x64xf16, shared>
      tile.clear %s : !tile.buffer<64x64xf32, fragment>
      tile.gemm %Qs, %Ks, %s {transpose_b} : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
      tile.parallel (%i, %k) in [64, 64] {
        %x = tile.load %s[%i, %k] : !tile.buffer<64x64xf32, fragment>
        %h = arith.truncf %x : f32 to f16
        tile.store %h, %p[%i, %k] : !tile.buffer<64x64xf16, fragment>
      }
      tile.gemm %p, %Vs, %o : !tile.buffer<64x64xf16, fragment>, !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %o to %O[%row, %c0] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x64xf16>
  }
}
