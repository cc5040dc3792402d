// ReduceMax and ReduceMin propagate NaN, as torch.amax and torch.amin do: a
// row holding a NaN reduces to NaN (arith.maximumf / minimumf). On sm_80 and
// later that is max.NaN / min.NaN; sm_60 and sm_70 have no such instruction,
// so each combine also tests for an unordered pair (setp.nan) and selects.
// RUN: %tessera-compile %s --target=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: %tessera-compile %s --target=sm_60 | FileCheck %s --check-prefix=SM60

// SM80: max.NaN.f32
// SM80: min.NaN.f32
// SM80-NOT: {{max|min}}.f32
// SM60-NOT: max.NaN
// SM60: setp.nan.f32
// SM60: selp.f32

#grid = affine_map<()[s0, s1, s2] -> (s0 ceildiv 4)>
module {
  tile.kernel @row_extremes(%x: !tile.tensor<?x256xf32>, %hi: !tile.tensor<?xf32>, %lo: !tile.tensor<?xf32>) grid(#grid) threads(128) blocks(%bx) attributes {arg_names = ["X", "Hi", "Lo"], dim_groups = {M = array<i64: 0, 1, 2>}} {
    %t = tile.alloc_fragment {name = "t"} : <4x256xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : <4xf32, fragment>
    %n = tile.alloc_fragment {name = "n"} : <4xf32, fragment>
    %c4 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %row = arith.muli %bx, %c4 : index
    tile.copy %x[%row, %c0] to %t : !tile.tensor<?x256xf32> to !tile.buffer<4x256xf32, fragment>
    tile.reduce max %t into %m {clear} : !tile.buffer<4x256xf32, fragment>, !tile.buffer<4xf32, fragment>
    tile.reduce min %t into %n {clear} : !tile.buffer<4x256xf32, fragment>, !tile.buffer<4xf32, fragment>
    tile.copy %m to %hi[%row] : !tile.buffer<4xf32, fragment> to !tile.tensor<?xf32>
    tile.copy %n to %lo[%row] : !tile.buffer<4xf32, fragment> to !tile.tensor<?xf32>
  }
}
