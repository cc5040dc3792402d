// Schedules tile-plan-pipelines refuses: each is an error on the loop that
// names what is wrong. (Schedules are written by tile-plan-pipelines; these
// are written by hand, as a test or a tuner would, and planning checks them
// instead of deciding.) What tile-lower-to-gpu itself refuses is in
// tile-schedule-lowering-invalid.mlir.
// RUN: %tessera-opt %s --split-input-file --tile-layout-inference --tile-plan-pipelines --tile-plan-shared-memory --tile-lower-to-gpu --verify-diagnostics

// -----

// No stage at all.
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
    // expected-error @+1 {{schedule says 0 stages; a loop has at least 1}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 0 : i64, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// A stage count the named strategy cannot run on.
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
    // expected-error @+1 {{schedule names strategy 'cp-async-multistage', which cannot run this loop: the loop's staged buffers have one stage}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 1 : i64, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// A strategy no backend has.
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
    // expected-error @+1 {{schedule names strategy 'warp-magic', which backend 'sm80' does not provide (it provides: cp-async-multistage, in-order)}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, strategy = "warp-magic"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// A strategy of another backend.
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
    // expected-error @+1 {{schedule names strategy 'tma-warp-specialized', which backend 'sm80' does not provide (it provides: cp-async-multistage, in-order)}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// MMA groups in flight the body's mma.sync cannot keep.
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
    // expected-error @+1 {{schedule keeps 1 MMA groups in flight; this loop allows 0 to 0}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// A malformed schedule.
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
    // expected-error @+1 {{'tile.schedule' must be {strategy = "<name>", stages = <i64>, in_flight = <i64>, and the strategy's own entries}}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {stages = 3 : i64, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// cp.async on a target without it.
module attributes {tile.target = #tile.target<"sm_60">} {
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
    // expected-error @+1 {{schedule names strategy 'cp-async-multistage', which backend 'sm60' does not provide (it provides: register-double-buffer, in-order)}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 2 : i64, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// Ping-pong the kernel did not ask for.
module attributes {tile.target = #tile.target<"sm_90a">} {
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
    // expected-error @+1 {{schedule asks for ping-pong, which this loop cannot take}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, ping_pong, strategy = "tma-warp-specialized"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// MMA groups in flight under a strategy that keeps none (in-order waits
// for every wgmma group in its iteration).
module attributes {tile.target = #tile.target<"sm_90a">} {
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
    // expected-error @+1 {{schedule keeps 1 MMA groups in flight; this loop allows 0 to 0}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "in-order"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// An entry the strategy does not take (ping-pong is the warp-specialized
// strategy's, not the cp.async one's).
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
    // expected-error @+1 {{schedule entry 'ping_pong' is not one that strategy 'cp-async-multistage' takes (it takes none of its own)}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 0 : i64, stages = 3 : i64, ping_pong, strategy = "cp-async-multistage"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// A misspelt entry (`pingpong` for `ping_pong`).
module attributes {tile.target = #tile.target<"sm_90a">} {
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
    // expected-error @+1 {{schedule entry 'pingpong' is not one that strategy 'tma-warp-specialized' takes ([ping_pong][, multicast = <i64>][, mma_overlap][, warpgroup_turns = <i64>][, hold_accumulators])}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, pingpong, strategy = "tma-warp-specialized"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// Held accumulators where the atom (wgmma) keeps them in registers.
module attributes {tile.target = #tile.target<"sm_90a">} {
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
    // expected-error @+1 {{schedule asks for hold_accumulators, which this loop cannot take}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {hold_accumulators, in_flight = 1 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// A strategy's entry of the wrong type.
module attributes {tile.target = #tile.target<"sm_90a">} {
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
    // expected-error @+1 {{schedule entry 'multicast' of strategy 'tma-warp-specialized' must be an i64, got "two"}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, multicast = "two", strategy = "tma-warp-specialized"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}

// -----

// TMA for copies it cannot make.
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @gemm(%A: !tile.tensor<?x?xf16>, %B: !tile.tensor<?x?xf16>, %C: !tile.tensor<?x?xf16>)
      grid(affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5 ceildiv 64, s0 ceildiv 64)>) threads(128) blocks(%bx, %by)
      attributes {dim_divisibility = array<i64: 1, 1, 1, 1, 1, 1>} {
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
    // expected-error @+1 {{schedule names strategy 'tma-warp-specialized', which cannot run this loop: the copy into 'As' cannot be a bulk tensor copy: the tensor's row pitch is not known to be a multiple of 16 bytes}}
    tile.pipelined %i = 0 to %count stages 3 attributes {tile.schedule = {in_flight = 1 : i64, stages = 3 : i64, strategy = "tma-warp-specialized"}} {
      %kk = arith.muli %i, %c32 : index
      tile.copy %A[%row, %kk] to %As : !tile.tensor<?x?xf16> to !tile.buffer<64x32xf16, shared>
      tile.copy %B[%kk, %col] to %Bs : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
      tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %acc to %C[%row, %col] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?xf16>
  }
}
