// A persistent kernel (tile.kernel's `persistent`) in tile-lower-to-gpu:
// the body loops over the grid's blocks from blockIdx.x by gridDim.x; with a
// warp-specialized loop (sm_90a) the barriers are set up once, the producer
// runs its own loop over the block's tiles ahead of the consumers, and the
// ring of stages continues from one tile to the next.
// RUN: %tessera-compile %S/Inputs/gemm-persistent.mlir --target=sm_90a --emit=gpu | FileCheck %s
// RUN: %tessera-compile %S/Inputs/gemm-persistent.mlir --target=sm_80 --emit=gpu | FileCheck %s --check-prefix=SM80
// RUN: not %tessera-compile %s --target=sm_90a --emit=gpu 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: %tessera-compile %S/Inputs/gemm-persistent-bias-first.mlir --target=sm_90a --emit=gpu | FileCheck %s --check-prefix=FIRST
// Grid constants equal to a DenseMap's reserved keys (INT64_MAX and INT64_MAX - 1) are
// index constants like any other (the persistent loop over tiles evaluates the grid).
// RUN: %tessera-compile %S/Inputs/gemm-persistent-int64-max.mlir --target=sm_90a --emit=gpu | FileCheck %s --check-prefix=MAX
// RUN: %tessera-compile %S/Inputs/gemm-persistent-int64-max.mlir --target=sm_80 --emit=gpu | FileCheck %s --check-prefix=MAX

// CHECK: gpu.func @gemm{{.*}}tessera.persistent
// CHECK-DAG: %[[N128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-DAG: %[[ID1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[RING:.*]] = memref.alloca() : memref<1xindex>
// CHECK: memref.store %{{.*}}, %[[RING]]
// Once per block: the mbarriers.
// CHECK: "mbarrier.init.shared::cta.b64 [$0], 1;"
// CHECK: nvvm.fence.mbarrier.init
// The producer's own loop over the block's tiles, the ring position carried.
// CHECK: scf.for %{{.*}} = %block_id_x to %{{.*}} step %grid_dim_x iter_args(
// CHECK: cp.async.bulk.tensor.2d
// CHECK: "exit;"
// The consumers' loop over the same tiles: this tile's iterations start where
// the last one's ended, its last stage goes back, the position moves on.
// CHECK: scf.for %{{.*}} = %block_id_x to %{{.*}} step %grid_dim_x {
// CHECK: memref.load %[[RING]]
// CHECK: wgmma.mma_async
// CHECK: "mbarrier.arrive.shared::cta.b64 _, [$0];"
// CHECK: memref.store %{{.*}}, %[[RING]]
// The epilogue, per tile, on the consumers' named barrier.
// CHECK: nvvm.barrier id = %[[ID1]] number_of_threads = %[[N128]]

// Without warp specialization the body still loops over the tiles.
// SM80: gpu.func @gemm{{.*}}tessera.persistent
// SM80: scf.for %{{.*}} = %block_id_x to %{{.*}} step %grid_dim_x {
// SM80: cp.async.cg.shared.global

// A shared copy before the loop (the bias row, gemm-persistent-bias-first)
// runs in the consumers' loop over tiles, which the producer never enters:
// its barrier is theirs, and no block-wide one follows the producer's exit.
// FIRST-DAG: %[[N128:.*]] = llvm.mlir.constant(128 : i32) : i32
// FIRST-DAG: %[[ID1:.*]] = llvm.mlir.constant(1 : i32) : i32
// FIRST: "exit;"
// FIRST-NOT: gpu.barrier
// FIRST: nvvm.barrier id = %[[ID1]] number_of_threads = %[[N128]]
// FIRST-NOT: gpu.barrier
// FIRST: wgmma.mma_async
// FIRST-NOT: gpu.barrier

// BOTH: error: 'tile.kernel' op pingpong and persistent cannot be combined
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @both() grid(affine_map<() -> (1, 1)>) threads(128) blocks(%bx, %by) attributes {pingpong, persistent} {
  }
}

// MAX: gpu.func @gemm{{.*}}tessera.persistent
// MAX-DAG: arith.constant 9223372036854775807 : index
// MAX-DAG: arith.constant 9223372036854775806 : index
// MAX-DAG: arith.ceildivui %{{.*}}, %c9223372036854775807 : index
// MAX-DAG: arith.ceildivui %{{.*}}, %c9223372036854775806 : index
