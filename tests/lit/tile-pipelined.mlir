// The pipelining strategies: targets with asynchronous copies (sm_80,
// sm_90a) stage the loop's shared buffers and issue cp.async ahead, waiting
// once per iteration; targets without (sm_60, sm_70) run the loop in order.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=tile | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=ASYNC
// On sm_90a the gemm is a wgmma reading shared memory through the async
// proxy: each iteration fences the proxies before its barrier, keeps one
// MMA group in flight, and the copies run S - 2 = 1 iteration ahead.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WGMMA
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_70 --emit=ptx | FileCheck %s --check-prefix=INORDER
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_70 --emit=tile | FileCheck %s --check-prefix=PLAN70
// Offsets of copies issued ahead may use tensor dimensions read in the loop.
// The A offset (a min with the dimension) is not provably aligned, so only
// B's copies go ahead asynchronously; A's are synchronous loads.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined-dim.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=DIM

// PLAN: tile.shared_memory_bytes = 24576
// PLAN: tile.alloc_shared {name = "As", offset = 0 : i64, stages = 3 : i64, swizzled}
// PLAN: tile.alloc_shared {name = "Bs", offset = 12288 : i64, stages = 3 : i64, swizzled}

// ASYNC: cp.async.cg.shared.global
// ASYNC: cp.async.commit_group
// ASYNC: cp.async.wait_group 1
// ASYNC: bar.sync
// ASYNC: ldmatrix.sync.aligned.m8n8.x4
// ASYNC: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// ASYNC: cp.async.wait_group 0

// WGMMA: cp.async.cg.shared.global
// WGMMA: cp.async.commit_group
// WGMMA-NOT: cp.async.commit_group
// WGMMA: cp.async.wait_group 0
// WGMMA-NEXT: // end inline asm
// WGMMA-NEXT: // begin inline asm
// WGMMA-NEXT: fence.proxy.async.shared::cta;
// WGMMA: bar.sync
// WGMMA: cp.async.commit_group
// WGMMA: wgmma.fence.sync.aligned
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// WGMMA: wgmma.commit_group.sync.aligned
// WGMMA: wgmma.wait_group.sync.aligned 1
// WGMMA: wgmma.wait_group.sync.aligned 0
// WGMMA: cp.async.wait_group 0

// DIM: cp.async.cg.shared.global
// DIM: cp.async.commit_group
// DIM: mma.sync.aligned.m16n8k16
// DIM: cp.async.wait_group 0

// INORDER-NOT: cp.async
// INORDER: fma.rn.f32
// PLAN70: tile.shared_memory_bytes = 8192
// PLAN70-NOT: stages =
