// Schedules tile-lower-to-gpu refuses on its own: a loop that tile-plan-
// pipelines never saw, and one whose buffers are staged otherwise than its
// schedule says. Lowering decides nothing; it reads the schedule.
// RUN: %tessera-opt %s --split-input-file --tile-layout-inference --tile-plan-shared-memory --tile-lower-to-gpu --verify-diagnostics

// -----

// A loop without a schedule.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 64, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>} {
    %As = tile.alloc_shared {name = "As"} : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<32x64xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c32 : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c64 : index
    // expected-error @+1 {{has no schedule ('tile.schedule'): run tile-plan-pipelines before tile-lower-to-gpu}}
    tile.pipelined %i = 0 to %count stages 3 {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// Stages other than the loop's buffers have (set by hand, not planned).
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 64, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 8, 8, 8, 1, 8>} {
    %As = tile.alloc_shared {name = "As", stages = 3} : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared {name = "Bs", stages = 3} : !tile.buffer<32x64xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %k = tile.dim %A[1] : !tile.tensor<?x?xf16>
    %count = arith.ceildivui %k, %c32 : index
    %row = arith.muli %by, %c64 : index
    %col = arith.muli %bx, %c64 : index
    // expected-error @+1 {{schedule says 2 stages, but the loop's staged buffers have 3 (tile-plan-pipelines stages them)}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

