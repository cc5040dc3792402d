module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @softmax(%X: !tile.tensor<?x1000xf16>, %Y: !tile.tensor<?x1000xf16>)
      grid(affine_map<()[s0, s1] -> (s0)>) threads(128) blocks(%bx)
      attributes {dim_groups = {M = array<i64: 0, 1>}} {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<1x1000xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : !tile.buffer<1xf32, fragment>
    %s = tile.alloc_fragment {name = "s"} : !tile.buffer<1xf32, fragment>
    %c0 = arith.constant 0 : index
    %log2e = arith.constant 1.44269504 : f32
    tile.copy %X[%bx, %c0] to %x : !tile.tensor<?x1000xf16> to !tile.buffer<1x1000xf32, fragment>
    tile.reduce max %x into %m {clear} : !tile.buffer<1x1000xf32, fragment>, !tile.buffer<1xf32, fragment>
    tile.parallel (%i, %j) in [1, 1000] {
      %v = tile.load %x[%i, %j] : !tile.buffer<1x1000xf32, fragment>
      %mi = tile.load %m[%i] : !tile.buffer<1xf32, fragment>
      %d = arith.subf %v, %mi : f32
      %e = arith.mulf %d, %log2e : f32
      %p = math.exp2 %e : f32
      tile.store %p, %x[%i, %j] : !tile.buffer<1x1000xf32, fragment>
    }
    tile.reduce sum %x into %s {clear} : !tile.buffer<1x1000xf32, fragment>, !tile.buffer<1xf32, fragment>
    tile.parallel (%i, %j) in [1, 1000] {
      %v = tile.load %x[%i, %j] : !tile.buffer<1x1000xf32, fragment>
      %si = tile.load %s[%i] : !tile.buffer<1xf32, fragment>
      %q = arith.divf %v, %si : f32
      tile.store %q, %x[%i, %j] : !tile.buffer<1x1000xf32, fragment>
    }
    tile.copy %x to %Y[%bx, %c0] : !tile.buffer<1x1000xf32, fragment> to !tile.tensor<?x1000xf16>
  }
}
