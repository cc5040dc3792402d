// The rotated two-gemm schedule of the TMA warp-specialized strategy
// (backends/sm90/MmaOverlap.h): FlashAttention-3's intra-warpgroup
// overlap, decided by tile-plan-pipelines and visible in the schedule.
// Iteration k issues Q K^T beside iteration k - 1's P V, and runs its
// softmax while P V is in flight; consumer warpgroups take turns to issue
// (named barriers 4 and 5), so that one's softmax runs under the other's
// MMAs.
//
// Two consumer warpgroups of 64 rows: the schedule takes turns.
// RUN: sed -e 's/sm_80/sm_90a/' -e 's/threads(128)/threads(256)/' %S/Inputs/attention-rows.mlir > %t.two.mlir
// RUN: %tessera-compile %t.two.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %t.two.mlir --emit=ptx | FileCheck %s --check-prefix=PTX
// One warpgroup: the rotation without turns.
// RUN: sed -e 's/sm_80/sm_90a/' %S/Inputs/attention-rows.mlir > %t.one.mlir
// RUN: %tessera-compile %t.one.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=ONE
// A body where the softmax reads P V's accumulator cannot be rotated: a
// remark says which op, and the loop keeps the plain schedule.
// RUN: sed -e 's/sm_80/sm_90a/' -e 's/tile.reduce sum %%s into %%l/tile.reduce sum %%o into %%l/' %S/Inputs/attention-rows.mlir > %t.reads.mlir
// RUN: %tessera-compile %t.reads.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=READS
// Ops beside the gemms that read shared memory would put a consumer
// barrier inside a warpgroup's turn: the rotation stays, the turns go, and
// a remark says why.
// RUN: sed -e 's/sm_80/sm_90a/' -e 's/threads(128)/threads(256)/' -e 's/%%a = tile.load %%mx\[%%i\] : !tile.buffer<128xf32, fragment>/%%q = tile.load %%Qs[%%i, %%k] : !tile.buffer<128x64xf16, shared>\n        %%a = arith.extf %%q : f16 to f32/' %S/Inputs/attention-rows.mlir > %t.shared.mlir
// RUN: %tessera-compile %t.shared.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=SHARED
// A schedule written by hand is checked: the rotation on a loop that
// cannot take it, and turns for a number of warpgroups the kernel lacks.
// RUN: sed -e 's/stages 2 {/stages 2 attributes {tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized"}} {/' %t.reads.mlir > %t.bad.mlir
// RUN: not %tessera-opt %t.bad.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: sed -e 's/stages 2 {/stages 2 attributes {tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized", warpgroup_turns = 3 : i64}} {/' %t.two.mlir > %t.turns.mlir
// RUN: not %tessera-opt %t.turns.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=TURNS

// PLAN-NOT: remark
// PLAN: tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized", warpgroup_turns = 2 : i64}

// The last warpgroup hands the first its first turn; trip 0 issues Q K^T
// alone and waits for it.
// PTX: setmaxnreg.inc.sync.aligned.u32 232;
// PTX: bar.arrive %r{{[0-9]+}}, 256;
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX: bar.sync %r{{[0-9]+}}, 256;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX: wgmma.commit_group.sync.aligned;
// PTX: bar.arrive %r{{[0-9]+}}, 256;
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX: ex2.approx.ftz.f32
// Trips 1 .. n - 1: Q K^T of iteration k and P V of iteration k - 1
// issued back to back in this warpgroup's turn; the softmax's row maximum
// runs once Q K^T is complete, P V still in flight; P V is complete before
// the exponentials write P, and stage k - 1 goes back then.
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX: bar.sync %r{{[0-9]+}}, 256;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX: wgmma.commit_group.sync.aligned;
// PTX-NOT: wgmma.wait_group
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX: wgmma.commit_group.sync.aligned;
// PTX: bar.arrive %r{{[0-9]+}}, 256;
// PTX: wgmma.wait_group.sync.aligned 1;
// PTX: max.NaN.f32
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX: mbarrier.arrive.shared::cta.b64
// PTX: ex2.approx.ftz.f32
// After the loop: the last iteration's P V, then its stage.
// PTX: bar.sync %r{{[0-9]+}}, 256;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX: mbarrier.arrive.shared::cta.b64
// PTX: bar.arrive %r{{[0-9]+}}, 256;

// ONE-NOT: remark
// ONE: tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized"}

// READS: remark: the two gemms do not overlap across iterations: 'tile.reduce' uses the second gemm's accumulator
// READS: tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "tma-warp-specialized"}

// SHARED: remark: the consumer warpgroups do not take turns: the ops issued beside the gemms read shared memory or reduce across warps
// SHARED: tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized"}

// BAD: error: 'tile.pipelined' op schedule asks for mma_overlap, which this loop cannot take

// TURNS: error: 'tile.pipelined' op schedule has 3 warpgroups take turns; this loop can take 2 (0: none), with mma_overlap
