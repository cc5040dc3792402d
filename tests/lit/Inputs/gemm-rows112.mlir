// N = 56: 112-byte rows of B, which no swizzle describes (tests/lit/gemm-atoms.mlir).
module attributes {tile.target = #tile.target<"sm_60">} {
  tile.kernel @gemm(%A: !tile.tensor<64x64xf16>, %B: !tile.tensor<64x56xf16>, %C: !tile.tensor<64x56xf32>) grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %a = tile.alloc_shared {name = "a"} : !tile.buffer<64x64xf16, shared>
    %b = tile.alloc_shared {name = "b"} : !tile.buffer<64x56xf16, shared>
    %c = tile.alloc_fragment : !tile.buffer<64x56xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.clear %c : !tile.buffer<64x56xf32, fragment>
    tile.copy %A[%c0, %c0] to %a : !tile.tensor<64x64xf16> to !tile.buffer<64x64xf16, shared>
    tile.copy %B[%c0, %c0] to %b : !tile.tensor<64x56xf16> to !tile.buffer<64x56xf16, shared>
    tile.gemm %a, %b, %c : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x56xf16, shared>, !tile.buffer<64x56xf32, fragment>
    tile.copy %c to %C[%c0, %c0] : !tile.buffer<64x56xf32, fragment> to !tile.tensor<64x56xf32>
  }
}
