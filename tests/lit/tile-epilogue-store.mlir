// tile-lower-to-gpu: an MMA accumulator stored to a 16-bit tensor. The four
// lanes of each quad transpose their pairs (two butterfly stages: two
// shuffles with xor 1, then two with xor 2) so that every lane stores 8
// consecutive elements in one 16-byte access; N and the tile origin are
// multiples of 8, so no scalar tail is emitted.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx | FileCheck %s
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_90a --emit=ptx | FileCheck %s
// Unaligned rows keep the transpose but guard each element.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined-unaligned.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=UNALIGNED

// CHECK: shfl.sync.bfly.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 2, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 2, 31, -1;
// CHECK-NOT: shfl.sync.bfly.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 3, 31, -1;
// CHECK: st.global.v4.b32
// CHECK-NOT: st.global.b16

// UNALIGNED: shfl.sync.bfly.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1, 31, -1;
// UNALIGNED-NOT: st.global.v4
// UNALIGNED: st.global.b16
