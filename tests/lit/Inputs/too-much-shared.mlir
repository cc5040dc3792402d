// 80 KiB of shared memory: fits sm_80, not sm_60 (tests/lit/tessera-compile.mlir).
module {
  tile.kernel @big(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 20480)>) threads(256) blocks(%bx) {
    %s = tile.alloc_shared {name = "staging"} : !tile.buffer<20480xf32, shared>
    %c = arith.constant 20480 : index
    %off = arith.muli %bx, %c : index
    tile.copy %A[%off] to %s : !tile.tensor<?xf32> to !tile.buffer<20480xf32, shared>
    tile.copy %s to %B[%off] : !tile.buffer<20480xf32, shared> to !tile.tensor<?xf32>
  }
}
