// The ping-pong schedule (tile.kernel's `pingpong`) in tile-lower-to-gpu: on
// sm_90a the block runs two tiles adjacent along y, one consumer warpgroup
// each, sharing the producer and the ring of stages; elsewhere it is ignored.
// RUN: %tessera-compile %S/Inputs/gemm-pingpong.mlir --target=sm_90a --emit=ptx | FileCheck %s
// RUN: %tessera-compile %S/Inputs/gemm-pingpong.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=SM80
// RUN: not %tessera-compile %s --target=sm_90a --emit=ptx 2>&1 | FileCheck %s --check-prefix=ONEDIM
// Memory accessed before the loop: that code runs on the consumers alone
// (the producer leaves at the kernel's start), each tile slot on its own
// tile, its copy of the bias tile and its named barrier (1 + slot).
// RUN: %tessera-compile %S/Inputs/gemm-pingpong-bias-first.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=FIRST
// FIRST: .maxntid 384, 1, 1
// FIRST: exit;
// FIRST: mbarrier.init.shared::cta.b64
// FIRST: bar.sync 0;
// FIRST: setmaxnreg.dec.sync.aligned.u32 40;
// FIRST-NOT: ld.global
// FIRST: cp.async.bulk.tensor.2d
// FIRST: exit;
// FIRST: setmaxnreg.inc.sync.aligned.u32 232;
// FIRST-NOT: bar.sync 0;
// FIRST: ld.global.b16
// FIRST: st.shared.b16
// FIRST: fence.proxy.async.shared::cta;
// FIRST-NEXT: bar.sync %r{{[0-9]+}}, 128;
// FIRST: bar.sync 3, 256;
// FIRST: wgmma.mma_async
// FIRST-NOT: bar.sync 0;

// Two consumer warpgroups and the producer.
// CHECK: .maxntid 384, 1, 1
// Slot 1 leaves when the grid has no second tile for its block.
// CHECK: exit;
// Each stage is released by one tile's 128 consumers.
// CHECK: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 128;
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// The producer loads the pair's tiles one after the other.
// CHECK: cp.async.bulk.tensor.2d
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// Slot 1 waits until slot 0 has left its main loop.
// CHECK: bar.sync 3, 256;
// 128 rows per warpgroup: two m64n128 wgmmas per k-step.
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: bar.arrive 3, 256;
// The epilogue synchronizes each tile's warpgroup on its own barrier, and
// reads its own copy of the bias tile.
// CHECK: bar.sync %r{{[0-9]+}}, 128;

// SM80: .maxntid 128, 1, 1
// SM80-NOT: bar.sync 3
// SM80: mma.sync.aligned.m16n8k16

// A one-dimensional grid has no y to pair blocks along.
// ONEDIM: error: 'tile.kernel' op pingpong pairs blocks along y: it needs a grid of two or three extents, got 1
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @onedim() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) attributes {pingpong} {
  }
}
