// sm100's CTA-pair form (backends/sm100/CtaPair.h): the blocks of a
// cluster of two run one tcgen05.mma.cta_group::2 of M = 256. The kernel
// of gemm-tcgen05.mlir with M promised a multiple of 256: the blocks along
// y (M tiles of 128) come in pairs that load the same B tile.
// RUN: sed -e 's/array<i64: 1, 8/array<i64: 256, 8/' %S/Inputs/gemm-tcgen05.mlir | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: sed -e 's/array<i64: 1, 8/array<i64: 256, 8/' %S/Inputs/gemm-tcgen05.mlir | %tessera-compile - --emit=lowered | FileCheck %s --check-prefix=LAUNCH
// RUN: sed -e 's/array<i64: 1, 8/array<i64: 256, 8/' %S/Inputs/gemm-tcgen05.mlir | %tessera-compile - --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: sed -e 's/array<i64: 1, 8/array<i64: 256, 8/' %S/Inputs/gemm-tcgen05.mlir | %tessera-compile - --emit=ptx | FileCheck %s --check-prefix=STORED
// B stored N x K (FP8, K-major): each block loads half of B's rows.
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05-pair-fp8.mlir --emit=ptx | FileCheck %s --check-prefix=ROWS
// M along x (gemm-multicast.mlir's grid without its multicast): the pair
// lies along x, clusters of 2 x 1.
// RUN: sed -e 's/sm_90a/sm_100a/; s/, multicast}/}/; s/array<i64: 1, 8/array<i64: 256, 8/' %S/Inputs/gemm-multicast.mlir | %tessera-compile - --emit=tile | FileCheck %s --check-prefix=ALONGXPLAN
// RUN: sed -e 's/sm_90a/sm_100a/; s/, multicast}/}/; s/array<i64: 1, 8/array<i64: 256, 8/' %S/Inputs/gemm-multicast.mlir | %tessera-compile - --emit=lowered | FileCheck %s --check-prefix=ALONGX
// A buffer the code before the loop uses moves after the mbarriers: the
// block launches with the stages (96 KiB), the mbarriers, that buffer
// (16 KiB, 128-byte aligned) and the tensor-memory slot and barriers.
// RUN: %tessera-compile %S/Inputs/gemm-tcgen05-pair-early.mlir --emit=lowered | FileCheck %s --check-prefix=EARLY
// M promised a multiple of 128 only: a block may have no peer, and the
// loop runs on sm90's strategy, without a remark (the pair is a form only
// some tiles take).
// RUN: sed -e 's/array<i64: 1, 8/array<i64: 128, 8/' %S/Inputs/gemm-tcgen05.mlir | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=ALONE
// Schedules written by hand are checked by the strategy.
// RUN: %tessera-opt %s --split-input-file --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --verify-diagnostics

// PLAN-NOT: remark
// PLAN: tile.pipelined {{.*}} {tile.schedule = {in_flight = 0 : i64, pair_dim = 1 : i64, stages = 3 : i64, strategy = "tcgen05-pair"}}

// Clusters of 1 x 2 blocks, each with a producer warpgroup.
// LAUNCH: tessera.block_threads = 256 : i64, tessera.cluster_x = 1 : i64, tessera.cluster_y = 2 : i64

// Once both blocks run (the cluster's barrier), warp 0 of each allocates
// the pair's columns; thread 0 sets up the
// MMAs' barrier and the one both blocks arrive on once their accumulator
// rows are in tensor memory (two arrivals).
// PTX: barrier.cluster.arrive.aligned;
// PTX-NEXT: barrier.cluster.wait.aligned;
// PTX: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32
// PTX: tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
// PTX: mov.b32 [[TWO:%r[0-9]+]], 2;
// PTX: mbarrier.init.shared.b64 [__dynamic_shmem__0+{{[0-9]+}}], [[TWO]];
// The ring's barriers count one arrival (the leader's commit); then the
// pair meets on the cluster's barrier before either touches the other's.
// PTX-COUNT-6: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 1;
// PTX: barrier.cluster.arrive.aligned;
// PTX-NEXT: barrier.cluster.wait.aligned;
// PTX-NEXT: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
// The producer loads its A tile and its half of B (one 64-column panel of
// two) into its own shared memory, completing on the leader's full
// barrier (mapa to rank 0); the leader arms it with both blocks' bytes:
// 2 x 16 KiB of A and 16 KiB of B.
// PTX: mapa.shared::cluster.u32
// PTX-COUNT-2: cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-NOT: cp.async.bulk.tensor
// PTX: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], 49152;
// PTX: exit;
// The consumers store their rows into tensor memory; thread 0 of each
// block arrives on the leader's barrier (the leader's threads wait for
// both before the loop, laid out further down).
// PTX-COUNT-4: tcgen05.st.sync.aligned.32x32b.x32.b32
// PTX: tcgen05.fence::before_thread_sync;
// PTX-NEXT: bar.sync 1, 128;
// PTX: mapa.shared::cluster.u32
// PTX: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{{%r[0-9]+}}];
// After the loop, the leader's last commit reaches both blocks' barrier;
// each block reads its own 128 rows back.
// PTX: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
// PTX: tcgen05.ld.sync.aligned.32x32b.x32.b32
// At the end both blocks' consumers meet on the cluster's barrier before
// warp 0 of each frees the columns.
// PTX: tcgen05.fence::before_thread_sync;
// PTX-NEXT: barrier.cluster.arrive.aligned;
// PTX-NEXT: barrier.cluster.wait.aligned;
// PTX: tcgen05.dealloc.cta_group::2.sync.aligned.b32
// Each iteration (the leader's): four k-steps of M = 256 (instruction
// descriptor: B MN-major, N 128 >> 3 at bit 17, M 256 >> 4 at bit 24),
// committed to the stage's empty barrier in both blocks.
// PTX: mov.b32 [[IDESC:%r[0-9]+]], 270598160;
// PTX-COUNT-4: tcgen05.mma.cta_group::2.kind::f16.collector::a::discard [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[IDESC]], {{%p[0-9]+}};
// PTX-NEXT: mov.b16 [[BOTH:%rs[0-9]+]], 3;
// PTX-NEXT: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{{[^]]+}}], [[BOTH]];
// PTX-NOT: tcgen05.{{.*}}cta_group::1
// PTX-NOT: .local

// 64-row boxes of B's 128 rows (the tensor map's box: 128 columns of 64
// rows), 2 x 16 KiB of A and 16 KiB of B per stage; kind::f8f6f4, K-major
// B (no MN-major flag), M 256.
// ROWS: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], 49152;
// ROWS: mov.b32 [[IDESC:%r[0-9]+]], 270532624;
// ROWS-COUNT-4: tcgen05.mma.cta_group::2.kind::f8f6f4.collector::a::discard [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[IDESC]], {{%p[0-9]+}};

// The leader's wait for both blocks' stores acquires at cluster scope.
// STORED: mbarrier.arrive.release.cluster.shared::cluster.b64
// STORED: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64

// ALONGXPLAN: tile.schedule = {in_flight = 0 : i64, pair_dim = 0 : i64, stages = 4 : i64, strategy = "tcgen05-pair"}
// ALONGX: tessera.cluster_x = 2 : i64
// ALONGX-NOT: tessera.cluster_y

// EARLY: tessera.cluster_y = 2 : i64, tessera.shared_memory_bytes = 114840 : i64

// ALONE-NOT: remark
// ALONE: tile.schedule = {hold_accumulators, in_flight = 0 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}

// -----

// Blocks along x load different B tiles.
module attributes {tile.target = #tile.target<"sm_100a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 128)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 256, 8, 8, 256, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    // expected-error @+1 {{schedule pairs blocks along grid dimension 0; this loop pairs them along 1}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, pair_dim = 0 : i64, stages = 3 : i64, strategy = "tcgen05-pair"}} {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// An entry the strategy does not take.
module attributes {tile.target = #tile.target<"sm_100a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 128)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 256, 8, 8, 8, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    // expected-error @+1 {{schedule entry 'hold_accumulators' is not one that strategy 'tcgen05-pair' takes (pair_dim = <i64>)}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {hold_accumulators, in_flight = 0 : i64, pair_dim = 1 : i64, stages = 3 : i64, strategy = "tcgen05-pair"}} {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// M not promised a multiple of 256: the last block may have no peer.
module attributes {tile.target = #tile.target<"sm_100a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 128)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 128, 8, 8, 8, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c128 : index
    %col = arith.muli %bx, %c128 : index
    // expected-error @+1 {{schedule names strategy 'tcgen05-pair', which cannot run this loop: no grid dimension of an extent known to be even has neighbouring blocks load the same B and different A}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, pair_dim = 1 : i64, stages = 3 : i64, strategy = "tcgen05-pair"}} {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<128x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<128x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<128x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
