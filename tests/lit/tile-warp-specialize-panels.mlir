// Rows that are a multiple of 32 bytes but not of 128 take the widest
// swizzle that divides them, in panels: A's k-tile of 96 f16 (192-byte
// rows) is three 64-byte panels, each its own bulk tensor copy (a box one
// panel wide, swizzle 64), and wgmma reads it with 64-byte-swizzle
// descriptors, so the loop stays warp-specialized (head dimensions 80, 96
// and 112 of FlashAttention take this path).
// RUN: %tessera-compile %S/Inputs/gemm-panels64.mlir --target=sm_90a --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %tessera-run --bundle=%t.pb --list | FileCheck %s --check-prefix=MAP

// MAP: TMA arg0[128, 32] swizzle 64, TMA arg1[96, 64] swizzle 128
// PTX: setmaxnreg
// PTX-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global
// PTX-NOT: cp.async.bulk.tensor
// PTX-COUNT-6: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
