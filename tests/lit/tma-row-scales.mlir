// A small tile beside the operands (a k-block's row of scales, a buffer
// without swizzle) stays in the TMA warp-specialized pipeline: one bulk
// tensor copy of the whole tile, no swizzle, its rows dense.
// RUN: %tessera-opt %S/Inputs/gemm-row-scales.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: %tessera-compile %S/Inputs/gemm-row-scales.mlir --emit=ptx | FileCheck %s --check-prefix=PTX
// Rows the tensor's divisibility does not prove 16-byte aligned cannot be a
// bulk tensor copy: the loop falls back, and a remark says why.
// RUN: sed -e 's/8, 8, 8, 8, 1, 4, 8, 8/8, 8, 8, 8, 1, 1, 8, 8/' %S/Inputs/gemm-row-scales.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=PITCH

// PLAN-NOT: remark
// PLAN: tile.alloc_shared {name = "Ss", offset = {{[0-9]+}} : i64, stages = 3 : i64} : <1x64xf32, shared>
// PLAN: tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}
// PTX-COUNT-3: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-NOT: cp.async.cg
// PITCH: remark: pipelining with cp-async-multistage instead of tma-warp-specialized: the copy into 'Ss' cannot be a bulk tensor copy: the tensor's row pitch is not known to be a multiple of 16 bytes
// PITCH: tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}
