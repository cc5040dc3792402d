// What an attention kernel needs of tile-lower-to-gpu, on every target:
// comparisons and selects of global row and column indices in a parallel
// body (a causal mask), a pipelined loop whose count depends on the block
// index (causal early exit), and [rows, dim] slices of [batch, seq, heads,
// dim] tensors (tile.copy's tensor_dims) bounds-checked against the slice:
// the row past `seq` is zero-filled on load and not stored.
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_60 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SIMT
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_70 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM70
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefixes=CHECK,ASYNC,MMA16
// On sm_90a the slices are bulk tensor copies of rank-4 tensor maps on the
// warp-specialized path, without a remark (tile-warp-specialize-slices.mlir).
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_90a --emit=ptx 2>%t.remarks | FileCheck %s --check-prefixes=CHECK,TMA,WGMMA
// RUN: FileCheck %s --check-prefix=REMARK --allow-empty < %t.remarks
// The lowered slices: the fixed offsets (batch, head) give the slice's
// start, the spanned rows step by heads x 64 elements, and a fixed offset
// past its dimension empties the slice.
// RUN: %tessera-compile %S/Inputs/causal-scores.mlir --target=sm_80 --emit=gpu | FileCheck %s --check-prefix=GPU
// A loop count of the block index on sm_90a's warp-specialized path (a
// triangular GEMM): the producer recomputes the count per tile and issues
// bulk tensor copies; a grid launch still multicasts (the count is part of
// what peers compare), a persistent kernel refuses multicast with a remark.
// RUN: sed -e 's/%count = arith.ceildivui %k, %c64 : index/%kb = arith.ceildivui %k, %c64 : index %count = arith.minui %kb, %by : index/' %S/Inputs/gemm-multicast.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=TRIANGLE
// RUN: sed -e 's/%count = arith.ceildivui %k, %c64 : index/%kb = arith.ceildivui %k, %c64 : index %count = arith.minui %kb, %bx : index/' %S/Inputs/gemm-multicast-persistent.mlir | %tessera-compile - --target=sm_90a --emit=ptx 2>%t.persistent | FileCheck %s --check-prefix=TRIANGLE-PERSISTENT
// RUN: FileCheck %s --check-prefix=TRIANGLE-REMARK < %t.persistent

// CHECK: .entry causal_scores(
// CHECK: setp.{{.*}}
// CHECK: selp.
// SIMT: fma.rn.f32
// SM70: mma.sync.aligned.m8n8k4
// ASYNC: cp.async.cg.shared.global
// TMA: cp.async.bulk.tensor.4d
// MMA16: mma.sync.aligned.m16n8k16
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16

// REMARK-NOT: remark

// GPU-LABEL: gpu.func @causal_scores
// GPU: arith.select %{{.*}}, %{{.*}}, %c0 : index

// TRIANGLE: .entry gemm(
// TRIANGLE: mbarrier.try_wait
// TRIANGLE: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// TRIANGLE: wgmma.mma_async

// TRIANGLE-PERSISTENT: .entry gemm(
// TRIANGLE-PERSISTENT-NOT: multicast::cluster
// TRIANGLE-PERSISTENT: cp.async.bulk.tensor.2d
// TRIANGLE-PERSISTENT-NOT: multicast::cluster
// TRIANGLE-PERSISTENT: wgmma.mma_async

// TRIANGLE-REMARK: remark: multicast not applied: the iteration count depends on the tile (a persistent kernel)
