// tile.reduce: syntax, verifier, layout (replicated results, scratch for
// cross-warp combination) and lowering (warp shuffles, a shared scratch).
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics
// RUN: %tessera-compile %S/Inputs/softmax.mlir --target=sm_80 --emit=tile | FileCheck %s --check-prefix=LAYOUT
// RUN: %tessera-compile %S/Inputs/softmax.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: %tessera-compile %S/Inputs/softmax.mlir --target=sm_60 --emit=ptx | FileCheck %s --check-prefix=PTX60
// shfl.sync moves 32 bits: an f32 row sum shuffles once a step, an f64 one twice (two halves),
// f16 and bf16 ones their f32 extension.
// RUN: %tessera-compile %S/Inputs/reduce-rows.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=F32
// RUN: sed 's/xf32/xf64/g' %S/Inputs/reduce-rows.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=F64
// RUN: sed 's/xf32/xf64/g' %S/Inputs/reduce-rows.mlir | %tessera-compile - --target=sm_80 --emit=tile | FileCheck %s --check-prefix=SCRATCH64
// RUN: sed 's/xf32/xf16/g' %S/Inputs/reduce-rows.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=F16
// RUN: sed 's/xf32/xbf16/g' %S/Inputs/reduce-rows.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=F16

// LAYOUT: tile.alloc_shared {name = "reduce_scratch", offset = 0 : i64} : <4x1xf32, shared>
// LAYOUT: tile.alloc_shared {name = "reduce_scratch", offset = 0 : i64} : <4x1xf32, shared>
// LAYOUT: tile.alloc_fragment {distribution = #tile.distribution<threads = 128, vector = 4>, name = "x"}
// LAYOUT: tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, name = "m", replicated}
// LAYOUT: tile.reduce max %{{.*}} into %{{.*}} scratch %{{.*}} {clear}

// PTX: .version
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX: ex2.approx
// PTX60: .version 6.0
// PTX60: shfl.sync.bfly.b32
// F32-COUNT-5: shfl.sync.bfly.b32 {{.*}}, {{.*}}, {{16|8|4|2|1}}, 31, -1;
// F32-NOT: shfl.sync
// F32: bar.sync
// F64-COUNT-10: shfl.sync.bfly.b32
// F64-NOT: shfl.sync
// F64: add.f64
// An f64 reduction's warps combine through an f64 scratch (f32 would round them).
// SCRATCH64: tile.alloc_shared {name = "reduce_scratch", offset = 0 : i64} : <4x1xf64, shared>
// F16-COUNT-5: shfl.sync.bfly.b32
// F16-NOT: shfl.sync

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_fragment : !tile.buffer<4x64xf32, fragment>
  %m = tile.alloc_fragment : !tile.buffer<4xf32, fragment>
  tile.reduce sum %x into %m {clear} : !tile.buffer<4x64xf32, fragment>, !tile.buffer<4xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_fragment : !tile.buffer<4x64xf32, fragment>
  %m = tile.alloc_fragment : !tile.buffer<64xf32, fragment>
  // expected-error @+1 {{reducing '!tile.buffer<4x64xf32, fragment>' over its last axis gives shape [4], but the destination is '!tile.buffer<64xf32, fragment>'}}
  tile.reduce max %x into %m : !tile.buffer<4x64xf32, fragment>, !tile.buffer<64xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_shared : !tile.buffer<4x64xf32, shared>
  %m = tile.alloc_fragment : !tile.buffer<4xf32, fragment>
  // expected-error @+1 {{reduces a fragment into a fragment}}
  tile.reduce max %x into %m : !tile.buffer<4x64xf32, shared>, !tile.buffer<4xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_fragment : !tile.buffer<4x64xi32, fragment>
  %m = tile.alloc_fragment : !tile.buffer<4xf32, fragment>
  // expected-error @+1 {{reduces f16, bf16, f32 or f64 fragments, or i32 or i64 ones (signed), got 'i32' and 'f32'}}
  tile.reduce max %x into %m : !tile.buffer<4x64xi32, fragment>, !tile.buffer<4xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_fragment : !tile.buffer<4x64xf32, fragment>
  %m = tile.alloc_fragment : !tile.buffer<4xf32, fragment>
  tile.parallel (%i) in [4] {
    // expected-error @+1 {{is not allowed inside tile.parallel}}
    tile.reduce max %x into %m : !tile.buffer<4x64xf32, fragment>, !tile.buffer<4xf32, fragment>
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %x = tile.alloc_fragment : !tile.buffer<4x64xf64, fragment>
  %m = tile.alloc_fragment : !tile.buffer<4xf64, fragment>
  %s = tile.alloc_shared : !tile.buffer<4x4xf32, shared>
  // expected-error @+1 {{scratch must be a shared buffer of 'f64', got '!tile.buffer<4x4xf32, shared>'}}
  tile.reduce sum %x into %m scratch %s {clear} : !tile.buffer<4x64xf64, fragment>, !tile.buffer<4xf64, fragment>, !tile.buffer<4x4xf32, shared>
}
