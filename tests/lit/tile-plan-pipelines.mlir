// tile-plan-pipelines: each tile.pipelined loop gets the schedule of the
// backend's first strategy that can run it. The same kernel
// (Inputs/gemm-pipelined.mlir) on each target:
// RUN: sed -e 's/sm_80/sm_60/' %S/Inputs/gemm-pipelined.mlir | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=SM60
// RUN: sed -e 's/sm_80/sm_70/' %S/Inputs/gemm-pipelined.mlir | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=SM70
// RUN: %tessera-opt %S/Inputs/gemm-pipelined.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=SM80
// RUN: sed -e 's/sm_80/sm_90a/' %S/Inputs/gemm-pipelined.mlir | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=SM90
// Where the first choice cannot run the loop, a remark says which strategy
// runs it and why: rows not provably 16-byte aligned (no TMA). A
// tile.parallel on the accumulator runs on the consumers of a
// warp-specialized loop, whose MMAs then complete within their iteration.
// RUN: sed -e 's/sm_80/sm_90a/' %S/Inputs/gemm-pipelined-unaligned.mlir | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=UNALIGNED
// RUN: %tessera-opt %s --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory 2>&1 | FileCheck %s --check-prefix=PARALLEL
// The kernel's own schedules, decided with its loops': multicast over a
// cluster, ping-pong, persistence and stream-K, each where it applies.
// RUN: %tessera-opt %S/Inputs/gemm-multicast.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=MULTICAST
// RUN: %tessera-opt %S/Inputs/gemm-pingpong.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=PINGPONG
// RUN: %tessera-opt %S/Inputs/gemm-streamk.mlir --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=STREAMK
// A schedule written by hand (a tuner's) is checked and kept, and its stage
// count, fewer than the loop asks for, goes onto the buffers.
// RUN: sed -e 's/stages 3 {/stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "cp-async-multistage"}} {/' %S/Inputs/gemm-pipelined.mlir \
// RUN:   | %tessera-opt - --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory | FileCheck %s --check-prefix=GIVEN
// The schedule prints at the tile stage of the compiler.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_90a --emit=tile | FileCheck %s --check-prefix=EMIT

// Without cp.async: two stages filled through registers.
// SM60: tile.pipelined {{.*}} attributes {tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "register-double-buffer"}}
// SM70: tile.pipelined {{.*}} attributes {tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "register-double-buffer"}}
// SM80: tile.pipelined {{.*}} attributes {tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}}
// SM90-NOT: remark
// SM90: tile.pipelined {{.*}} attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}}
// UNALIGNED: remark: pipelining with cp-async-multistage instead of tma-warp-specialized: the copy into 'As' cannot be a bulk tensor copy: the tensor's row pitch is not known to be a multiple of 16 bytes
// UNALIGNED: tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}
// PARALLEL-NOT: remark
// PARALLEL: tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}
// A loop without staged copies runs in order, without a remark.
// PARALLEL-NOT: remark
// PARALLEL: tile.schedule = {in_flight = 0 : i64, stages = 1 : i64, strategy = "in-order"}
// MULTICAST: tile.kernel {{.*}} tile.schedule = {}
// MULTICAST: tile.schedule = {in_flight = 1 : i64, multicast = 2 : i64, stages = 4 : i64, strategy = "tma-warp-specialized"}
// PINGPONG: tile.schedule = {in_flight = 1 : i64, ping_pong, stages = 4 : i64, strategy = "tma-warp-specialized"}
// STREAMK: tile.kernel {{.*}} tile.schedule = {persistent, stream_k}
// STREAMK: tile.schedule = {in_flight = 1 : i64, stages = 4 : i64, strategy = "tma-warp-specialized"}
// GIVEN: tile.alloc_shared {name = "As", offset = 0 : i64, stages = 2 : i64, swizzled}
// GIVEN: tile.alloc_shared {name = "Bs", offset = 8192 : i64, stages = 2 : i64, swizzled}
// GIVEN: tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "cp-async-multistage"}
// EMIT: tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}

module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @scaled(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf32>)
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
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x64xf16, shared>, !tile.buffer<64x128xf16, shared>, !tile.buffer<64x128xf32, fragment>
      tile.parallel (%r, %c) in [64, 128] {
        %v = tile.load %acc[%r, %c] : !tile.buffer<64x128xf32, fragment>
        %h = arith.mulf %v, %v : f32
        tile.store %h, %acc[%r, %c] : !tile.buffer<64x128xf32, fragment>
      }
    }
    tile.pipelined %j = 0 to %count stages 1 {
      tile.parallel (%r, %c) in [64, 128] {
        %v = tile.load %acc[%r, %c] : !tile.buffer<64x128xf32, fragment>
        %h = arith.addf %v, %v : f32
        tile.store %h, %acc[%r, %c] : !tile.buffer<64x128xf32, fragment>
      }
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x128xf32, fragment> to !tile.tensor<?x?xf32>
  }
}
