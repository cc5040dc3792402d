// S accumulates in an f32 gemm (SIMT FMA: a distribution across threads);
// P = f16(S) shares its registers but is read from registers as the A of an
// f16 gemm (the mma.sync A layout): the two uses conflict.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @conflict(%X: !tile.tensor<64x32xf32>, %Y: !tile.tensor<32x64xf32>, %V: !tile.tensor<64x64xf16>, %O: !tile.tensor<64x64xf16>)
      grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %Xs = tile.alloc_shared {name = "Xs"} : !tile.buffer<64x32xf32, shared>
    %Ys = tile.alloc_shared {name = "Ys"} : !tile.buffer<32x64xf32, shared>
    %Vs = tile.alloc_shared {name = "Vs"} : !tile.buffer<64x64xf16, shared>
    %s = tile.alloc_fragment {name = "s"} : !tile.buffer<64x64xf32, fragment>
    %p = tile.alloc_fragment {name = "p"} : !tile.buffer<64x64xf16, fragment>
    %o = tile.alloc_fragment {name = "o"} : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%c0, %c0] to %Xs : !tile.tensor<64x32xf32> to !tile.buffer<64x32xf32, shared>
    tile.copy %Y[%c0, %c0] to %Ys : !tile.tensor<32x64xf32> to !tile.buffer<32x64xf32, shared>
    tile.copy %V[%c0, %c0] to %Vs : !tile.tensor<64x64xf16> to !tile.buffer<64x64xf16, shared>
    tile.clear %s : !tile.buffer<64x64xf32, fragment>
    tile.gemm %Xs, %Ys, %s : !tile.buffer<64x32xf32, shared>, !tile.buffer<32x64xf32, shared>, !tile.buffer<64x64xf32, fragment>
    tile.parallel (%i, %k) in [64, 64] {
      %x = tile.load %s[%i, %k] : !tile.buffer<64x64xf32, fragment>
      %h = arith.truncf %x : f32 to f16
      tile.store %h, %p[%i, %k] : !tile.buffer<64x64xf16, fragment>
    }
    tile.clear %o : !tile.buffer<64x64xf32, fragment>
    tile.gemm %p, %Vs, %o : !tile.buffer<64x64xf16, fragment>, !tile.buffer<64x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    tile.copy %o to %O[%c0, %c0] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<64x64xf16>
  }
}
