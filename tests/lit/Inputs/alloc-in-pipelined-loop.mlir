// A buffer allocated inside a pipelined loop (tile-plan-shared-memory.mlir).
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @alloc_in_loop(%A: !tile.tensor<?x64xf16>) grid(affine_map<()[s0] -> (1)>) threads(128) blocks(%bx) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    tile.pipelined %k = 0 to %c4 stages 3 {
      %a = tile.alloc_shared {name = "a"} : !tile.buffer<32x64xf16, shared>
      %row = arith.muli %k, %c32 : index
      tile.copy %A[%row, %c0] to %a : !tile.tensor<?x64xf16> to !tile.buffer<32x64xf16, shared>
    }
  }
}
