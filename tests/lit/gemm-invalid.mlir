// Negative cases of tile.gemm and tile.pipelined.
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<16x64xf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{A has K = 32 but B has K = 16}}
  tile.gemm %a, %b, %c : !tile.buffer<64x32xf16, shared>, !tile.buffer<16x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
  %c = tile.alloc_shared : !tile.buffer<64x64xf32, shared>
  // expected-error @+1 {{accumulator C must be a fragment}}
  tile.gemm %a, %b, %c : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, shared>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<32x64xbf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{A holds 'f16' but B holds 'bf16'; A and B must share their element type}}
  tile.gemm %a, %b, %c : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xbf16, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xi32, shared>
  %b = tile.alloc_shared : !tile.buffer<32x64xi32, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{A and B must hold f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8 or ui8, got 'i32'}}
  tile.gemm %a, %b, %c : !tile.buffer<64x32xi32, shared>, !tile.buffer<32x64xi32, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xbf16, shared>
  %b = tile.alloc_shared : !tile.buffer<32x64xbf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf16, fragment>
  // expected-error @+1 {{accumulator C must hold f32 for 'bf16' inputs, got 'f16'}}
  tile.gemm %a, %b, %c : !tile.buffer<64x32xbf16, shared>, !tile.buffer<32x64xbf16, shared>, !tile.buffer<64x64xf16, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<32x32xf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{A x B is 64x32 but C is 64x64}}
  tile.gemm %a, %b, %c : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x32xf16, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{operands must be 2-D tiles, got ranks 1, 2 and 2}}
  tile.gemm %a, %b, %c : !tile.buffer<64xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{stages must be in [1, 2^31 - 1], got 0}}
  tile.pipelined %k = 0 to %c4 stages 0 {
  }
}

// -----

// A negative stage count once passed (an unsigned comparison) and printed
// as 18446744073709551615.
tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{stages must be in [1, 2^31 - 1], got -1}}
  tile.pipelined %k = 0 to %c4 stages -1 {
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{stages must be in [1, 2^31 - 1], got -9223372036854775808}}
  tile.pipelined %k = 0 to %c4 stages -9223372036854775808 {
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{stages must be in [1, 2^31 - 1], got 2147483648}}
  tile.pipelined %k = 0 to %c4 stages 2147483648 {
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %c = arith.constant -3 : index
  // expected-error @+1 {{iteration count must be non-negative, got -3}}
  tile.pipelined %k = 0 to %c stages 2 {
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{tile.pipelined loops start at 0}}
  tile.pipelined %k = 1 to %c4 stages 2 {
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  tile.parallel (%i) in [16] {
    // expected-error @+1 {{is not allowed inside tile.parallel}}
    tile.gemm %a, %b, %c : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
  }
}
