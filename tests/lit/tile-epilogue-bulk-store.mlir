// tile-lower-to-gpu, the accumulator store of a persistent warp-specialized
// GEMM on sm_90a (stmatrix and bulk tensor copies): unless the tile is the
// block's last, each 64-column panel of the 128 x 128 tile goes through one
// of two 128-byte-swizzled shared buffers after the planned bytes (a third
// tensor map, for C: box 128 x 64) and leaves by a bulk tensor store that
// thread 0 issues and commits; before reusing a buffer it waits until the
// store two groups back has read it, and the consumers synchronize on their
// named barrier around each panel. The block's last tile stores directly
// (quad-transposed 16-byte stores), and thread 0 waits for every bulk store
// before the block ends.
// RUN: sed -e 's/multicast, persistent/persistent/' %S/Inputs/gemm-multicast-persistent.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s
// RUN: sed -e 's/multicast, persistent/persistent/' %S/Inputs/gemm-multicast-persistent.mlir | %tessera-compile - --target=sm_90a --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: %tessera-run --bundle=%t.pb --list | FileCheck %s --check-prefix=LAUNCH
// Stream-K too: its whole tiles and the first pieces that finish a tile run
// the epilogue, staged unless the item is the block's last.
// RUN: sed -e 's/multicast, persistent/persistent, stream_k/' %S/Inputs/gemm-multicast-persistent.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=STREAMK
// Epilogue math on the accumulator (a fused GEMM) keeps the direct stores,
// and targets without stmatrix or bulk copies always do.
// RUN: %tessera-compile %S/Inputs/gemm-persistent.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=DIRECT
// RUN: sed -e 's/multicast, persistent/persistent/' %S/Inputs/gemm-multicast-persistent.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=DIRECT

// CHECK: .entry gemm(
// CHECK: .param .align 64 .b8 gemm_param_11[128]
// CHECK: wgmma.wait_group.sync.aligned 0;
// Tiles with a successor: panel 0, then panel 1 in the other buffer.
// CHECK: cp.async.bulk.wait_group.read 1;
// CHECK: bar.sync 1, 128;
// CHECK-COUNT-2: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: fence.proxy.async.shared::cta;
// CHECK: bar.sync 1, 128;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%r[0-9]+}}];
// CHECK-NEXT: // end inline asm
// CHECK-NEXT: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group.read 1;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// The last tile: direct stores.
// CHECK: st.global.v4.b32
// After the tiles.
// CHECK: cp.async.bulk.wait_group 0;
// CHECK: ret;

// Shared memory: 4 stages of 32 KiB, the mbarriers, then (1024-aligned) the
// two 16 KiB panel buffers.
// LAUNCH: smem 164864 B target sm_90a, persistent, TMA arg0[128, 64] swizzle 128, TMA arg1[64, 64] swizzle 128, TMA arg2[128, 64] swizzle 128

// DIRECT-NOT: bulk_group
// DIRECT-NOT: stmatrix

// (LLVM places the blocks; their order is not checked.)
// STREAMK: .entry gemm(
// STREAMK-DAG: cp.async.bulk.wait_group.read 1;
// STREAMK-DAG: stmatrix.sync.aligned.m8n8.x4.shared.b16
// STREAMK-DAG: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// STREAMK-DAG: st.global.cg.v4.f32
// STREAMK-DAG: ld.acquire.gpu.global.u32
// STREAMK-DAG: st.global.v4.b32
// STREAMK: cp.async.bulk.wait_group 0;
// STREAMK: ret;
