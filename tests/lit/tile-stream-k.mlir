// Stream-K (tile.kernel's `stream_k`, with `persistent`) in tile-lower-to-gpu:
// the last partial wave of tiles is split along the pipelined loop over all
// launched blocks; each block walks its work items (whole tiles, then pieces),
// later pieces give their accumulators to the runtime's workspace (a pointer
// param after the kernel's own), and a tile's first piece adds them before the
// epilogue.
// RUN: %tessera-compile %S/Inputs/gemm-streamk.mlir --target=sm_90a --emit=gpu | FileCheck %s
// RUN: %tessera-compile %S/Inputs/gemm-streamk.mlir --target=sm_60 --emit=ptx | FileCheck %s --check-prefix=SM60
// RUN: %tessera-compile %s --target=sm_90a --emit=gpu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %tessera-compile %S/Inputs/gemm-streamk.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX90

// CHECK: gpu.func @gemm({{.*}}, %[[WS:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64}
// CHECK-SAME: tessera.persistent,{{.*}} tessera.stream_k_slot_bytes = 65536
// CHECK-DAG: %[[N128:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-DAG: %[[ID1:.*]] = llvm.mlir.constant(1 : i32) : i32
// The decomposition divides in 32 bits.
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// The last wave is split only when that saves each block more iterations
// than the partials' round trip costs (sm_90a's 448 FLOP a partial byte:
// 64 KiB of partials against 2 MFLOP an iteration, 14 iterations).
// CHECK: arith.cmpi ugt, %{{.*}}, %c14_i32 : i32
// The producer walks the same work items.
// CHECK: scf.for {{.*}} iter_args(
// CHECK: cp.async.bulk.tensor.2d
// CHECK: "exit;"
// The consumers' items; a piece's loop starts at its first iteration.
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// CHECK: wgmma.mma_async
// A later piece: partials to the workspace, then the tile's counter.
// CHECK: llvm.ptrtoint %[[WS]]
// CHECK: "st.global.cg.v4.f32 [$4], {$0, $1, $2, $3};"
// The block's barrier orders every thread's stores before thread 0's fence
// and relaxed add (no fence per thread).
// CHECK-NOT: fence.acq_rel
// CHECK: nvvm.barrier id = %[[ID1]] number_of_threads = %[[N128]]
// CHECK: "fence.acq_rel.gpu;\0Ared.relaxed.gpu.global.add.u32 [$0], 1;"
// A first piece: waits for the others, takes their partials.
// CHECK: ld.acquire.gpu.global.u32
// CHECK: "ld.global.cg.v4.f32 {$0, $1, $2, $3}, [$4];"
// CHECK: arith.addf

// No 64-bit division is left (each would be a width test and a call).
// PTX90: .entry gemm(
// PTX90-NOT: div.u64
// PTX90-NOT: rem.u64
// PTX90: ret;

// Without the scoped memory model (sm_60): membar.gl and volatile accesses.
// SM60: membar.gl;
// SM60: red.global.add.u32
// SM60: ld.volatile.global.u32

// An accumulator that starts at another value than zero (a bias row, here
// 1.0) is split too: the tile's first piece keeps the value, a later piece
// (its first iteration not 0) starts at zero.
// (The one remark, @by_block's below, comes first: diagnostics go to stderr.)
// REMARK: remark: stream-K not applied (the kernel stays persistent): the loop's iteration count depends on the block
// REMARK-NOT: remark
// REMARK: gpu.func @started({{.*}}tessera.stream_k_slot_bytes = 32768
// REMARK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// REMARK: memref.store %[[ONE]], %[[ACC:.*]][%c0]
// REMARK: %[[LATER:.*]] = arith.cmpi ne, %{{.*}}, %c0 : index
// REMARK-NEXT: scf.if %[[LATER]] {
// REMARK-NEXT: memref.store %{{.*}}, %[[ACC]][%c0]
// REMARK: wgmma.mma_async
// Cleared, then filled: the clear is not the last use before the loop, so a
// later piece still starts at zero.
// REMARK: gpu.func @cleared_then_filled(
// REMARK: %[[LATER2:.*]] = arith.cmpi ne, %{{.*}}, %c0 : index
// REMARK-NEXT: scf.if %[[LATER2]] {
// REMARK-NEXT: memref.store %{{.*}}, %{{.*}}[%c0]
// REMARK: wgmma.mma_async
// An iteration count that depends on the block cannot be split (@by_block).
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @started(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>, persistent, stream_k} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x128xf32, fragment>
    %one = arith.constant 1.0 : f32
    tile.fill %acc, %one : !tile.buffer<64x128xf32, fragment>, f32
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
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<64x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
  tile.kernel @cleared_then_filled(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>, persistent, stream_k} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x128xf32, fragment>
    tile.clear %acc : !tile.buffer<64x128xf32, fragment>
    %one = arith.constant 1.0 : f32
    tile.fill %acc, %one : !tile.buffer<64x128xf32, fragment>, f32
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
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<64x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
  tile.kernel @by_block(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 128, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>, persistent, stream_k} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x64xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x128xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x128xf32, fragment>
    tile.clear %acc : !tile.buffer<64x128xf32, fragment>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %all = arith.ceildivui %k, %c64 : index
    %count = arith.subi %all, %by : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c128 : index
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c64 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x64xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<64x128xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<64x128xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x128xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
