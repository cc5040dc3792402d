// The data types beyond f16/bf16/f32: FP8 (f8E4M3FN, f8E5M2), i8 and ui8
// with i32 accumulation, f16 accumulation, f64, TF32 as a gemm precision,
// and tile.cast. They parse, print and reparse.
// RUN: %tessera-opt %s --split-input-file | %tessera-opt --split-input-file | FileCheck %s
// RUN: %tessera-opt %s --split-input-file --mlir-print-op-generic | %tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: tile.kernel @fp8
// CHECK-SAME: !tile.tensor<?x?xf8E4M3FN>, %{{.*}}: !tile.tensor<?x?xf8E5M2>
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : <64x32xf8E4M3FN, shared>, <64x32xf8E4M3FN, shared>, <64x64xf32, fragment>
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : <64x32xf8E5M2, shared>, <64x32xf8E5M2, shared>, <64x64xf16, fragment>
// CHECK: %[[X:.*]] = tile.load
// CHECK: %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: %[[Q:.*]] = tile.cast %[[Y]] {saturate} : f32 to f8E4M3FN
// CHECK: tile.store %[[Q]]
tile.kernel @fp8(%A: !tile.tensor<?x?xf8E4M3FN>, %B: !tile.tensor<?x?xf8E5M2>) grid(affine_map<()[s0, s1, s2, s3] -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf8E4M3FN, shared>
  %b = tile.alloc_shared : !tile.buffer<64x32xf8E5M2, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  %h = tile.alloc_fragment : !tile.buffer<64x64xf16, fragment>
  %q = tile.alloc_fragment : !tile.buffer<64x64xf8E4M3FN, fragment>
  tile.gemm %a, %a, %c {transpose_b} : !tile.buffer<64x32xf8E4M3FN, shared>, !tile.buffer<64x32xf8E4M3FN, shared>, !tile.buffer<64x64xf32, fragment>
  tile.gemm %b, %b, %h {transpose_b} : !tile.buffer<64x32xf8E5M2, shared>, !tile.buffer<64x32xf8E5M2, shared>, !tile.buffer<64x64xf16, fragment>
  tile.parallel (%i, %j) in [64, 64] {
    %x = tile.load %c[%i, %j] : !tile.buffer<64x64xf32, fragment>
    %s = arith.constant 0.5 : f32
    %y = arith.mulf %x, %s : f32
    %z = tile.cast %y {saturate} : f32 to f8E4M3FN
    tile.store %z, %q[%i, %j] : !tile.buffer<64x64xf8E4M3FN, fragment>
  }
}

// -----

// CHECK-LABEL: tile.kernel @int8
// CHECK: tile.gemm {{.*}} : <64x64xi8, shared>, <64x64xi8, shared>, <64x64xi32, fragment>
// CHECK: tile.gemm {{.*}} : <64x64xui8, shared>, <64x64xui8, shared>, <64x64xi32, fragment>
// CHECK: tile.cast %{{.*}} : ui8 to i32
// CHECK: tile.fill %{{.*}}, %{{.*}} : <64x64xui8, shared>, i8
tile.kernel @int8(%A: !tile.tensor<?x?xui8>) grid(affine_map<()[s0, s1] -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x64xi8, shared>
  %u = tile.alloc_shared : !tile.buffer<64x64xui8, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xi32, fragment>
  tile.gemm %a, %a, %c {transpose_b} : !tile.buffer<64x64xi8, shared>, !tile.buffer<64x64xi8, shared>, !tile.buffer<64x64xi32, fragment>
  tile.gemm %u, %u, %c {transpose_b} : !tile.buffer<64x64xui8, shared>, !tile.buffer<64x64xui8, shared>, !tile.buffer<64x64xi32, fragment>
  tile.parallel (%i, %j) in [64, 64] {
    %x = tile.load %u[%i, %j] : !tile.buffer<64x64xui8, shared>
    %y = tile.cast %x : ui8 to i32
    tile.store %y, %c[%i, %j] : !tile.buffer<64x64xi32, fragment>
  }
  %ff = arith.constant -1 : i8
  tile.fill %u, %ff : !tile.buffer<64x64xui8, shared>, i8
}

// -----

// CHECK-LABEL: tile.kernel @tf32_f64
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} precision(tf32) {transpose_b} : <64x32xf32, shared>, <64x32xf32, shared>, <64x64xf32, fragment>
// CHECK: tile.gemm {{.*}} : <64x16xf64, shared>, <16x64xf64, shared>, <64x64xf64, fragment>
// CHECK: tile.gemm {{.*}} : <64x16xf16, shared>, <16x64xf16, shared>, <64x64xf16, fragment>
tile.kernel @tf32_f64() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %a = tile.alloc_shared : !tile.buffer<64x32xf32, shared>
  %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
  %d = tile.alloc_shared : !tile.buffer<64x16xf64, shared>
  %e = tile.alloc_shared : !tile.buffer<16x64xf64, shared>
  %f = tile.alloc_fragment : !tile.buffer<64x64xf64, fragment>
  %g = tile.alloc_shared : !tile.buffer<64x16xf16, shared>
  %h = tile.alloc_shared : !tile.buffer<16x64xf16, shared>
  %acc = tile.alloc_fragment : !tile.buffer<64x64xf16, fragment>
  tile.gemm %a, %a, %c precision(tf32) {transpose_b} : !tile.buffer<64x32xf32, shared>, !tile.buffer<64x32xf32, shared>, !tile.buffer<64x64xf32, fragment>
  tile.gemm %d, %e, %f : !tile.buffer<64x16xf64, shared>, !tile.buffer<16x64xf64, shared>, !tile.buffer<64x64xf64, fragment>
  tile.gemm %g, %h, %acc : !tile.buffer<64x16xf16, shared>, !tile.buffer<16x64xf16, shared>, !tile.buffer<64x64xf16, fragment>
}
