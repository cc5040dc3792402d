// A gemm template for the data-type atom tests: A is M x K and B is N x K
// (transpose_b, the K-major form 8-bit and TF32 tensor cores read) of ELT,
// C of ACC; PREC is empty or `precision(tf32)`. Substituted with sed.
module attributes {tile.target = #tile.target<"sm_60">} {
  tile.kernel @gemm(%A: !tile.tensor<64x64xELT>, %B: !tile.tensor<64x64xELT>, %C: !tile.tensor<64x64xACC>) grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %a = tile.alloc_shared {name = "a"} : !tile.buffer<64x64xELT, shared>
    %b = tile.alloc_shared {name = "b"} : !tile.buffer<64x64xELT, shared>
    %c = tile.alloc_fragment : !tile.buffer<64x64xACC, fragment>
    %c0 = arith.constant 0 : index
    tile.clear %c : !tile.buffer<64x64xACC, fragment>
    tile.copy %A[%c0, %c0] to %a : !tile.tensor<64x64xELT> to !tile.buffer<64x64xELT, shared>
    tile.copy %B[%c0, %c0] to %b : !tile.tensor<64x64xELT> to !tile.buffer<64x64xELT, shared>
    tile.gemm %a, %b, %c PREC {transpose_b} : !tile.buffer<64x64xELT, shared>, !tile.buffer<64x64xELT, shared>, !tile.buffer<64x64xACC, fragment>
    tile.copy %c to %C[%c0, %c0] : !tile.buffer<64x64xACC, fragment> to !tile.tensor<64x64xACC>
  }
}
