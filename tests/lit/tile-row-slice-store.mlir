// A row slice copied to a tensor tile (the log-sum-exp output of attention):
// the row maximum of an MMA accumulator keeps the accumulator's row slice,
// and tile.copy writes each row once, from the lane of the row's sharers
// whose sharer bits are clear (in warp column 0), bounds-checked against the
// slice's rows. A copy into a buffer keeps the result replicated, with a remark
// (here: 128 replicated results, too many).
// RUN: %tessera-compile %s --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT80
// RUN: %tessera-compile %s --target=sm_80 --emit=gpu | FileCheck %s --check-prefix=GPU80
// RUN: %tessera-compile %s --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX80
// RUN: %tessera-compile %s --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX90
// sm_70 (quadpairs, 2 x 2 warps): lanes 2 and 8 apart share a row; warp
// column 0 writes.
// RUN: %tessera-compile %s --target=sm_70 --emit=gpu | FileCheck %s --check-prefix=GPU70
// sm_60 (SIMT FMA): a replicated result, copied as any fragment.
// RUN: sed -e 's/128x/32x/g' -e 's/<128x/<32x/g' -e 's/\[128\]/[32]/g' -e 's/ceildiv 128/ceildiv 32/' -e 's/constant 128 /constant 32 /' -e 's/<128xf32/<32xf32/g' %s | %tessera-compile - --target=sm_60 --emit=ptx | FileCheck %s --check-prefix=PTX60
// RUN: sed -e 's/to %R\[%b, %row\]/to %rowbuf/' -e 's/ {tensor_dims = array<i64: 1>} : !tile.buffer<128xf32, fragment> to !tile.tensor<?x?xf32>/ : !tile.buffer<128xf32, fragment> to !tile.buffer<128xf32, shared>/' %s | not %tessera-compile - --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=BUFFER

// LAYOUT80: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>, name = "rmax", row_slice} : <128xf32, fragment>
// LAYOUT80: tile.copy %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] {tensor_dims = array<i64: 1>} : !tile.buffer<128xf32, fragment> to !tile.tensor<?x?xf32>

// sm_80 (2 x 2 warps): the writer test (lane & 3 == 0, warp column 0), then
// per owned row (8 per thread: 2 per 16-row step, 64 rows per warp) a bounds
// check against the slice's rows and one store.
// GPU80: %[[BITS:.*]] = arith.andi %{{.*}}, %c3 : index
// GPU80-NEXT: %[[LANE0:.*]] = arith.cmpi eq, %[[BITS]], %c0 : index
// GPU80-NEXT: %[[COLUMN0:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// GPU80-NEXT: %[[WRITER:.*]] = arith.andi %[[LANE0]], %[[COLUMN0]] : i1
// GPU80-NEXT: scf.if %[[WRITER]] {
// GPU80-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// GPU80-NOT: llvm.store

// PTX80: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX80: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX80-COUNT-8: st.global.{{b32|f32}}
// PTX80-NOT: st.global
// PTX80-NOT: .local

// sm_90a (4 warps of 32 rows): 4 rows per thread.
// PTX90: wgmma.mma_async
// PTX90-COUNT-4: st.global.{{b32|f32}}
// PTX90-NOT: st.global

// GPU70: %[[BITS:.*]] = arith.andi %{{.*}}, %c10 : index
// GPU70-NEXT: %[[LANE0:.*]] = arith.cmpi eq, %[[BITS]], %c0 : index
// GPU70-NEXT: %[[COLUMN0:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// GPU70-NEXT: %[[WRITER:.*]] = arith.andi %[[LANE0]], %[[COLUMN0]] : i1
// GPU70-NEXT: scf.if %[[WRITER]] {
// GPU70-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>

// PTX60: st.global.{{b32|f32}}

// BUFFER: remark: the result is held whole by every thread, not in the row slice of #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 2>: it is copied into a buffer, or from somewhere; only copies of it to a tensor tile keep the row slice
// BUFFER: error: 'tile.reduce' op produces 128 results per block; at most 64 are supported

module {
  tile.kernel @row_max(%A: !tile.tensor<?x64xf16>, %B: !tile.tensor<?x64xf16>, %R: !tile.tensor<?x?xf32>)
      grid(affine_map<()[s0, s1, s2, s3] -> (s0 ceildiv 128, s2)>) threads(128) blocks(%bx, %b)
      attributes {dim_divisibility = array<i64: 1, 1, 1, 1>} {
    %as = tile.alloc_shared {name = "As"} : !tile.buffer<128x64xf16, shared>
    %bs = tile.alloc_shared {name = "Bs"} : !tile.buffer<64x64xf16, shared>
    %rowbuf = tile.alloc_shared {name = "scratch"} : !tile.buffer<128xf32, shared>
    %acc = tile.alloc_fragment {name = "acc"} : !tile.buffer<128x64xf32, fragment>
    %rmax = tile.alloc_fragment {name = "rmax"} : !tile.buffer<128xf32, fragment>
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %row = arith.muli %bx, %c128 : index
    tile.copy %A[%row, %c0] to %as : !tile.tensor<?x64xf16> to !tile.buffer<128x64xf16, shared>
    tile.copy %B[%c0, %c0] to %bs : !tile.tensor<?x64xf16> to !tile.buffer<64x64xf16, shared>
    tile.clear %acc : !tile.buffer<128x64xf32, fragment>
    tile.gemm %as, %bs, %acc {transpose_b} : !tile.buffer<128x64xf16, shared>, !tile.buffer<64x64xf16, shared>, !tile.buffer<128x64xf32, fragment>
    tile.reduce max %acc into %rmax {clear} : !tile.buffer<128x64xf32, fragment>, !tile.buffer<128xf32, fragment>
    tile.copy %rmax to %R[%b, %row] {tensor_dims = array<i64: 1>} : !tile.buffer<128xf32, fragment> to !tile.tensor<?x?xf32>
  }
}
