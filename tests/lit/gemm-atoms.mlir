// Atom selection: a forced atom the backend lacks is an error naming the
// target; the SIMT FMA atom lowers to fma.rn.f32 on every backend.
// RUN: not %tessera-compile %s --target=sm_60 --emit=ptx 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_60 --emit=ptx | FileCheck %s --check-prefix=FMA
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_70 --emit=ptx | FileCheck %s --check-prefix=QUADPAIR
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_70 --emit=tile | FileCheck %s --check-prefix=LAYOUT70
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=MMA
// The same gemm on bf16 (mma.sync's bf16 form: NVVM's intrinsic takes the packed pairs as i32).
// RUN: sed 's/xf16/xbf16/g' %S/Inputs/gemm-simt.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=MMABF16
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WGMMA
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_90a --emit=tile | FileCheck %s --check-prefix=LAYOUT90
// sm_90 (not 90a) has no wgmma: mma.sync.
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_90 --emit=ptx | FileCheck %s --check-prefix=MMA
// One warpgroup with 128 rows issues two m64 wgmmas per k-step, A's
// descriptors 8 rows apart with 16-row group strides (SBO 2048 bytes on
// 64-byte rows: 0x80 in bits 32-45); transposed, such an A has no wgmma
// and falls back to mma.sync with a remark saying why.
// RUN: %tessera-compile %S/Inputs/gemm-tall.mlir --target=sm_90a --emit=ptx 2>&1 | FileCheck %s --check-prefix=TALL
// RUN: %tessera-compile %S/Inputs/gemm-tall-transposed.mlir --target=sm_90a --emit=ptx 2>&1 | FileCheck %s --check-prefix=FALLBACK
// Rows of 96 bytes are three 32-byte swizzle panels, which wgmma reads; rows
// no swizzle describes (112 bytes) fall back; a 512-wide tile is wider than
// one wgmma (and its accumulator overflows the registers).
// RUN: %tessera-compile %S/Inputs/gemm-rows96.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=ROWS96
// RUN: %tessera-compile %S/Inputs/gemm-rows112.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=ROWS112
// RUN: not %tessera-compile %S/Inputs/gemm-wide512.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: %tessera-compile %S/Inputs/gemm-simt.mlir --target=sm_80 --emit=tile | FileCheck %s --check-prefix=LAYOUT

// FORCED: error: 'tile.gemm' op atom 'SM80_16x8x16_F32F16F16F32_TN' cannot be used on sm_60: the backend has no such atom
// FMA: fma.rn.f32
// FMA-NOT: mma.sync
// QUADPAIR: ld.shared.v2.b32
// QUADPAIR: mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32
// QUADPAIR-NOT: fma.rn.f32
// LAYOUT70: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 16, warps_m = 2, warps_n = 2, lanes = [r1, c2, r8, c8, r4], registers = [c1, r2, c4]>
// LAYOUT70: tile.gemm {{.*}} {atom = "SM70_8x8x4_F32F16F16F32"}
// MMA: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MMA: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// MMABF16: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMABF16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// LAYOUT: tile.alloc_shared {name = {{.*}}, offset = 0 : i64, swizzled}
// LAYOUT: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>
// LAYOUT: tile.gemm {{.*}} {atom = "SM80_16x8x16_F32F16F16F32_TN"}
// WGMMA: wgmma.fence.sync.aligned
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// WGMMA: wgmma.commit_group.sync.aligned
// WGMMA: wgmma.wait_group.sync.aligned 0
// WGMMA-NOT: mma.sync
// LAYOUT90: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>
// LAYOUT90: tile.gemm {{.*}} {atom = "SM90_64xNx16_F32F16F16F32_SS"}
// TALL-NOT: remark
// TALL-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// TALL-NOT: mma.sync
// FALLBACK: remark: using SM80_16x8x16_F32F16F16F32_TN instead of SM90_64xNx16_F32F16F16F32_SS: SM90_64xNx16_F32F16F16F32_SS takes 128 rows per warpgroup only with A not transposed (tile M 128, 1 warpgroups)
// FALLBACK: mma.sync.aligned.m16n8k16
// ROWS96-NOT: remark
// ROWS96: tile.gemm {{.*}}atom = "SM90_64xNx16_F32F16F16F32_SS"
// ROWS112: remark: using SIMT_1x1x1_F32F32F32F32 instead of SM90_64xNx16_F32F16F16F32_SS: SM90_64xNx16_F32F16F16F32_SS needs shared rows of a multiple of 32 bytes (112 here)
// WIDE: remark: using SM80_16x8x16_F32F16F16F32_TN instead of SM90_64xNx16_F32F16F16F32_SS: SM90_64xNx16_F32F16F16F32_SS takes N up to 256 (tile N 512)
// WIDE: error: kernel 'gemm' holds 256 registers per thread of fragments, over the target's 255 per thread
module attributes {tile.target = #tile.target<"sm_60">} {
  tile.kernel @forced(%A: !tile.tensor<64x64xf16>) grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %a = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %b = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %c = tile.alloc_fragment : !tile.buffer<64x64xf32, fragment>
    tile.gemm %a, %b, %c {atom = "SM80_16x8x16_F32F16F16F32_TN"} : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
  }
}
