// Vector add, C = A + B, written directly in the tile dialect.
// tessera-compile --target=sm_80 --emit=ptx examples/mlir/vector_add.mlir
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @vector_add(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>, %C: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1, s2] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx)
      attributes {arg_names = ["A", "B", "C"], dim_groups = {N = array<i64: 0, 1, 2>}} {
    %a = tile.alloc_fragment {name = "a"} : !tile.buffer<1024xf32, fragment>
    %b = tile.alloc_fragment {name = "b"} : !tile.buffer<1024xf32, fragment>
    %c1024 = arith.constant 1024 : index
    %off = arith.muli %bx, %c1024 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.copy %B[%off] to %b : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] {
      %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
      %y = tile.load %b[%i] : !tile.buffer<1024xf32, fragment>
      %s = arith.addf %x, %y : f32
      tile.store %s, %a[%i] : !tile.buffer<1024xf32, fragment>
    }
    tile.copy %a to %C[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}
