// Negative cases of the data types: what each gemm input accumulates in,
// TF32 on f32 only, storage types (FP8, ui8) computed with, tile.cast's
// types and place, reductions of FP8, scalars of storage types.
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xi8, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{accumulator C must hold i32 for 'i8' inputs, got 'f32'}}
  tile.gemm %a, %a, %c {transpose_b} : !tile.buffer<64x32xi8, shared>, !tile.buffer<64x32xi8, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf8E4M3FN, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xbf16, fragment>
  // expected-error @+1 {{accumulator C must hold f32 or f16 for 'f8E4M3FN' inputs, got 'bf16'}}
  tile.gemm %a, %a, %c {transpose_b} : !tile.buffer<64x32xf8E4M3FN, shared>, !tile.buffer<64x32xf8E4M3FN, shared>, !tile.buffer<64x64xbf16, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x16xf64, shared>
  %b = tile.alloc_shared : !tile.buffer<16x64xf64, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{accumulator C must hold f64 for 'f64' inputs, got 'f32'}}
  tile.gemm %a, %b, %c : !tile.buffer<64x16xf64, shared>, !tile.buffer<16x64xf64, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x16xf16, shared>
  %b = tile.alloc_shared : !tile.buffer<16x64xf16, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{precision tf32 applies to f32 inputs, got 'f16'}}
  tile.gemm %a, %b, %c precision(tf32) : !tile.buffer<64x16xf16, shared>, !tile.buffer<16x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf8E4M3FN, shared>
  %b = tile.alloc_shared : !tile.buffer<64x32xf8E5M2, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  // expected-error @+1 {{A holds 'f8E4M3FN' but B holds 'f8E5M2'; A and B must share their element type}}
  tile.gemm %a, %b, %c {transpose_b} : !tile.buffer<64x32xf8E4M3FN, shared>, !tile.buffer<64x32xf8E5M2, shared>, !tile.buffer<64x64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %q = tile.alloc_fragment : !tile.buffer<64xf8E4M3FN, fragment>
  tile.parallel (%i) in [64] {
    %x = tile.load %q[%i] : !tile.buffer<64xf8E4M3FN, fragment>
    // expected-error @+1 {{'arith.addf' op computes in 'f8E4M3FN', a storage type; tile.cast it to f32 (or i32) first}}
    %y = arith.addf %x, %x : f8E4M3FN
    tile.store %y, %q[%i] : !tile.buffer<64xf8E4M3FN, fragment>
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = arith.constant 1.0 : f32
  // expected-error @+1 {{'tile.cast' op converts elements inside a tile.parallel body}}
  %y = tile.cast %x : f32 to f8E5M2
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  tile.parallel (%i) in [64] {
    %x = arith.constant 1.0 : f32
    // expected-error @+1 {{'tile.cast' op converts between element types (f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8, ui8, i32 or i64), got 'f8E4M3FNUZ'}}
    %y = tile.cast %x : f32 to f8E4M3FNUZ
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_fragment : !tile.buffer<1x64xf8E4M3FN, fragment>
  %m = tile.alloc_fragment : !tile.buffer<1xf8E4M3FN, fragment>
  // expected-error @+1 {{reduces f16, bf16, f32 or f64 fragments, or i32 or i64 ones (signed), got 'f8E4M3FN' and 'f8E4M3FN'}}
  tile.reduce max %x into %m {clear} : !tile.buffer<1x64xf8E4M3FN, fragment>, !tile.buffer<1xf8E4M3FN, fragment>
}

// -----

// expected-error @+1 {{argument #0 is a scalar of storage type 'ui8'; pass scalars as f16, bf16, f32, f64, i8, i32 or i64}}
tile.kernel @k(%s: ui8) grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{unsupported buffer element type 'f8E4M3FNUZ' (expected f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8, ui8, i32 or i64)}}
  %a = tile.alloc_shared : !tile.buffer<64xf8E4M3FNUZ, shared>
}
