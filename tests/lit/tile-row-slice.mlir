// Row slices: a reduction over the columns of an MMA accumulator keeps its
// result in the accumulator's own rows (each thread the rows it owns), and
// tile.parallel loops over the accumulator read a row's value from the
// thread's registers. Syntax and verifier here; layout inference and
// lowering per target on the online softmax of attention.
// RUN: %tessera-opt %s --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %tessera-opt %S/Inputs/row-slice-inference.mlir --split-input-file --tile-layout-inference --verify-diagnostics | FileCheck %S/Inputs/row-slice-inference.mlir
//
// sm_80 (mma.sync m16n8): 128 rows over 4 warps of whole rows, 4 rows per
// thread; two shuffles within the quad per row, no scratch.
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT80
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX80
// sm_90a (wgmma m64n64, per warp the m16n8 layout): the same row slice.
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT90
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX90
// sm_70 (m8n8k4 quadpairs, 2 x 2 warps): lanes 2 and 8 apart share a row;
// the two warps of a row meet in a shared scratch.
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_70 --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT70
// RUN: %tessera-compile %S/Inputs/attention-rows.mlir --target=sm_70 --emit=ptx | FileCheck %s --check-prefix=PTX70
// sm_60 (SIMT FMA, no MMA layout): replicated results as before, no remark
// (32 rows: a replicated result holds at most 64).
// RUN: sed -e 's/128x/32x/g' -e 's/\[128/[32/g' -e 's/ceildiv 128/ceildiv 32/' -e 's/constant 128 /constant 32 /' %S/Inputs/attention-rows.mlir | %tessera-compile - --target=sm_60 --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT60
// RUN: sed -e 's/128x/32x/g' -e 's/\[128/[32/g' -e 's/ceildiv 128/ceildiv 32/' -e 's/constant 128 /constant 32 /' %S/Inputs/attention-rows.mlir | %tessera-compile - --target=sm_60 --emit=ptx | FileCheck %s --check-prefix=PTX60

// LAYOUT80-NOT: remark
// LAYOUT80-NOT: reduce_scratch
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "m", row_slice} : <128xf32, fragment>
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "mx", row_slice} : <128xf32, fragment>
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "l", row_slice} : <128xf32, fragment>
// LAYOUT80: tile.reduce max
// LAYOUT80-NEXT: tile.parallel (%{{.*}}) in [128] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>}
// PTX80: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX80: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX80-NOT: shfl.sync.bfly.b32 {{.*}}, {{16|8|4}}, 31, -1;
// PTX80-NOT: .local

// LAYOUT90-NOT: reduce_scratch
// LAYOUT90-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "m", row_slice} : <128xf32, fragment>
// LAYOUT90-DAG: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {atom = "SM90_64xNx16_F32F16F16F32_SS", transpose_b}
// PTX90: wgmma.mma_async
// PTX90: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX90-NOT: shfl.sync.bfly.b32 {{.*}}, {{16|8|4}}, 31, -1;
// PTX90-NOT: .local

// LAYOUT70-DAG: tile.alloc_shared {name = "reduce_scratch", offset = {{[0-9]+}} : i64} : <4x128xf32, shared>
// LAYOUT70-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 16, warps_m = 2, warps_n = 2, lanes = [r1, c2, r8, c8, r4], registers = [c1, r2, c4]>, name = "m", row_slice} : <128xf32, fragment>
// PTX70: mma.sync.aligned.m8n8k4
// PTX70: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX70: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// PTX70-NOT: shfl.sync.bfly.b32 {{.*}}, {{16|4|1}}, 31, -1;

// LAYOUT60-NOT: remark: the result
// LAYOUT60-DAG: tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, name = "m", replicated} : <32xf32, fragment>
// LAYOUT60-DAG: tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, name = "l", replicated} : <32xf32, fragment>
// PTX60: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;

// ROUNDTRIP-LABEL: tile.kernel @roundtrip
// ROUNDTRIP: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : <128xf32, fragment>
// ROUNDTRIP: tile.parallel (%{{.*}}) in [128] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>}
tile.kernel @roundtrip() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %s = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>} : !tile.buffer<128x64xf32, fragment>
  %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : !tile.buffer<128xf32, fragment>
  tile.reduce max %s into %m {clear} : !tile.buffer<128x64xf32, fragment>, !tile.buffer<128xf32, fragment>
  tile.parallel (%i) in [128] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>} {
    %x = tile.load %m[%i] : !tile.buffer<128xf32, fragment>
    %y = arith.addf %x, %x : f32
    tile.store %y, %m[%i] : !tile.buffer<128xf32, fragment>
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{a row_slice fragment is 1-D, has an mma_layout and no distribution, and is not replicated; got '!tile.buffer<128xf32, fragment>'}}
  %m = tile.alloc_fragment {row_slice} : !tile.buffer<128xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{a row_slice fragment is 1-D}}
  %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : !tile.buffer<128x8xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  // expected-error @+1 {{the row slice (96 rows) does not split into 4 warps of 16-row steps of #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>}}
  %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : !tile.buffer<96xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %s = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>} : !tile.buffer<128x64xf32, fragment>
  %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : !tile.buffer<128xf32, fragment>
  // expected-error @+1 {{reduces a fragment of #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2> into the row slice of another layout, #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>}}
  tile.reduce max %s into %m {clear} : !tile.buffer<128x64xf32, fragment>, !tile.buffer<128xf32, fragment>
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %m = tile.alloc_fragment : !tile.buffer<48xf32, fragment>
  // expected-error @+1 {{the iteration space (48 rows) does not split into 4 warps}}
  tile.parallel (%i) in [48] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>} {
    %x = tile.load %m[%i] : !tile.buffer<48xf32, fragment>
    tile.store %x, %m[%i] : !tile.buffer<48xf32, fragment>
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : !tile.buffer<128xf32, fragment>
  tile.parallel (%i, %j) in [128, 64] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>} {
    %x = tile.load %m[%i] : !tile.buffer<128xf32, fragment>
    // expected-error @+1 {{accesses a row-slice fragment of #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1> other than at the first index of a tile.parallel of that layout}}
    tile.store %x, %m[%i] : !tile.buffer<128xf32, fragment>
  }
}

// -----

tile.kernel @k() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
  %m = tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, row_slice} : !tile.buffer<128xf32, fragment>
  tile.parallel (%i) in [128] attributes {distribution = #tile.distribution<threads = 128, vector = 1>} {
    // expected-error @+1 {{accesses a row-slice fragment}}
    %x = tile.load %m[%i] : !tile.buffer<128xf32, fragment>
  }
}
