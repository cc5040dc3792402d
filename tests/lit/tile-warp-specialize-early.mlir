// tile-lower-to-gpu, warp specialization without a loop over tiles: the
// producer warpgroup leaves at the kernel's start and fills the stages while
// the consumers run the code before the pipelined loop. A buffer that code
// accesses, placed by the plan on bytes of the stages (gemm-grid-bias-init:
// the bias tile at offset 0, its lifetime before the loop's), moves after
// the mbarriers (131072 + 64 bytes, 128-aligned), and the launch takes it.
// RUN: %tessera-compile %S/Inputs/gemm-grid-bias-init.mlir --emit=tile | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %S/Inputs/gemm-grid-bias-init.mlir --emit=ptx -o %t.ptx --bundle=%t.pb | FileCheck %s --allow-empty --check-prefix=NONE
// RUN: FileCheck %s < %t.ptx
// RUN: %tessera-run --bundle=%t.pb --list | FileCheck %s --check-prefix=LAUNCH

// PLAN: tile.shared_memory_bytes = 131072
// PLAN: tile.alloc_shared {name = "As", offset = 0 : i64, stages = 4
// PLAN: tile.alloc_shared {name = "bias_tile", offset = 0 : i64}
// NONE-NOT: remark

// CHECK: .maxntid 256, 1, 1
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: bar.sync 0;
// CHECK: cp.async.bulk.tensor.2d
// CHECK: exit;
// The consumers: the bias tile written past the mbarriers, on their barrier.
// CHECK-NOT: bar.sync 0;
// CHECK: bar.sync 1, 128;
// CHECK: ld.global.b16
// CHECK: st.shared.b16 [%r{{d?[0-9]+}}+131200]
// CHECK: bar.sync 1, 128;
// CHECK: ld.shared.v2.b16 {{.*}}+131200]
// CHECK: wgmma.mma_async

// LAUNCH: block 256 smem 131456 B target sm_90a

// Two pipelined loops: only the first is warp-specialized (one producer,
// gone after the kernel's start); the second pipelines with cp.async on the
// consumers, synchronizing on their named barrier.
// RUN: %tessera-compile %S/Inputs/gemm-two-loops.mlir --emit=ptx | FileCheck %s --check-prefix=TWO
// TWO: .maxntid 384, 1, 1
// TWO-COUNT-1: setmaxnreg.dec.sync.aligned.u32
// TWO: cp.async.bulk.tensor.2d
// TWO: exit;
// TWO-NOT: cp.async.bulk.tensor
// TWO: mbarrier.try_wait.parity
// TWO: wgmma.mma_async
// TWO-NOT: cp.async.bulk.tensor
// TWO-NOT: bar.sync 0;
// TWO: bar.sync 1, 256;
// TWO: cp.async.cg.shared.global
// TWO: wgmma.mma_async
// TWO: bar.sync 1, 256;
// TWO-NOT: setmaxnreg
// TWO-NOT: bar.sync 0;

// A larger buffer used only before the loop (gemm-full-shared without its
// read after the loop: `keep` planned at offset 0, on the stages): 16 KiB
// move after the mbarriers (196608 + 64 -> 196736) and the loop stays
// specialized; 40000 bytes would not fit there, and the loop keeps the
// cp.async pipeline, with a remark naming the buffer and the limit.
// RUN: sed -e 's/KEEP/8192/g' -e '/tile.copy %keep to/d' %S/Inputs/gemm-full-shared.mlir > %t.fit.mlir
// RUN: %tessera-compile %t.fit.mlir --emit=ptx -o %t.fit.ptx --bundle=%t.fit.pb 2>&1 | FileCheck %s --allow-empty --check-prefix=NONE
// RUN: FileCheck %s --check-prefix=FIT < %t.fit.ptx
// RUN: %tessera-run --bundle=%t.fit.pb --list | FileCheck %s --check-prefix=FITLAUNCH
// FIT: cp.async.bulk.tensor.2d
// FIT: exit;
// FIT: st.shared.v4.b32 [%r{{d?[0-9]+}}+196736]
// FITLAUNCH: block 384 smem 213120 B
// RUN: sed -e 's/KEEP/20000/g' -e '/tile.copy %keep to/d' %S/Inputs/gemm-full-shared.mlir > %t.big.mlir
// RUN: %tessera-compile %t.big.mlir --emit=ptx -o %t.big.ptx 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: FileCheck %s --check-prefix=BIGPTX < %t.big.ptx
// BIG: remark: pipelining with cp-async-multistage instead of tma-warp-specialized: the producer fills the stages while the code before the loop uses keep (40000 bytes), planned on the stages' bytes, and after the mbarriers they would need 236800 bytes, over the 232448-byte per-block limit
// BIGPTX: .maxntid 256, 1, 1
// BIGPTX-NOT: cp.async.bulk.tensor
// BIGPTX: cp.async.cg.shared.global
