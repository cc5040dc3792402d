// The TMA warp-specialized strategy with computation between the gemms:
// the producer warpgroup issues only the bulk tensor copies into the ring
// of stages; the consumers run everything else (clears, fills, reductions,
// tile.parallel loops and casts on fragments). A body that reads a gemm's
// accumulator keeps no wgmma group in flight (in_flight = 0), and each
// iteration releases its own stage once its MMAs are complete.
//
// FlashAttention's forward pass, 128 query rows on one warpgroup (wgmma
// m64 twice per k-step, for Q K^T and for P V with P from registers):
// RUN: sed -e 's/sm_80/sm_90a/' %S/Inputs/attention-rows.mlir > %t.rows.mlir
// RUN: %tessera-compile %t.rows.mlir --emit=tile 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %t.rows.mlir --emit=ptx | FileCheck %s --check-prefix=ROWS
// The same with two consumer warpgroups of 64 rows (256 threads and a
// producer, 384 in all): wgmma for both gemms, P.V with P from registers
// (RS), registers moved to the consumers with setmaxnreg.
// RUN: sed -e 's/sm_80/sm_90a/' -e 's/threads(128)/threads(256)/' %S/Inputs/attention-rows.mlir > %t.two.mlir
// RUN: %tessera-compile %t.two.mlir --emit=ptx | FileCheck %s --check-prefix=TWO
// A 1-D tile of a 1-D tensor (an additive mask per key column) is a bulk
// tensor copy of a 1-D tensor map without swizzle, in the same stage.
// RUN: %tessera-compile %S/Inputs/attention-mask.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=MASK
// RUN: %tessera-compile %S/Inputs/attention-mask.mlir --target=sm_90a --emit=ptx -o %t.mask.ptx --bundle=%t.mask.pb
// RUN: FileCheck %s --check-prefix=MASKPTX < %t.mask.ptx
// RUN: %tessera-run --bundle=%t.mask.pb --list | FileCheck %s --check-prefix=MASKMAP
// Where warp specialization is still refused, a remark names the op and
// the reason: a tile.parallel that stores into shared memory between the
// stages.
// RUN: %tessera-opt %s --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=SHARED

// PLAN-NOT: remark: pipelining
// PLAN: tile.pipelined {{.*}} attributes {tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized"}}

// The producer: K and V by TMA on the stage's full barrier, 16 KiB a stage.
// ROWS: mbarrier.try_wait.parity.shared::cta.b64
// ROWS: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 16384;
// ROWS-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// ROWS: exit;
// The consumers: wait for the stage, S = Q K^T by wgmma (all in shared
// memory), complete before the softmax reads S (quad shuffles, exp2).
// ROWS: mbarrier.try_wait.parity.shared::cta.b64
// ROWS: wgmma.fence.sync.aligned;
// ROWS-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// ROWS: wgmma.commit_group.sync.aligned;
// ROWS: wgmma.wait_group.sync.aligned 0;
// ROWS: max.NaN.f32
// ROWS: shfl.sync.bfly.b32
// ROWS: ex2.approx.ftz.f32
// Then P V by wgmma with P from registers (RS): one warpgroup holds 128
// rows, two m64 instructions per k-step whose A registers are the rows of
// S's accumulator each instruction wrote (no shuffles). Under the rotated
// schedule (tile-mma-overlap.mlir) the next trip issues it beside its own
// Q K^T, and the stage goes back once it is complete.
// ROWS-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// ROWS: wgmma.wait_group.sync.aligned 0;
// ROWS: mbarrier.arrive.shared::cta.b64 _, [%r{{[0-9]+}}];
// ROWS-NOT: mbarrier.arrive
// ROWS: wgmma.wait_group.sync.aligned 0;
// ROWS-NOT: mma.sync

// TWO: .maxntid 384, 1, 1
// TWO: setmaxnreg.dec.sync.aligned.u32 40;
// TWO-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// TWO: setmaxnreg.inc.sync.aligned.u32 232;
// TWO: mbarrier.try_wait.parity.shared::cta.b64
// TWO-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// TWO: wgmma.wait_group.sync.aligned 0;
// TWO: ex2.approx.ftz.f32
// TWO-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// TWO: wgmma.wait_group.sync.aligned 0;
// TWO: mbarrier.arrive.shared::cta.b64
// TWO-NOT: mma.sync

// MASK-NOT: remark: pipelining
// MASK: tile.schedule = {in_flight = 0 : i64, mma_overlap, stages = 2 : i64, strategy = "tma-warp-specialized"}
// MASKPTX: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 16640;
// MASKPTX-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// MASKPTX: cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}}], [%r{{[0-9]+}}];
// MASKPTX-NOT: cp.async.cg
// MASKPTX: wgmma.mma_async
// MASKPTX: wgmma.wait_group.sync.aligned 0;
// The parallel loop reads the mask from shared memory but writes none:
// no proxy fence before P V's wgmma.
// MASKPTX-NOT: fence.proxy.async
// MASKPTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// MASKMAP: TMA arg3[64],

// SHARED: remark: pipelining with cp-async-multistage instead of tma-warp-specialized: the consumers cannot run the body between the stages: 'tile.parallel' stores into a shared buffer
// SHARED: tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}

module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @scaled_b(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf32>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 8, 8, 8, 8, 8, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x128xf32, fragment>
    tile.clear %acc : !tile.buffer<64x128xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c64 : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c128 : index
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.parallel (%r, %c) in [64, 128] {
        %v = tile.load %Bs[%r, %c] : !tile.buffer<64x128xf16, shared>
        %h = arith.mulf %v, %v : f16
        tile.store %h, %Bs[%r, %c] : !tile.buffer<64x128xf16, shared>
      }
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<64x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x128xf32, fragment> to !tile.tensor<?x?xf32>
  }
}
