// The pipelining strategies: targets with asynchronous copies (sm_80,
// sm_90a) stage the loop's shared buffers and issue cp.async ahead, waiting
// once per iteration; targets without (sm_60, sm_70) run the loop in order.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=tile | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=ASYNC
// RUN: sed -e 's/attributes {dim_divisibility/attributes {edge_loop, dim_divisibility/' %S/Inputs/gemm-pipelined.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=EDGE
// On sm_90a the gemm is a wgmma reading shared memory through the async
// proxy. With bulk tensor copies possible (row pitches provably multiples of
// 16 bytes) the loop is warp-specialized: a producer warpgroup (the block
// grows from 128 to 256 threads) issues cp.async.bulk.tensor into each stage
// and the consumers wait on per-stage mbarriers, keep one wgmma group in
// flight and release the previous stage; no block barrier per iteration.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=SPECIALIZED
// Without that proof, copies go ahead by cp.async (or loads), the proxies
// are fenced before the barrier, one wgmma group stays in flight and the
// copies run S - 2 = 1 iteration ahead.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined-unaligned.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WGMMA
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_70 --emit=ptx | FileCheck %s --check-prefix=PREFETCH
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_70 --emit=tile | FileCheck %s --check-prefix=PLAN70
// Offsets of copies issued ahead may use tensor dimensions read in the loop.
// The A offset (a min with the dimension) is not provably aligned, so only
// B's copies go ahead asynchronously; A's are synchronous loads.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined-dim.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=DIM

// PLAN: tile.shared_memory_bytes = 24576
// PLAN: tile.alloc_shared {name = "As", offset = 0 : i64, stages = 3 : i64, swizzled}
// PLAN: tile.alloc_shared {name = "Bs", offset = 12288 : i64, stages = 3 : i64, swizzled}

// The prologue's two stages copy with a byte count (zero fill past the
// tensor), then wait and synchronize for stage 0 and load its first k-step's
// fragments. The loop then runs two versions of its body. While the copies
// issued ahead lie inside their tensors (or are past the loop), one without
// checked copies: the next k-step's fragments, this iteration's copies, the
// first step's MMAs, then the wait and the barrier for the next stage and
// its first fragments before the last step's MMAs (one barrier an
// iteration, the loads' latency behind MMAs); where they do not (the K
// tail, tiles on the edge), the same with checked copies first. (LLVM lays
// the blocks out as: the hot body's wait and loads, its header, its copies,
// the checked body.)
// ASYNC-COUNT-4: cp.async.cg.shared.global [{{%r[0-9]+}}], [{{%rd[0-9]+}}], 16, {{%r[0-9]+}};
// ASYNC-NEXT: // end inline asm
// ASYNC-NEXT: cp.async.commit_group
// ASYNC: cp.async.wait_group 1
// ASYNC-NEXT: bar.sync 0;
// ASYNC-NOT: mma.sync
// ASYNC: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// ASYNC: cp.async.wait_group 1
// ASYNC-NEXT: bar.sync 0;
// ASYNC-NOT: mma.sync
// ASYNC: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// ASYNC: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// ASYNC-NOT: bar.sync
// ASYNC: cp.async.cg.shared.global [{{%r[0-9]+}}], [{{%rd[0-9]+}}], 16;
// ASYNC-NOT: bar.sync
// ASYNC: cp.async.cg.shared.global [{{%r[0-9]+}}], [{{%rd[0-9]+}}], 16, {{%r[0-9]+}};
// ASYNC-NOT: bar.sync
// ASYNC: cp.async.commit_group
// ASYNC-NOT: bar.sync
// ASYNC: ldmatrix.sync.aligned.m8n8.x4
// ASYNC-NOT: bar.sync
// ASYNC: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// ASYNC: cp.async.wait_group 1
// ASYNC-NEXT: bar.sync 0;
// ASYNC: cp.async.wait_group 0
// ASYNC-NOT: cp.async.cg

// SPECIALIZED: .param .align 64 .b8 gemm_param_9[128],
// SPECIALIZED-NEXT: .param .align 64 .b8 gemm_param_10[128]
// SPECIALIZED: .maxntid 256, 1, 1
// SPECIALIZED: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 1;
// SPECIALIZED: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 128;
// SPECIALIZED: fence.mbarrier_init.release.cluster;
// SPECIALIZED: bar.sync 0;
// SPECIALIZED: mbarrier.try_wait.parity.shared::cta.b64
// SPECIALIZED: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], 8192;
// SPECIALIZED: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SPECIALIZED: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SPECIALIZED: exit;
// SPECIALIZED: mbarrier.try_wait.parity.shared::cta.b64
// SPECIALIZED: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// SPECIALIZED: wgmma.wait_group.sync.aligned 1;
// SPECIALIZED: mbarrier.arrive.shared::cta.b64 _,
// SPECIALIZED: wgmma.wait_group.sync.aligned 0;
// SPECIALIZED-NOT: bar.sync 0;
// SPECIALIZED-NOT: cp.async.wait_group

// (LLVM places the loop's first block, fence and barrier, after its body.)
// WGMMA: ld.global.b16
// WGMMA: wgmma.fence.sync.aligned
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// WGMMA: wgmma.commit_group.sync.aligned
// WGMMA: wgmma.wait_group.sync.aligned 1
// WGMMA: fence.proxy.async.shared::cta;
// WGMMA-NEXT: bar.sync 0;
// WGMMA: wgmma.wait_group.sync.aligned 0

// DIM: cp.async.cg.shared.global
// DIM: cp.async.commit_group
// DIM: mma.sync.aligned.m16n8k16
// DIM: cp.async.wait_group 0

// sm_70 has no cp.async: register double buffering over two stages. The
// prologue stores iteration 0's tiles; each iteration loads the next tiles
// into registers, runs its MMAs on one stage, stores the registers to the
// other and synchronizes once.
// (LLVM places the loop's global loads after its barrier.)
// PREFETCH-NOT: cp.async
// PREFETCH: ld.global.v4.b32
// PREFETCH: st.shared.v4.b32
// PREFETCH: bar.sync 0;
// PREFETCH-NOT: bar.sync
// PREFETCH: mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32
// PREFETCH-NOT: bar.sync
// PREFETCH: st.shared.v4.b32
// PREFETCH-NOT: bar.sync
// PREFETCH: st.shared.v4.b32
// PREFETCH-NOT: bar.sync
// PREFETCH: st.shared.v4.b32
// PREFETCH-NOT: bar.sync
// PREFETCH: st.shared.v4.b32
// PREFETCH-NEXT: bar.sync 0;
// PREFETCH-NOT: bar.sync
// PREFETCH: ld.global.v4.b32
// PLAN70: tile.shared_memory_bytes = 16384
// PLAN70: tile.alloc_shared {name = "As", offset = 0 : i64, stages = 2 : i64, swizzled}
// PLAN70: tile.alloc_shared {name = "Bs", offset = 8192 : i64, stages = 2 : i64, swizzled}

// With `edge_loop`, a third body between the hot one and the checked one,
// for tiles on the M or N edge while the copies lie inside along K: each
// chunk's byte count computed once before it (through an opaque move, so
// LICM leaves it there), and in the body a select and the sized cp.async.
// EDGE: cp.async.cg.shared.global [{{%r[0-9]+}}], [{{%rd[0-9]+}}], 16;
// EDGE-COUNT-4: mov.b32 {{%r[0-9]+}}, {{%r[0-9]+}};
// EDGE: ldmatrix.sync.aligned.m8n8.x4
// EDGE-NOT: bar.sync
// EDGE: selp.b64
// EDGE: cp.async.cg.shared.global [{{%r[0-9]+}}], [{{%rd[0-9]+}}], 16, {{%r[0-9]+}};
// EDGE-NOT: bar.sync
// EDGE: cp.async.commit_group
// EDGE: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// EDGE: cp.async.wait_group 1
// EDGE-NEXT: bar.sync 0;
// EDGE-NOT: cp.async.cg
// EDGE: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// The checked body follows: byte counts and bounds every iteration.
// EDGE: cp.async.cg.shared.global [{{%r[0-9]+}}], [{{%rd[0-9]+}}], 16, {{%r[0-9]+}};
// EDGE: cp.async.commit_group
// EDGE: ldmatrix.sync.aligned.m8n8.x4
