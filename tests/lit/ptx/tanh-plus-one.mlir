// Without tanh.approx (sm_60, sm_70), a tanh whose every use adds 1 or -1
// (GELU's 1 + tanh(u)) is the exponential form alone: the sum rounds more
// than that form errs near 0, so the odd series and its select are left out
// (two forms live per element made the fused GEMM's epilogue spill). A tanh
// used otherwise keeps both.
// RUN: %tessera-compile %s --target=sm_60 | FileCheck %s

// CHECK-LABEL: .entry plus_one(
// CHECK: ex2.approx.ftz.f32
// CHECK: div.approx.ftz.f32
// CHECK-NOT: 0f3D800000
// CHECK-NOT: selp.f32
// CHECK: ret;
// CHECK-LABEL: .entry bare(
// CHECK: ex2.approx.ftz.f32
// CHECK: setp.lt.f32 [[P:%p[0-9]+]], {{%r[0-9]+}}, 0f3D800000;
// CHECK-NEXT: selp.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, [[P]];
module attributes {tile.target = #tile.target<"sm_60">} {
  tile.kernel @plus_one(%X: !tile.tensor<?x256xf32>)
      grid(affine_map<()[s0] -> (s0)>) threads(128) blocks(%bx)
      {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<1x256xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%bx, %c0] to %x : !tile.tensor<?x256xf32> to !tile.buffer<1x256xf32, fragment>
    tile.parallel (%i, %j) in [1, 256] {
      %v = tile.load %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
      %t = math.tanh %v : f32
      %one = arith.constant 1.0 : f32
      %minus = arith.constant -1.0 : f32
      %a = arith.addf %one, %t : f32
      %b = arith.subf %t, %minus : f32
      %s = arith.mulf %a, %b : f32
      tile.store %s, %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
    }
    tile.copy %x to %X[%bx, %c0] : !tile.buffer<1x256xf32, fragment> to !tile.tensor<?x256xf32>
  }
  tile.kernel @bare(%X: !tile.tensor<?x256xf32>)
      grid(affine_map<()[s0] -> (s0)>) threads(128) blocks(%bx)
      {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<1x256xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%bx, %c0] to %x : !tile.tensor<?x256xf32> to !tile.buffer<1x256xf32, fragment>
    tile.parallel (%i, %j) in [1, 256] {
      %v = tile.load %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
      %t = math.tanh %v : f32
      %one = arith.constant 1.0 : f32
      %a = arith.addf %one, %t : f32
      %s = arith.mulf %a, %t : f32
      tile.store %s, %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
    }
    tile.copy %x to %X[%bx, %c0] : !tile.buffer<1x256xf32, fragment> to !tile.tensor<?x256xf32>
  }
}
