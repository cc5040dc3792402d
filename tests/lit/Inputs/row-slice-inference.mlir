// tile-layout-inference and row slices (checked by tile-row-slice.mlir).

// A row maximum of an mma.sync accumulator, its rescale and a broadcast:
// the result and the 1-D loop take the accumulator's row slice.
// CHECK-LABEL: tile.kernel @rows
// CHECK-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>, name = "m", row_slice} : <64xf32, fragment>
// CHECK-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>, name = "scale", row_slice} : <64xf32, fragment>
// CHECK: tile.parallel (%{{.*}}) in [64] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [64, 64] attributes {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @rows() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : !tile.buffer<64xf32, fragment>
    %scale = tile.alloc_fragment {name = "scale"} : !tile.buffer<64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    tile.reduce max %acc into %m {clear} : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
    tile.parallel (%i) in [64] {
      %x = tile.load %m[%i] : !tile.buffer<64xf32, fragment>
      %r = arith.divf %x, %x : f32
      tile.store %r, %scale[%i] : !tile.buffer<64xf32, fragment>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %x = tile.load %acc[%i, %j] : !tile.buffer<64x64xf32, fragment>
      %r = tile.load %scale[%i] : !tile.buffer<64xf32, fragment>
      %y = arith.mulf %x, %r : f32
      tile.store %y, %acc[%i, %j] : !tile.buffer<64x64xf32, fragment>
    }
  }
}

// -----

// A row sum copied to global memory keeps the row slice (one writer per
// row, tile-row-slice-store.mlir).
// CHECK-LABEL: tile.kernel @copied
// CHECK: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>, name = "l", row_slice}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @copied(%L: !tile.tensor<64xf32>) grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %l = tile.alloc_fragment {name = "l"} : !tile.buffer<64xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    tile.reduce sum %acc into %l {clear} : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
    tile.copy %l to %L[%c0] : !tile.buffer<64xf32, fragment> to !tile.tensor<64xf32>
  }
}

// -----

// A row sum copied into a shared buffer: replicated, with a remark.
// CHECK-LABEL: tile.kernel @copied_to_shared
// CHECK: tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, name = "l", replicated}
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @copied_to_shared() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %Ls = tile.alloc_shared : !tile.buffer<64xf32, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %l = tile.alloc_fragment {name = "l"} : !tile.buffer<64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    // expected-remark @+1 {{the result is held whole by every thread, not in the row slice of #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>: it is copied into a buffer, or from somewhere; only copies of it to a tensor tile keep the row slice}}
    tile.reduce sum %acc into %l {clear} : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
    tile.copy %l to %Ls : !tile.buffer<64xf32, fragment> to !tile.buffer<64xf32, shared>
  }
}

// -----

// A 2-D loop that reads the result at its column: replicated, with a remark.
// CHECK-LABEL: tile.kernel @column
// CHECK: name = "m", replicated
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @column() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared : !tile.buffer<64x32xf16, shared>
    %Bs = tile.alloc_shared : !tile.buffer<32x64xf16, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : !tile.buffer<64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf16, shared>, !tile.buffer<32x64xf16, shared>, !tile.buffer<64x64xf32, fragment>
    // expected-remark @+1 {{not in the row slice of #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>: a tile.parallel over rows x columns writes it, or reads a 1-D fragment at another index than its row}}
    tile.reduce max %acc into %m {clear} : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
    tile.parallel (%i, %j) in [64, 64] {
      %x = tile.load %acc[%i, %j] : !tile.buffer<64x64xf32, fragment>
      %r = tile.load %m[%j] : !tile.buffer<64xf32, fragment>
      %y = arith.mulf %x, %r : f32
      tile.store %y, %acc[%i, %j] : !tile.buffer<64x64xf32, fragment>
    }
  }
}

// -----

// SIMT FMA (no MMA layout): replicated as before, no remark.
// CHECK-LABEL: tile.kernel @simt
// CHECK: name = "m", replicated
module attributes {tile.target = #tile.target<"sm_60">} {
  tile.kernel @simt() grid(affine_map<() -> (1)>) threads(128) blocks(%bx) {
    %As = tile.alloc_shared : !tile.buffer<64x32xf32, shared>
    %Bs = tile.alloc_shared : !tile.buffer<32x64xf32, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<64x64xf32, fragment>
    %m = tile.alloc_fragment {name = "m"} : !tile.buffer<64xf32, fragment>
    tile.clear %acc : !tile.buffer<64x64xf32, fragment>
    tile.gemm %As, %Bs, %acc : !tile.buffer<64x32xf32, shared>, !tile.buffer<32x64xf32, shared>, !tile.buffer<64x64xf32, fragment>
    tile.reduce max %acc into %m {clear} : !tile.buffer<64x64xf32, fragment>, !tile.buffer<64xf32, fragment>
  }
}
