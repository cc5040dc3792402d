// Tiles of rank-3/4 tensors (tile.copy's tensor_dims: [rows, dim] slices
// of [batch, seq, heads, dim]) by TMA on sm_90a's warp-specialized path:
// a tensor map of the tensor's rank whose box is 1 on the fixed
// dimensions, one cp.async.bulk.tensor.<rank>d per panel with one
// coordinate per dimension, innermost first (the columns, the head, the
// rows, the batch). Out-of-range coordinates of a fixed dimension read as
// zero, the slice's bounds (tile.copy's semantics).
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_90a --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %tessera-run --bundle=%t.pb --list | FileCheck %s --check-prefix=MAP
// A rank-3 tensor ([seq, heads, dim]) sliced along dimensions 0 and 2.
// RUN: sed -e 's/?x?x?x64xf16/?x?x64xf16/g' -e 's/?x?x?x64xf32/?x?x64xf32/g' -e 's/\[%b, \(%[a-z0-9]*\), %h, %c0\]/[\1, %h, %c0]/g' -e 's/array<i64: 1, 3>/array<i64: 0, 2>/g' -e 's/tile.dim %K\[1\]/tile.dim %K[0]/' -e 's/blocks(%bx, %h, %b)/blocks(%bx, %h)/' -e 's/(s1 ceildiv 64, s2, s0)/(s0 ceildiv 64, s1)/' -e 's/, s6, s7, s8\]/]/' -e 's/{B = array<i64: 0, 3, 6>, S = array<i64: 1, 4, 7>, H = array<i64: 2, 5, 8>}/{S = array<i64: 0, 2, 4>, H = array<i64: 1, 3, 5>}/' %S/Inputs/causal-scores.mlir > %t.rank3.mlir
// RUN: %tessera-compile %t.rank3.mlir --target=sm_90a --emit=ptx -o %t.rank3.ptx --bundle=%t.rank3.pb
// RUN: FileCheck %s --check-prefix=RANK3 < %t.rank3.ptx
// RUN: %tessera-run --bundle=%t.rank3.pb --list | FileCheck %s --check-prefix=MAP3

// PLAN-NOT: remark: pipelining
// PLAN: tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "tma-warp-specialized"}

// The producer: K's box at (0, h, k * 64, b), 8 KiB a stage.
// PTX-LABEL: .entry causal_scores(
// PTX: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// PTX: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 8192;
// PTX: shl.b32 %r[[ROW:[0-9]+]], %r{{[0-9]+}}, 6;
// PTX: mov.b32 %r[[COL:[0-9]+]], 0;
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r[[COL]], %r{{[0-9]+}}, %r[[ROW]], %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// PTX-NOT: cp.async.cg
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// MAP: TMA arg1[1, 64, 1, 64] swizzle 128

// RANK3: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// MAP3: TMA arg1[64, 1, 64] swizzle 128
