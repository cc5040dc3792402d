// Fast and exact math forms. By default (fast math) tanh is tanh.approx.f32
// where the target has it (sm_75 and later), exp is ex2.approx.ftz.f32 of
// x log2(e) (exp2 of x), erf a branchless rational form (fma.rn.f32 chains, no branch)
// and f32 division div.approx.ftz.f32; --fast-math=false links libdevice's
// exact __nv_tanhf/__nv_expf/__nv_erff (inlined: no tanh.approx, exp's range
// reduction in fma.rn.f32, erf's branch on |x|) and divides with div.rn.f32.
// RUN: %tessera-compile %s --target=sm_90a | FileCheck %s --check-prefix=FAST
// RUN: %tessera-compile %s --target=sm_90a --fast-math=false | FileCheck %s --check-prefix=EXACT
// sm_60 has no tanh.approx: tanh is 1 - 2 / (1 + 2^(2x log2 e)) with
// ex2.approx and the fast division, and its odd series below |x| = 1/16
// (selected, no branch); libdevice's tanhf only in exact mode.
// RUN: %tessera-compile %s --target=sm_60 | FileCheck %s --check-prefix=FAST60

// Fast math also lets multiplies and adds contract (mul.f32, not mul.rn.f32).
// FAST: mul.f32 [[S:%r[0-9]+]], {{%r[0-9]+}}, 0f3FB8AA3B;
// FAST-NEXT: // begin inline asm
// FAST-NEXT: ex2.approx.ftz.f32 {{%r[0-9]+}}, [[S]];
// exp2 is the same instruction on x itself (one MUFU.EX2: without .ftz
// ptxas adds a subnormal test and two multiplies).
// FAST: ex2.approx.ftz.f32 {{%r[0-9]+}}, {{%r[0-9]+}};
// FAST-NOT: ex2.approx.f32
// FAST: tanh.approx.f32
// The erf numerator's first term (-2.72614e-10) and its clamp to [-4, 4].
// FAST: min.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f40800000;
// FAST-NEXT: max.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0fC0800000;
// FAST-NOT: bra
// FAST: fma.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0fAF95DF0B,
// FAST-NOT: bra
// FAST: div.approx.ftz.f32
// FAST-NOT: div.rn.f32
// EXACT-NOT: tanh.approx
// libdevice's erff: its branch on |x| against 1.00295.
// EXACT: setp.ltu.f32 [[P:%p[0-9]+]], {{%r[0-9]+}}, 0f3F8060FE;
// EXACT: @[[P]] bra
// EXACT-NOT: mul.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3FB8AA3B;
// EXACT: fma.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3FB8AA3B,
// EXACT: ex2.approx.f32
// EXACT: div.rn.f32
// FAST60-NOT: tanh.approx
// FAST60-NOT: __nv_tanhf
// FAST60: ex2.approx.ftz.f32
// FAST60: mul.f32 [[T:%r[0-9]+]], {{%r[0-9]+}}, 0f4038AA3B;
// FAST60-NEXT: // begin inline asm
// FAST60-NEXT: ex2.approx.ftz.f32 {{%r[0-9]+}}, [[T]];
// FAST60: div.approx.ftz.f32
// FAST60: setp.lt.f32 [[P:%p[0-9]+]], {{%r[0-9]+}}, 0f3D800000;
// FAST60-NEXT: selp.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, [[P]];
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @math(%X: !tile.tensor<?x256xf32>, %Y: !tile.tensor<?x256xf32>)
      grid(affine_map<()[s0, s1] -> (s0)>) threads(128) blocks(%bx)
      attributes {dim_groups = {M = array<i64: 0, 1>}} {
    %x = tile.alloc_fragment {name = "x"} : !tile.buffer<1x256xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %X[%bx, %c0] to %x : !tile.tensor<?x256xf32> to !tile.buffer<1x256xf32, fragment>
    tile.parallel (%i, %j) in [1, 256] {
      %v = tile.load %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
      %e1 = math.exp %v : f32
      %e2 = math.exp2 %v : f32
      %e = arith.addf %e1, %e2 : f32
      %t = math.tanh %v : f32
      %r = math.erf %v : f32
      %u = arith.addf %e, %t : f32
      %s = arith.addf %u, %r : f32
      %q = arith.divf %s, %v : f32
      tile.store %q, %x[%i, %j] : !tile.buffer<1x256xf32, fragment>
    }
    tile.copy %x to %Y[%bx, %c0] : !tile.buffer<1x256xf32, fragment> to !tile.tensor<?x256xf32>
  }
}
