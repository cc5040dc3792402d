// A gemm whose A is a reduction's result (replicated: every thread holds
// it whole, in no atom's A layout): staged through shared memory.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @reduced_a(%X: !tile.tensor<4x8x2xf32>, %B: !tile.tensor<8x8xf32>, %C: !tile.tensor<4x8xf32>)
      grid(affine_map<() -> (1)>) threads(32) blocks(%bx) {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<4x8x2xf32, fragment>
    %p = tile.alloc_fragment {name = "p"} : !tile.buffer<4x8xf32, fragment>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<8x8xf32, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<4x8xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%c0, %c0, %c0] to %x : !tile.tensor<4x8x2xf32> to !tile.buffer<4x8x2xf32, fragment>
    tile.reduce sum %x into %p {clear} : !tile.buffer<4x8x2xf32, fragment>, !tile.buffer<4x8xf32, fragment>
    tile.copy %B[%c0, %c0] to %Bs : !tile.tensor<8x8xf32> to !tile.buffer<8x8xf32, shared>
    tile.clear %acc : !tile.buffer<4x8xf32, fragment>
    tile.gemm %p, %Bs, %acc : !tile.buffer<4x8xf32, fragment>, !tile.buffer<8x8xf32, shared>, !tile.buffer<4x8xf32, fragment>
    tile.copy %acc to %C[%c0, %c0] : !tile.buffer<4x8xf32, fragment> to !tile.tensor<4x8xf32>
  }
}
