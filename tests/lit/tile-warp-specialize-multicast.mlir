// tile-lower-to-gpu, `multicast` (a grid launch on sm_90a): clusters of two
// blocks along x. Thread 0 publishes the values B's tile offsets and the
// iteration count take from before the loop, and whether its block is in
// the grid (x rounded up to even); after a cluster barrier every thread
// compares them with the peer's (mapa + ld.shared::cluster). Equal: each
// stage's "empty" barrier counts both blocks' consumer warps (a select),
// each producer loads A and its half of B's two panels and multicasts that
// half to both blocks (mask 3); otherwise it loads all of B alone. A second
// cluster barrier orders the barriers' init before any remote use; a block
// past the grid leaves. Consumer warps release stages to both blocks
// (mbarrier.arrive.shared::cluster, no cluster-scope release: that costs a
// MEMBAR.GPU per stage, RESULTS.md run 60), and the producer stays until
// both blocks' consumers released every stage.
// RUN: %tessera-compile %S/Inputs/gemm-multicast.mlir --target=sm_90a --emit=ptx | FileCheck %s
// Targets without the warp-specialized loop run the grid as written.
// RUN: %tessera-compile %S/Inputs/gemm-multicast.mlir --target=sm_80 --emit=ptx 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// CHECK: mov.u32 [[RANK:%r[0-9]+]], %cluster_ctarank;
// CHECK-COUNT-3: st.shared.u64
// CHECK: barrier.cluster.arrive.release.aligned;
// CHECK: barrier.cluster.wait.acquire.aligned;
// CHECK: mapa.shared::cluster.u32
// CHECK-COUNT-3: ld.shared::cluster.u64
// CHECK: selp.b32 [[EMPTY:%r[0-9]+]], 8, 4,
// CHECK: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 1;
// CHECK: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], [[EMPTY]];
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: barrier.cluster.arrive.release.aligned;
// CHECK: barrier.cluster.wait.acquire.aligned;
// CHECK: exit;
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], 32768;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{{.*}}], {{%rs[0-9]+}};
// CHECK-NOT: multicast::cluster
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{{.*}}], {{%rs[0-9]+}};
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: exit;
// CHECK: mapa.shared::cluster.u32
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: mbarrier.arrive.shared::cluster.b64 _,
// CHECK-NOT: release.cluster.shared::cluster

// REMARK: remark: multicast not applied: no warp-specialized pipelined loop
