// B loaded into a fragment: no atom reads B from registers, so it is staged
// through a shared buffer of its own.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @fragment_b(%A: !tile.tensor<64x32xf16>, %B: !tile.tensor<32x64xf16>, %C: !tile.tensor<64x64xf16>)
      grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x32xf16, shared>
    %Bf = tile.alloc_fragment {name = "Bf"} : !tile.buffer<32x64xf16, fragment>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %A[%c0, %c0] to %As : !tile.tensor<64x32xf16> to !tile.buffer<64x32xf16, shared>
    tile.copy %B[%c0, %c0] to %Bf : !tile.tensor<32x64xf16> to !tile.buffer<32x64xf16, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %As, %Bf, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, fragment>, !tile.buffer<64x64xf32, fragment>
    tile.copy %acc to %C[%c0, %c0] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<64x64xf16>
  }
}
