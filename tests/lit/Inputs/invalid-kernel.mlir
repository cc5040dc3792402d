// A module that parses but fails verification (tests/lit/tessera-compile.mlir).
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @too_many_threads() grid(affine_map<()[] -> (1)>) threads(4096) blocks(%bx) {
  }
}
