// tile.gemm and tile.pipelined parse, print and reparse; their verifiers
// reject what they should.
// RUN: %tessera-opt %s --split-input-file | %tessera-opt --split-input-file | FileCheck %s
// RUN: %tessera-opt %s --split-input-file --mlir-print-op-generic | %tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: tile.kernel @gemm
// CHECK: tile.pipelined %[[K:.*]] = 0 to %{{.*}} stages 3 {
// CHECK:   tile.gemm %{{.*}}, %{{.*}}, %{{.*}} : <64x32xf16, shared>, <32x64xf16, shared>, <64x64xf32, fragment>
// CHECK:   tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SIMT_1x1x1_F32F32F32F32", transpose_a, transpose_b} : <32x64xf16, shared>, <64x32xf16, shared>, <64x64xf32, fragment>
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>) grid(affine_map<()[s0, s1] -> (s0 ceildiv 64)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %At = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %Bt = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %acc = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
    %n = tile.dim %A[1] : !tile.tensor<?x?xf16>
    tile.pipelined %k = 0 to %n stages 3 {
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
      tile.gemm %At, %Bt, %acc {transpose_a, transpose_b, atom = "SIMT_1x1x1_F32F32F32F32"} : !tile.buffer<32x64xf16, shared>, !tile.buffer<64x32xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
  }
}
