// Blackwell's tcgen05.mma atom family (backends/sm100): one thread issues
// the MMAs into tensor memory, every warp moves its 32 rows between its
// registers and tensor memory, and the accumulator fragment is a row per
// lane (tcgen05.ld 32x32b), so a row reduction needs no shuffles. The loop
// runs on sm90's TMA warp-specialized strategy: a producer warpgroup fills
// the stages, the kernel's warpgroup (the consumers) computes and meets on
// named barrier 1. Tensor memory holds the accumulator through the loop
// (hold_accumulators): each iteration's MMAs release their stage to the
// producer with tcgen05.commit when they complete.
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05.mlir --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05.mlir --emit=ptx | FileCheck %s --check-prefix=WAIT
// The body squares the accumulator after each gemm: it cannot stay in
// tensor memory, so each gemm moves it in, waits for its MMAs, moves it out.
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05-scaled.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=EACHLAYOUT
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05-scaled.mlir --emit=ptx | FileCheck %s --check-prefix=EACH
// sm_100 (not architecture-specific) has no tcgen05: mma.sync as on sm_80.
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05.mlir --target=sm_100 --emit=ptx | FileCheck %s --check-prefix=PORTABLE
// Two warpgroups: the family needs one, the warp-level atoms take over.
// RUN: sed -e 's/threads(128)/threads(256)/' %S/Inputs/gemm-tcgen05.mlir | %tessera-compile - --emit=ptx 2>&1 | FileCheck %s --check-prefix=WARPGROUPS
// A ping-pong kernel runs two tiles per block; tensor memory holds one
// accumulator per block.
// RUN: %tessera-compile %S/Inputs/gemm-pingpong.mlir --target=sm_100a --emit=ptx 2>&1 | FileCheck %s --check-prefix=PINGPONG
// Attention passes S on as P, A in registers: every gemm keeps mma.sync.
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_100a --emit=ptx 2>&1 | FileCheck %s --check-prefix=ATTENTION

// LAYOUT-NOT: remark
// LAYOUT-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 32, n = 4, warps_m = 4, warps_n = 1, lanes = [r1, r2, r4, r8, r16], registers = [c1, c2]>, name = "acc"}
// LAYOUT-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 32, n = 4, warps_m = 4, warps_n = 1, lanes = [r1, r2, r4, r8, r16], registers = [c1, c2]>, name = "mx", row_slice}
// LAYOUT: tile.pipelined {{.*}} {tile.schedule = {hold_accumulators, in_flight = 0 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}}
// LAYOUT: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SM100_128xNx16_F32F16F16F32_SS"}

// At the block's start, warp 0 allocates 128 columns and thread 0 sets up
// the mbarrier the MMAs commit to; the ring's barriers all count one
// arrival (a stage's release is the MMAs' commit).
// PTX: mov.b32 [[COLS:%r[0-9]+]], 128;
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [{{[^]]+}}], [[COLS]];
// PTX: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// PTX: mbarrier.init.shared.b64 [__dynamic_shmem__0+{{[0-9]+}}], {{%r[0-9]+}};
// PTX: tcgen05.fence::before_thread_sync;
// PTX: bar.sync 0;
// PTX: tcgen05.fence::after_thread_sync;
// PTX-COUNT-6: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 1;
// The producer warpgroup: bulk tensor copies, then it leaves.
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: exit;
// Before the loop, the accumulator's 128 columns into tensor memory, 32 at
// a time (the cleared fragment: zeros).
// PTX-COUNT-4: tcgen05.st.sync.aligned.32x32b.x32.b32
// PTX: tcgen05.wait::st.sync.aligned;
// PTX-NEXT: tcgen05.fence::before_thread_sync;
// PTX-NEXT: bar.sync 1, 128;
// PTX-NEXT: tcgen05.fence::after_thread_sync;
// Each iteration: four k-steps of 16, K-major A, MN-major B (instruction
// descriptor: D f32, B MN-major, N 128 >> 3 at bit 17, M 128 >> 4 at bit
// 24), committed to the stage's empty barrier; nothing moves the
// accumulator or waits for the MMAs inside the loop.
// PTX-NOT: tcgen05.ld
// PTX-NOT: tcgen05.fence::after_thread_sync
// PTX: mov.b32 [[IDESC:%r[0-9]+]], 136380432;
// PTX-COUNT-4: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[IDESC]], {{%p[0-9]+}};
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{{[^]]+}}];
// After the loop, one more commit (to the block's own barrier) tracks them all.
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{{[^]]+}}];
// The row maximum stays in each thread; at the end the consumers meet and
// warp 0 frees the columns.
// PTX-NOT: shfl.sync
// PTX: bar.sync 1, 128;
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32 {{%r[0-9]+}}, {{%r[0-9]+}};
// PTX-NOT: .local

// Every thread waits for the commit's phase and reads its row back.
// (After the loop's commit and the final one.)
// WAIT: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// WAIT: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// WAIT: wait:
// WAIT-NEXT: mbarrier.try_wait.parity.shared::cta.b64 done, [{{%r[0-9]+}}], {{%r[0-9]+}};
// WAIT-NEXT: @done bra ready;
// WAIT-NEXT: bra wait;
// WAIT-NEXT: ready:
// WAIT-NEXT: }
// WAIT-NEXT: // end inline asm
// WAIT: tcgen05.fence::after_thread_sync;
// WAIT-NEXT: tcgen05.ld.sync.aligned.32x32b.x32.b32
// WAIT-COUNT-3: tcgen05.ld.sync.aligned.32x32b.x32.b32
// WAIT: tcgen05.wait::ld.sync.aligned;

// EACHLAYOUT: tile.pipelined {{.*}} {tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}}
// (Blocks in the PTX text: the wait and the load back, the release, then
// the stores and the MMAs the loop branches to first.)
// EACH: exit;
// EACH: wait:
// EACH-NEXT: mbarrier.try_wait.parity.shared::cta.b64 done
// EACH: tcgen05.fence::after_thread_sync;
// EACH-NEXT: tcgen05.ld.sync.aligned.32x32b.x32.b32
// EACH-COUNT-3: tcgen05.ld.sync.aligned.32x32b.x32.b32
// EACH: tcgen05.wait::ld.sync.aligned;
// The consumers release the stage themselves.
// EACH: mbarrier.arrive.shared::cta.b64 _, [{{%r[0-9]+}}];
// EACH-COUNT-4: tcgen05.st.sync.aligned.32x32b.x32.b32
// EACH: tcgen05.wait::st.sync.aligned;
// EACH: bar.sync 1, 128;
// EACH-COUNT-4: tcgen05.mma.cta_group::1.kind::f16
// EACH: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64

// PORTABLE-NOT: {{tcgen05\.}}
// PORTABLE: mma.sync.aligned.m16n8k16

// WARPGROUPS: remark: using SM80_16x8x16_F32F16F16F32_TN instead of SM100_128xNx16_F32F16F16F32_SS: SM100_128xNx16_F32F16F16F32_SS needs one warpgroup (128 threads), got 256
// WARPGROUPS-NOT: {{tcgen05\.}}
// WARPGROUPS: mma.sync.aligned.m16n8k16

// ATTENTION: remark: using SM80_16x8x16_F32F16F16F32_TN instead of SM100_128xNx16_F32F16F16F32_SS: SM100_128xNx16_F32F16F16F32_SS keeps its accumulator a row per lane, which no atom reads A from registers in; the kernel's gemm at line 64 reads A from registers
// ATTENTION-NOT: {{tcgen05\.}}
// ATTENTION: mma.sync.aligned.m16n8k16

// PINGPONG: remark: using SM80_16x8x16_F32F16F16F32_TN instead of SM100_128xNx16_F32F16F16F32_SS: SM100_128xNx16_F32F16F16F32_SS keeps one accumulator per block in tensor memory; a ping-pong kernel runs two tiles per block
// PINGPONG-NOT: {{tcgen05\.}}
// PINGPONG: mma.sync.aligned.m16n8k16
