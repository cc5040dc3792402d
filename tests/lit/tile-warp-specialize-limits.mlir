// tile-lower-to-gpu's warp-specialized strategy puts 16 bytes of mbarriers
// per stage after the planned buffers. When the plan already fills the
// block's shared memory (sm_90a: 232448 bytes) the loop keeps the cp.async
// strategy instead of overflowing at launch; with 64 bytes to spare it is
// specialized.
// RUN: sed 's/KEEP/17920/g' %S/Inputs/gemm-full-shared.mlir > %t.full.mlir
// RUN: %tessera-compile %t.full.mlir --emit=tile | FileCheck %s --check-prefix=PLAN-FULL
// RUN: %tessera-compile %t.full.mlir --emit=ptx | FileCheck %s --check-prefix=FULL
// RUN: sed 's/KEEP/17888/g' %S/Inputs/gemm-full-shared.mlir > %t.room.mlir
// RUN: %tessera-compile %t.room.mlir --emit=ptx | FileCheck %s --check-prefix=ROOM
// RUN: %tessera-compile %t.room.mlir --emit=ptx -o %t.room.ptx --bundle=%t.room.pb
// RUN: %tessera-run --bundle=%t.room.pb --list | FileCheck %s --check-prefix=LAUNCH

// PLAN-FULL: tile.shared_memory_bytes = 232448
// FULL-NOT: mbarrier
// FULL: cp.async.cg.shared.global
// FULL-DAG: fence.proxy.async.shared::cta;
// FULL-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16

// ROOM: .maxntid 384, 1, 1
// ROOM: mbarrier.init.shared::cta.b64
// ROOM: cp.async.bulk.tensor.2d
// ROOM-NOT: cp.async.cg
// `keep` is written before the loop by the consumers alone (the producer
// left first), on their named barrier.
// ROOM: exit;
// ROOM: bar.sync 1, 256;
// ROOM: st.shared.v4.b32
// ROOM-NOT: cp.async.cg
// ROOM: fence.proxy.async.shared::cta;
// ROOM-NOT: cp.async.cg
// ROOM: bar.sync 1, 256;
// ROOM-NOT: cp.async.cg
// ROOM: wgmma.mma_async
// ROOM-NOT: cp.async.cg

// The runtime's description: the producer warpgroup, the mbarriers' bytes
// and the two tensor maps (A's 128 x 64 box, B's 64 x 64 panels).
// LAUNCH: block 384 smem 232448 B target sm_90a, TMA arg0[128, 64] swizzle 128, TMA arg1[64, 64] swizzle 128

// setmaxnreg: the consumers take only what the producer's setmaxnreg.dec
// gives back (each warpgroup's share at launch is 65536 / threads, rounded
// down to 8): 384 threads at 168 -> 232, 640 threads at 96 -> 104 (asking
// for more would block the consumers forever).
// RUN: %tessera-compile %t.room.mlir --emit=ptx | FileCheck %s --check-prefix=REGS2
// RUN: %tessera-compile %S/Inputs/gemm-four-warpgroups.mlir --emit=ptx | FileCheck %s --check-prefix=REGS4
// REGS2: setmaxnreg.dec.sync.aligned.u32 40;
// REGS2: setmaxnreg.inc.sync.aligned.u32 232;
// REGS4: .maxntid 640, 1, 1
// REGS4: setmaxnreg.dec.sync.aligned.u32 40;
// REGS4: setmaxnreg.inc.sync.aligned.u32 104;
