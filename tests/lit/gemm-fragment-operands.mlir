// tile.gemm with A or B in a fragment (registers).
//
// A in registers: mma.sync (sm_80) and wgmma's RS form (sm_90a) read it
// straight from the fragment, whose layout tile-layout-inference gives in
// whole rows per warp; the accumulator it was cast from (P = f16(S)) is
// tiled the same way so the cast stays in each thread's registers.
// RUN: %tessera-compile %S/Inputs/gemm-chain.mlir --target=sm_80 --emit=tile | FileCheck %s --check-prefix=LAYOUT80
// RUN: %tessera-compile %S/Inputs/gemm-chain.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=MMA
// RUN: %tessera-compile %S/Inputs/gemm-chain.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT90
// RUN: %tessera-compile %S/Inputs/gemm-chain.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=RS
// Targets with no atom reading A from registers stage it through shared
// memory, with a remark.
// RUN: %tessera-compile %S/Inputs/gemm-chain.mlir --target=sm_70 --emit=tile 2>&1 | FileCheck %s --check-prefix=STAGED70
// RUN: %tessera-compile %S/Inputs/gemm-chain.mlir --target=sm_60 --emit=ptx 2>&1 | FileCheck %s --check-prefix=STAGED60
// No atom reads B from registers: B fragments are staged everywhere.
// RUN: %tessera-compile %S/Inputs/gemm-fragment-b.mlir --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=STAGEDB
// RUN: %tessera-compile %S/Inputs/gemm-fragment-b.mlir --target=sm_90a --emit=ptx 2>&1 | FileCheck %s --check-prefix=STAGEDB90
// Two uses that need different layouts of the same registers: an error
// naming both fragments, at one gemm with a note at the other.
// RUN: not %tessera-compile %S/Inputs/gemm-layout-conflict.mlir --target=sm_80 --emit=ptx 2>&1 | FileCheck %s --check-prefix=CONFLICT
// A transposed A is read from registers by no atom: staged.
// RUN: %tessera-compile %s --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=TRANSPOSED
// A reduction's result (held whole by every thread) as A: staged.
// RUN: %tessera-compile %S/Inputs/gemm-reduced-a.mlir --emit=ptx 2>&1 | FileCheck %s --check-prefix=REDUCED
// A staged operand is rewritten every iteration: no wgmma group stays in
// flight across iterations (wait 0, never 1), or the next iteration's
// st.shared would overwrite it under the MMAs still reading it.
// RUN: %tessera-compile %S/Inputs/gemm-staged-pipelined.mlir --emit=ptx | FileCheck %s --check-prefix=INFLIGHT

// LAYOUT80: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "s"}
// LAYOUT80: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "p"}
// LAYOUT80: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SM80_16x8x16_F32F16F16F32_TN", transpose_b}
// LAYOUT80: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SM80_16x8x16_F32F16F16F32_TN"} : <64x64xf16, fragment>, <64x64xf16, shared>
// LAYOUT80-NOT: staged
// MMA: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// LAYOUT90-NOT: remark
// LAYOUT90: tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized"}
// LAYOUT90: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SM90_64xNx16_F32F16F16F32_SS", transpose_b}
// LAYOUT90: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SM90_64xNx16_F32F16F16F32_RS"} : <64x64xf16, fragment>
// The first gemm reads A and B through descriptors; the second A from four
// registers per k-step and has no imm-trans-a.
// RS: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// RS: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// STAGED70: remark: staging fragment 'p' of type '!tile.buffer<64x64xf16, fragment>' through shared memory (8192 bytes): no atom of sm_70 reads this A from registers
// STAGED70: tile.alloc_shared {name = "p_staged", offset = 0 : i64, swizzled}
// STAGED70: tile.copy %{{.*}} to %0 : !tile.buffer<64x64xf16, fragment> to !tile.buffer<64x64xf16, shared>
// STAGED70-NEXT: tile.gemm %0, %{{.*}}, %{{.*}} {atom = "SM70_8x8x4_F32F16F16F32"}
// STAGED60: remark: staging fragment 'p'
// STAGED60: fma.rn.f32
// STAGEDB: remark: staging fragment 'Bf' of type '!tile.buffer<32x64xf16, fragment>' through shared memory (4096 bytes): no atom reads B from registers
// STAGEDB: tile.alloc_shared {name = "Bf_staged", offset = 0 : i64, swizzled}
// STAGEDB: tile.gemm %{{.*}}, %0, %{{.*}} {atom = "SM80_16x8x16_F32F16F16F32_TN"}
// The staged B is written through the generic proxy: fenced before wgmma.
// STAGEDB90: remark: staging fragment 'Bf'
// STAGEDB90: st.shared
// STAGEDB90: fence.proxy.async.shared::cta;
// STAGEDB90: bar.sync 0;
// STAGEDB90: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CONFLICT: gemm-layout-conflict.mlir:25:5: error: layout conflict: fragment 'p' of type '!tile.buffer<64x64xf16, fragment>' is the A operand (in registers) of this gemm, which needs #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, but fragment 's' of type '!tile.buffer<64x64xf32, fragment>', which shares its registers (used with it in a tile.parallel or copied into it), is the accumulator of another gemm, which needs a distribution across threads (SIMT FMA); copy one of them to a shared buffer to use both
// CONFLICT: gemm-layout-conflict.mlir:18:5: note: the other gemm is here
// REDUCED: remark: staging fragment 'p' of type '!tile.buffer<4x8xf32, fragment>' through shared memory (128 bytes): a reduction's result is held whole by every thread, in no atom's A layout
// REDUCED: fma.rn.f32
// INFLIGHT: cp.async.cg.shared.global
// INFLIGHT: fence.proxy.async.shared::cta;
// INFLIGHT: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// INFLIGHT-NOT: wgmma.wait_group.sync.aligned 1;
// INFLIGHT: wgmma.wait_group.sync.aligned 0;
// INFLIGHT-NOT: wgmma.wait_group.sync.aligned 1;
// TRANSPOSED: remark: staging fragment 'at' of type '!tile.buffer<32x64xf16, fragment>' through shared memory (4096 bytes): no atom of sm_80 reads this A from registers
// TRANSPOSED: tile.gemm %0, %{{.*}}, %{{.*}} {atom = "SM80_16x8x16_F32F16F16F32_TN", transpose_a}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @transposed(%A: !tile.tensor<32x64xf16>, %B: !tile.tensor<32x64xf16>, %C: !tile.tensor<64x64xf16>)
      grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %At = tile.alloc_fragment {name = "at"} : !tile.buffer<32x64xf16, fragment>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<32x64xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %A[%c0, %c0] to %At : !tile.tensor<32x64xf16> to !tile.buffer<32x64xf16, fragment>
    tile.copy %B[%c0, %c0] to %Bs : !tile.tensor<32x64xf16> to !tile.buffer<32x64xf16, shared>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %At, %Bs, %acc {transpose_a} : !tile.buffer<32x64xf16, fragment>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    tile.copy %acc to %C[%c0, %c0] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<64x64xf16>
  }
}
