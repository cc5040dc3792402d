// Y = alpha * X + Y over N floats: the bridge tests' kernel (a tensor
// dimension, a scalar, a tail that is not a multiple of the tile).
#grid = affine_map<()[s0, s1] -> (s0 ceildiv 1024)>
module {
  tile.kernel @axpy(%x: !tile.tensor<?xf32>, %y: !tile.tensor<?xf32>, %alpha: f32) grid(#grid) threads(256) blocks(%bx) attributes {arg_names = ["X", "Y", "alpha"], dim_groups = {N = array<i64: 0, 1>}} {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "a"} : <1024xf32, fragment>
    %b = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "b"} : <1024xf32, fragment>
    %c1024 = arith.constant 1024 : index
    %base = arith.muli %bx, %c1024 : index
    tile.copy %x[%base] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.copy %y[%base] to %b : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] attributes {distribution = #tile.distribution<threads = 256, vector = 4>} {
      %u = tile.load %a[%i] : <1024xf32, fragment>
      %v = tile.load %b[%i] : <1024xf32, fragment>
      %m = arith.mulf %alpha, %u : f32
      %s = arith.addf %m, %v : f32
      tile.store %s, %b[%i] : <1024xf32, fragment>
    }
    tile.copy %b to %y[%base] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}
