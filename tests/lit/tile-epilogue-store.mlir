// tile-lower-to-gpu: an MMA accumulator stored to a 16-bit tensor. The four
// lanes of each quad transpose their pairs (two butterfly stages: two
// shuffles with xor 1, then two with xor 2) so that every lane stores 8
// consecutive elements in one 16-byte access; N and the tile origin are
// multiples of 8, so no scalar tail is emitted.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx | FileCheck %s
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_90a --emit=ptx | FileCheck %s
// Unaligned rows keep the transpose but guard each element.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined-unaligned.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=UNALIGNED
// The accumulator copied to a 16-bit shared tile: with stmatrix (sm_90) one
// x4 store per 16 x 16 of a warp's tile, the pairs as the accumulator holds
// them (4 warps of 16 x 64: 4 each); without (sm_80) a 4-byte store per pair.
// RUN: %tessera-compile %S/Inputs/gemm-via-shared.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=STMATRIX
// RUN: %tessera-compile %S/Inputs/gemm-via-shared.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=PAIRS

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

// STMATRIX-COUNT-4: stmatrix.sync.aligned.m8n8.x4.shared.b16 [{{%r[0-9]+}}], {{[{]}}{{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}{{[}]}};
// STMATRIX-NOT: stmatrix
// STMATRIX-NOT: st.shared.b32

// PAIRS-NOT: stmatrix
// PAIRS-COUNT-16: st.shared.b32
