// Each pipelining strategy, from a kernel that carries its schedule
// (tile.schedule, as tile-plan-pipelines writes it) to the lowered IR of
// tile-lower-to-gpu: the strategy named is the strategy run. The kernel is
// Inputs/gemm-pipelined.mlir (a 64 x 64 tile, K in steps of 32, A and B
// staged three deep) with the schedule put on its loop.
// RUN: sed -e 's/stages 3 {/stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}} {/' %S/Inputs/gemm-pipelined.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu | FileCheck %s --check-prefix=CPASYNC
// RUN: sed -e 's/sm_80/sm_70/' -e 's/stages 3 {/stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "register-double-buffer"}} {/' %S/Inputs/gemm-pipelined.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu | FileCheck %s --check-prefix=REGDB
// RUN: sed -e 's/stages 3 {/stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "in-order"}} {/' %S/Inputs/gemm-pipelined.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu | FileCheck %s --check-prefix=INORDER
// RUN: sed -e 's/sm_80/sm_90a/' -e 's/stages 3 {/stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}} {/' %S/Inputs/gemm-pipelined.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu | FileCheck %s --check-prefix=TMA
// The same sm_90a kernel told to use cp.async: the strategy follows the
// schedule, not the target's first choice (wgmma fenced for the async proxy).
// RUN: sed -e 's/sm_80/sm_90a/' -e 's/stages 3 {/stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}} {/' %S/Inputs/gemm-pipelined.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu | FileCheck %s --check-prefix=CPASYNC90

// cp-async-multistage: a prologue loop copies iterations 0 and 1 (S - 1
// ahead) with byte counts, one commit group each; iteration 0's group is
// waited for (one newer pending) under one barrier and its first k-step's
// fragments load. The versioned loop's interior iterations copy 16 bytes
// unchecked; every iteration waits once and synchronizes once.
// CPASYNC-LABEL: gpu.func @gemm
// CPASYNC: gpu.barrier
// CPASYNC: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CPASYNC: "cp.async.cg.shared.global [$0], [$1], 16, $2;"
// CPASYNC: nvvm.cp.async.commit.group
// CPASYNC: nvvm.cp.async.wait.group 1
// CPASYNC-NEXT: gpu.barrier
// CPASYNC: "ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CPASYNC: scf.while
// CPASYNC: scf.while
// CPASYNC: "cp.async.cg.shared.global [$0], [$1], 16;"
// CPASYNC: nvvm.cp.async.commit.group
// CPASYNC: nvvm.cp.async.wait.group 1
// CPASYNC-NEXT: gpu.barrier
// CPASYNC: nvvm.cp.async.wait.group 0
// CPASYNC-NOT: mbarrier
// CPASYNC: gpu.return

// register-double-buffer: iteration 0's tiles go through registers into
// stage 0 between two barriers; in the loop, iteration k + 1's tiles load
// (the last iteration reloads its own), the MMAs run, the registers are
// stored to the other stage, and one barrier ends the iteration.
// REGDB-LABEL: gpu.func @gemm
// REGDB-NOT: cp.async
// REGDB: gpu.barrier
// REGDB: llvm.store %{{.*}} : vector<8xf16>, !llvm.ptr<3>
// REGDB: gpu.barrier
// REGDB-NEXT: scf.for %[[K:.*]] = %c0 to %{{.*}} step %c1 {
// REGDB: arith.minui
// REGDB: nvvm.mma.sync
// REGDB: arith.remui
// REGDB: llvm.store %{{.*}} : vector<8xf16>, !llvm.ptr<3>
// REGDB: gpu.barrier
// REGDB-NEXT: }
// REGDB-NOT: cp.async

// in-order: the loop as written, a barrier after each iteration's copies
// and at its end; nothing is issued ahead.
// INORDER-LABEL: gpu.func @gemm
// INORDER-NOT: cp.async
// INORDER: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// INORDER: gpu.barrier
// INORDER: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// INORDER: gpu.barrier
// INORDER-NEXT: }
// INORDER-NOT: cp.async

// tma-warp-specialized: a producer warpgroup joins the kernel's 128
// threads; thread 0 initializes full (1 arrival) and empty (128) barriers
// per stage; the producer's elected thread waits for a free stage, arms its
// full barrier for 8192 bytes and issues two bulk tensor copies; the
// consumers wait on the full barrier, keep one wgmma group in flight and
// release the previous iteration's stage.
// TMA: gpu.func @gemm
// TMA-SAME: known_block_size = array<i32: 256, 1, 1>
// TMA-SAME: tessera.tensor_map_args
// TMA-COUNT-3: "mbarrier.init.shared::cta.b64 [$0], 1;"
// TMA: nvvm.fence.mbarrier.init
// TMA: gpu.barrier
// TMA-NEXT: %[[PRODUCER:.*]] = arith.cmpi uge, %thread_id_x, %c128 : index
// TMA-NEXT: scf.if %[[PRODUCER]] {
// TMA: scf.for
// TMA: mbarrier.try_wait.parity
// TMA: "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], 8192;"
// TMA-COUNT-2: "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// TMA: "exit;"
// TMA: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// TMA: mbarrier.try_wait.parity
// TMA: wgmma.mma_async
// TMA: nvvm.wgmma.wait.group.sync.aligned 1
// TMA: "mbarrier.arrive.shared::cta.b64 _, [$0];"
// TMA: nvvm.wgmma.wait.group.sync.aligned 0
// TMA-NOT: cp.async.cg

// CPASYNC90-LABEL: gpu.func @gemm
// CPASYNC90-SAME: known_block_size = array<i32: 128, 1, 1>
// CPASYNC90-NOT: mbarrier
// CPASYNC90: nvvm.cp.async.commit.group
// CPASYNC90: nvvm.cp.async.wait.group 0
// CPASYNC90-NEXT: nvvm.fence.proxy
// CPASYNC90: wgmma.mma_async
