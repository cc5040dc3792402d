// tile-lower-to-gpu, `multicast` on sm_90a: clusters of two blocks along x.
// Each block recomputes the values B's tile offsets and the iteration count
// take from before the loop at its peer's coordinates (block x ^ 1 of a
// grid launch, linear tile t ^ 1 of a persistent one) and compares them
// with its own; equal (and the peer in the grid), each producer loads A and
// its half of B's two panels and multicasts that half to both blocks (mask
// 3); otherwise it loads all of B alone. Each stage's "empty" barrier counts
// both blocks' consumer warps: a multicasting tile's warps arrive once here
// and once at the peer (mbarrier.arrive.shared::cluster, no cluster-scope
// release: that costs a MEMBAR.GPU per stage), another
// tile's twice here. A cluster barrier orders the barriers' init before any
// remote use (a grid launch's blocks pass it when they multicast, a block
// past the grid leaves); each producer stays until both blocks' consumers
// released every stage.
// RUN: %tessera-compile %S/Inputs/gemm-multicast.mlir --target=sm_90a --emit=ptx | FileCheck %s
// RUN: %tessera-compile %S/Inputs/gemm-multicast-persistent.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=PERSISTENT
// Targets without the warp-specialized loop run the grid as written.
// RUN: %tessera-compile %S/Inputs/gemm-multicast.mlir --target=sm_80 --emit=ptx 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// A kernel whose neighbors never share B's tile (x walks the columns) gets
// no multicast code at all: the comparison folds to false.
// RUN: sed -e 's/(s0 ceildiv 128, s5 ceildiv 128)/(s5 ceildiv 128, s0 ceildiv 128)/' -e 's/%row = arith.muli %bx/%row = arith.muli %by/' -e 's/%col = arith.muli %by/%col = arith.muli %bx/' %S/Inputs/gemm-multicast.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=COLUMNS
// multicast_blocks = 4 (a persistent kernel whose B tile has four panels):
// clusters of four, tiles t ^ 1, t ^ 2, t ^ 3 compared, each rank loads one
// panel of B to all four blocks (mask 15), each stage's "empty" barrier counts
// the four blocks' 8 warps each, and a multicasting tile's warps arrive here
// and at the three peers.
// RUN: sed -e 's/64x128xf16/64x256xf16/g' -e 's/128x128xf32/128x256xf32/g' -e 's/threads(128)/threads(256)/' -e 's/multicast, persistent/multicast, multicast_blocks = 4 : i64, persistent/' %S/Inputs/gemm-multicast-persistent.mlir > %t.mc4.mlir
// RUN: %tessera-compile %t.mc4.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=FOUR
// RUN: %tessera-compile %t.mc4.mlir --target=sm_90a -o %t.mc4.ptx --bundle=%t.mc4.pb
// RUN: %tessera-run --bundle=%t.mc4.pb --list | FileCheck %s --check-prefix=FOUR-LIST
// Stream-K in clusters of two: whole tiles (below the whole rounds' count)
// multicast as the persistent kernel's do, pieces of split tiles load alone;
// the producer's tail waits for every stage's next round.
// RUN: sed -e 's/multicast, persistent/multicast, persistent, stream_k/' %S/Inputs/gemm-multicast-persistent.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=STREAMK
// B's two panels are fewer than four blocks: a remark, no clusters.
// RUN: sed -e 's/multicast}/multicast, multicast_blocks = 4 : i64}/' %S/Inputs/gemm-multicast.mlir | %tessera-compile - --target=sm_90a --emit=ptx 2>&1 | FileCheck %s --check-prefix=FOUR-REMARK

// CHECK: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 1;
// CHECK: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 8;
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: xor.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 1;
// CHECK: barrier.cluster.arrive.aligned;
// CHECK: barrier.cluster.wait.aligned;
// CHECK: bar.sync 0;
// CHECK: exit;
// CHECK: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], 32768;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{{.*}}], {{%rs[0-9]+}};
// CHECK-NOT: multicast::cluster
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{{.*}}], {{%rs[0-9]+}};
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: exit;
// CHECK: mapa.shared::cluster.u32
// CHECK: mbarrier.arrive.shared::cta.b64 _, [{{%r[0-9]+}}], {{%r[0-9]+}};
// CHECK: mbarrier.arrive.shared::cluster.b64 _,
// CHECK-NOT: release.cluster.shared::cluster
// CHECK-NOT: st.shared.u64

// PERSISTENT: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 8;
// PERSISTENT: fence.mbarrier_init.release.cluster;
// PERSISTENT: barrier.cluster.arrive.aligned;
// PERSISTENT: barrier.cluster.wait.aligned;
// PERSISTENT-NOT: bar.sync
// The producer's tile loop: the peer's tile t ^ 1 and its column.
// PERSISTENT: xor.b64 [[PEER:%rd[0-9]+]], {{%rd[0-9]+}}, 1;
// PERSISTENT: div.u64 {{%rd[0-9]+}}, [[PEER]],
// PERSISTENT: bytes.multicast::cluster
// PERSISTENT: bytes.multicast::cluster
// Its tail, after the tiles: the next round of every stage.
// PERSISTENT: mbarrier.try_wait.parity.shared::cta.b64
// PERSISTENT: exit;
// The consumers, per tile.
// PERSISTENT: xor.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 1;
// PERSISTENT: mbarrier.arrive.shared::cta.b64 _, [{{%r[0-9]+}}], {{%r[0-9]+}};
// PERSISTENT: mbarrier.arrive.shared::cluster.b64 _,

// REMARK: remark: multicast not applied: no warp-specialized pipelined loop

// COLUMNS-NOT: multicast::cluster
// COLUMNS-NOT: shared::cluster.b64

// FOUR: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 32;
// FOUR: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
// FOUR: barrier.cluster.arrive.aligned;
// FOUR: xor.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 1;
// FOUR: xor.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 2;
// FOUR: xor.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 3;
// FOUR: mov.b16 {{%rs[0-9]+}}, 15;
// FOUR: bytes.multicast::cluster
// FOUR-COUNT-3: mapa.shared::cluster.u32
// FOUR-COUNT-3: mbarrier.arrive.shared::cluster.b64 _,

// FOUR-LIST: gemm({{.*}}) grid {{.*}} persistent, clusters of 4,

// FOUR-REMARK: remark: multicast not applied: no copy of at least as many panels as the cluster has blocks
// FOUR-REMARK-NOT: multicast::cluster

// STREAMK: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}], 8;
// STREAMK: barrier.cluster.arrive.aligned;
// STREAMK: xor.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 1;
// STREAMK: bytes.multicast::cluster
// STREAMK: mbarrier.try_wait.parity.shared::cta.b64
// STREAMK: exit;
// STREAMK: mbarrier.arrive.shared::cluster.b64 _,
// STREAMK: fence.acq_rel.gpu;
