// A row sum over four warps (tests/lit/tile-reduce.mlir runs it in f32 and,
// rewritten by sed, in f64, f16 and bf16).
module {
  tile.kernel @rsum(%X: !tile.tensor<?x256xf32>, %Y: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1] -> (s0)>) threads(128) blocks(%bx)
      attributes {dim_groups = {M = array<i64: 0, 1>}} {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<1x256xf32, fragment>
    %s = tile.alloc_fragment {name = "s"} : !tile.buffer<1xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%bx, %c0] to %x : !tile.tensor<?x256xf32> to !tile.buffer<1x256xf32, fragment>
    tile.reduce sum %x into %s {clear} : !tile.buffer<1x256xf32, fragment>, !tile.buffer<1xf32, fragment>
    tile.copy %s to %Y[%bx] : !tile.buffer<1xf32, fragment> to !tile.tensor<?xf32>
  }
}
