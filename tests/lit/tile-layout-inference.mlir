// tile-layout-inference: every fragment and tile.parallel gets a
// #tile.distribution whose vector is the widest global access the target
// allows (16 bytes on every built-in backend) for the group's element types,
// reduced until it divides the innermost extent and the tile fills
// threads * vector elements.
// RUN: %tessera-opt %s --split-input-file --tile-layout-inference --verify-diagnostics | FileCheck %s

// f32: 16 bytes are 4 elements; the loop gets the distribution of its fragments.
// CHECK-LABEL: tile.kernel @f32_vector4
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "a"} : <1024xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "b"} : <1024xf32, fragment>
// CHECK: tile.parallel (%{{.*}}) in [1024] attributes {distribution = #tile.distribution<threads = 256, vector = 4>}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @f32_vector4(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx) {
    %a = tile.alloc_fragment {name = "a"} : !tile.buffer<1024xf32, fragment>
    %b = tile.alloc_fragment {name = "b"} : !tile.buffer<1024xf32, fragment>
    tile.copy %A[%bx] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] {
      %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
      tile.store %x, %b[%i] : !tile.buffer<1024xf32, fragment>
    }
    tile.copy %b to %B[%bx] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// f16 and bf16: 8 elements of 2 bytes make one 16-byte access; f64: 2; i8: 16.
// CHECK-LABEL: tile.kernel @element_widths
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 8>, name = "h"} : <2048xf16, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 8>, name = "bh"} : <2048xbf16, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 2>, name = "d"} : <2048xf64, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 16>, name = "q"} : <4096xi8, fragment>
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @element_widths() grid(affine_map<()[] -> (1)>) threads(256) blocks(%bx) {
    %h = tile.alloc_fragment {name = "h"} : !tile.buffer<2048xf16, fragment>
    %bh = tile.alloc_fragment {name = "bh"} : !tile.buffer<2048xbf16, fragment>
    %d = tile.alloc_fragment {name = "d"} : !tile.buffer<2048xf64, fragment>
    %q = tile.alloc_fragment {name = "q"} : !tile.buffer<4096xi8, fragment>
  }
}

// -----

// The innermost extent 6 is not divisible by 4: vector 2. A 512-element tile
// over 256 threads cannot give each thread 4: vector 2. A 100-element tile
// over 128 threads: vector 1.
// CHECK-LABEL: tile.kernel @reduced
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 16, vector = 2>, name = "rows"} : <64x6xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 16, vector = 1>, name = "odd"} : <64x7xf16, fragment>
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @reduced() grid(affine_map<()[] -> (1)>) threads(16) blocks(%bx) {
    %rows = tile.alloc_fragment {name = "rows"} : !tile.buffer<64x6xf32, fragment>
    %odd = tile.alloc_fragment {name = "odd"} : !tile.buffer<64x7xf16, fragment>
  }
}

// CHECK-LABEL: tile.kernel @small_tile
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 2>, name = "half"} : <512xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "full"} : <1024xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 1>, name = "tiny"} : <100xf32, fragment>
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @small_tile() grid(affine_map<()[] -> (1)>) threads(256) blocks(%bx) {
    %half = tile.alloc_fragment {name = "half"} : !tile.buffer<512xf32, fragment>
    %full = tile.alloc_fragment {name = "full"} : !tile.buffer<1024xf32, fragment>
    %tiny = tile.alloc_fragment {name = "tiny"} : !tile.buffer<100xf32, fragment>
  }
}

// -----

// Fragments used in one tile.parallel share one distribution: f16 alone would
// take 8, the f32 partner limits the group to 4. A fragment copied into
// another joins its group too; an unrelated f16 fragment keeps 8.
// CHECK-LABEL: tile.kernel @grouped
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 128, vector = 4>, name = "h"} : <32x64xf16, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 128, vector = 4>, name = "f"} : <32x64xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 128, vector = 4>, name = "copied"} : <32x64xf16, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 128, vector = 8>, name = "alone"} : <32x64xf16, fragment>
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [32, 64] attributes {distribution = #tile.distribution<threads = 128, vector = 4>}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @grouped() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
    %h = tile.alloc_fragment {name = "h"} : !tile.buffer<32x64xf16, fragment>
    %f = tile.alloc_fragment {name = "f"} : !tile.buffer<32x64xf32, fragment>
    %copied = tile.alloc_fragment {name = "copied"} : !tile.buffer<32x64xf16, fragment>
    %alone = tile.alloc_fragment {name = "alone"} : !tile.buffer<32x64xf16, fragment>
    tile.parallel (%i, %j) in [32, 64] {
      %x = tile.load %h[%i, %j] : !tile.buffer<32x64xf16, fragment>
      %y = arith.extf %x : f16 to f32
      tile.store %y, %f[%i, %j] : !tile.buffer<32x64xf32, fragment>
    }
    tile.copy %h to %copied : !tile.buffer<32x64xf16, fragment> to !tile.buffer<32x64xf16, fragment>
  }
}

// -----

// A tile.parallel that touches only shared memory gets vector 1; a fragment
// copied from shared memory keeps its own width.
// CHECK-LABEL: tile.kernel @shared_only
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>, name = "acc"} : <16x16xf32, fragment>
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [16, 16] attributes {distribution = #tile.distribution<threads = 64, vector = 1>}
module attributes {tile.target = #tile.target<"sm_70">} {
  tile.kernel @shared_only() grid(affine_map<()[] -> (1)>) threads(64) blocks(%bx) {
    %s = tile.alloc_shared {name = "s"} : !tile.buffer<16x16xf32, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<16x16xf32, fragment>
    tile.parallel (%i, %j) in [16, 16] {
      %x = tile.load %s[%j, %i] : !tile.buffer<16x16xf32, shared>
      tile.store %x, %s[%i, %j] : !tile.buffer<16x16xf32, shared>
    }
    tile.copy %s to %acc : !tile.buffer<16x16xf32, shared> to !tile.buffer<16x16xf32, fragment>
  }
}

// -----

// Every kernel of a module is handled, each with its own thread count.
// CHECK-LABEL: tile.kernel @first
// CHECK: distribution = #tile.distribution<threads = 32, vector = 4>
// CHECK-LABEL: tile.kernel @second
// CHECK: distribution = #tile.distribution<threads = 1024, vector = 1>
module attributes {tile.target = #tile.target<"sm_60">} {
  tile.kernel @first() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
    %a = tile.alloc_fragment : !tile.buffer<128xf32, fragment>
  }
  tile.kernel @second() grid(affine_map<()[] -> (1)>) threads(1024) blocks(%bx) {
    %a = tile.alloc_fragment : !tile.buffer<128xf32, fragment>
  }
}

// -----

// Errors.

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @other_shape() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
    %a = tile.alloc_fragment {name = "acc"} : !tile.buffer<32x64xf32, fragment>
    // expected-note @+1 {{the loop is here}}
    tile.parallel (%i, %j) in [64, 32] {
      // expected-error @+1 {{fragment 'acc' of type '!tile.buffer<32x64xf32, fragment>' is used in a tile.parallel over [64, 32]; a fragment must be accessed by a loop of its own shape}}
      %x = tile.load %a[%j, %i] : !tile.buffer<32x64xf32, fragment>
    }
  }
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @transposed() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
    %a = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %v = arith.constant 0.0 : f32
    tile.parallel (%i, %j) in [64, 64] {
      // expected-error @+1 {{fragment 'acc' of type '!tile.buffer<64x64xf32, fragment>' must be indexed by the tile.parallel's own indices in order (each thread holds only its own elements); copy it to shared memory to index it freely}}
      tile.store %v, %a[%j, %i] : !tile.buffer<64x64xf32, fragment>
    }
  }
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @constant_index() grid(affine_map<()[] -> (1)>) threads(128) blocks(%bx) {
    %a = tile.alloc_fragment : !tile.buffer<256xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.parallel (%i) in [256] {
      // expected-error @+1 {{fragment of type '!tile.buffer<256xf32, fragment>' must be indexed by the tile.parallel's own indices}}
      %x = tile.load %a[%c0] : !tile.buffer<256xf32, fragment>
    }
  }
}

// -----

module {
  // expected-error @+1 {{no compilation target: add `attributes {tile.target = #tile.target<"sm_80">}` to the module or pass --target}}
  tile.kernel @no_target() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  }
}

// -----

module attributes {tile.target = #tile.target<"sm_120">} {
  // expected-error @+1 {{no backend serves target 'sm_120' (served: sm60: sm_60 sm_61 sm_62;}}
  tile.kernel @unknown_target() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  }
}

// -----

// Each thread's share of a copy through shared memory is unrolled: past 4096
// elements per thread that is an error naming the copy, not minutes of
// compile (a 48 x 256 tile on one thread). 4096 elements are fine.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @copy_unrolling(%A: !tile.tensor<48x256xf16>) grid(affine_map<() -> (1)>) threads(1) blocks(%bx) {
    %c0 = arith.constant 0 : index
    %fits = tile.alloc_shared : !tile.buffer<16x256xf16, shared>
    tile.copy %A[%c0, %c0] to %fits : !tile.tensor<48x256xf16> to !tile.buffer<16x256xf16, shared>
    %s = tile.alloc_shared : !tile.buffer<48x256xf16, shared>
    // expected-error @+1 {{copy of a '!tile.buffer<48x256xf16, shared>' tile gives each of 1 threads 12288 elements, over 4096 (each thread's share is unrolled); use more threads per block or smaller tiles}}
    tile.copy %A[%c0, %c0] to %s : !tile.tensor<48x256xf16> to !tile.buffer<48x256xf16, shared>
  }
}

// -----

// Fragments live at once that together need more registers per thread than
// the target has are a compile-time error naming each one and the point
// where they are all live ("small" is not live there and is not named).
module attributes {tile.target = #tile.target<"sm_80">} {
  // expected-error @+1 {{kernel 'too_many_registers' holds 384 registers per thread of fragments, over the target's 255 per thread: 'acc' of type '!tile.buffer<128x128xf32, fragment>' 256, 'more' of type '!tile.buffer<64x128xf32, fragment>' 128; use more threads per block or smaller tiles}}
  tile.kernel @too_many_registers() grid(affine_map<() -> (1)>) threads(64) blocks(%bx) {
    %small = tile.alloc_fragment {name = "small"} : !tile.buffer<64x64xf32, fragment>
    tile.clear %small : !tile.buffer<64x64xf32, fragment>
    // expected-note @+1 {{fragment of 256 registers per thread}}
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    // expected-note @+1 {{fragment of 128 registers per thread}}
    %more = tile.alloc_fragment {name = "more"} : !tile.buffer<64x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    // expected-note @+1 {{all of them live here}}
    tile.clear %more : !tile.buffer<64x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
  }
}

// -----

// Registers are counted by liveness: fragments used one after the other
// need the larger of them, not the sum (256 + 128 > 255, each <= 255).
// CHECK-LABEL: tile.kernel @one_after_the_other
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @one_after_the_other() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %first = tile.alloc_fragment {name = "first"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %first : !tile.buffer<128x128xf32, fragment>
    tile.clear %first : !tile.buffer<128x128xf32, fragment>
    %second = tile.alloc_fragment {name = "second"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %second : !tile.buffer<128x128xf32, fragment>
  }
}

// -----

// A fragment used inside a loop that does not hold its allocation is live
// over the whole loop: "acc" (128 registers) is read in every iteration, so
// "tmp" (192) inside the loop is live beside it.
module attributes {tile.target = #tile.target<"sm_80">} {
  // expected-error @+1 {{kernel 'loop_carried' holds 320 registers per thread of fragments, over the target's 255 per thread}}
  tile.kernel @loop_carried() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %c4 = arith.constant 4 : index
    // expected-note @+1 {{fragment of 128 registers per thread}}
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x128xf32, fragment>
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
    tile.pipelined %k = 0 to %c4 stages 1 {
      // expected-note @+1 {{fragment of 192 registers per thread}}
      %tmp = tile.alloc_fragment {name = "tmp"} : !tile.buffer<192x128xf32, fragment>
      // expected-note @+1 {{all of them live here}}
      tile.clear %tmp : !tile.buffer<192x128xf32, fragment>
    }
    tile.clear %acc : !tile.buffer<128x128xf32, fragment>
  }
}

// -----

// A tile.parallel that writes a reduction's result runs whole in every
// thread, so a fragment it reads beside it is held whole too ("last", the
// previous running maximum of an online softmax); "x" stays distributed and
// its loop reads the replicated maximum as a broadcast.
// CHECK-LABEL: tile.kernel @replicated_partner
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 128, vector = 2>, name = "x"} : <1x256xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, name = "m", replicated} : <1xf32, fragment>
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, name = "last", replicated} : <1xf32, fragment>
// CHECK: tile.parallel (%{{.*}}) in [1] attributes {distribution = #tile.distribution<threads = 1, vector = 1>}
// CHECK: tile.parallel (%{{.*}}) in [1] attributes {distribution = #tile.distribution<threads = 1, vector = 1>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [1, 256] attributes {distribution = #tile.distribution<threads = 128, vector = 2>}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @replicated_partner(%X: !tile.tensor<?x256xf32>)
      grid(affine_map<()[s0] -> (s0)>) threads(128) blocks(%bx) {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<1x256xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : !tile.buffer<1xf32, fragment>
    %last = tile.alloc_fragment {name = "last"} : !tile.buffer<1xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%bx, %c0] to %x : !tile.tensor<?x256xf32> to !tile.buffer<1x256xf32, fragment>
    tile.parallel (%i) in [1] {
      %v = tile.load %m[%i] : !tile.buffer<1xf32, fragment>
      tile.store %v, %last[%i] : !tile.buffer<1xf32, fragment>
    }
    tile.reduce max %x into %m : !tile.buffer<1x256xf32, fragment>, !tile.buffer<1xf32, fragment>
    tile.parallel (%i) in [1] {
      %l = tile.load %last[%i] : !tile.buffer<1xf32, fragment>
      %v = tile.load %m[%i] : !tile.buffer<1xf32, fragment>
      %d = arith.subf %l, %v : f32
      tile.store %d, %m[%i] : !tile.buffer<1xf32, fragment>
    }
    tile.parallel (%i, %j) in [1, 256] {
      %e = tile.load %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
      %v = tile.load %m[%i] : !tile.buffer<1xf32, fragment>
      %d = arith.subf %e, %v : f32
      tile.store %d, %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
    }
    tile.copy %x to %X[%bx, %c0] : !tile.buffer<1x256xf32, fragment> to !tile.tensor<?x256xf32>
  }
}
