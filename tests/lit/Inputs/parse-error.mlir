// An input with a syntax error on line 4, column 16 (tests/lit/tessera-compile.mlir).
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @broken(%A: !tile.tensor<?xf32>) grid(affine_map<()[s0] -> (s0)>) threads(32) blocks(%bx) {
    %x = arith.constant : index
  }
}
