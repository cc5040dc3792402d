// Every op, type and attribute of the tile dialect parses, prints, and its
// printed form (custom and generic) parses back to the same text.
// RUN: %tessera-opt %s | %tessera-opt | FileCheck %s
// RUN: %tessera-opt %s --mlir-print-op-generic | %tessera-opt | FileCheck %s
// RUN: %tessera-opt %s > %t.once
// RUN: %tessera-opt %t.once > %t.twice
// RUN: diff %t.once %t.twice

// CHECK: #[[MAP1D:.*]] = affine_map<()[s0, s1, s2] -> (s0 ceildiv 1024)>
// CHECK: #[[MAP2D:.*]] = affine_map<()[s0, s1] -> (s0 ceildiv 32, s1 ceildiv 64)>
// CHECK: #[[MAP3D:.*]] = affine_map<() -> (1, 2, 3)>
// CHECK: module attributes {tile.target = #tile.target<"sm_90a">}
module attributes {tile.target = #tile.target<"sm_90a">} {

// CHECK-LABEL: tile.kernel @vector_add
// CHECK-SAME: (%[[A:[a-zA-Z0-9_]+]]: !tile.tensor<?xf32>, %[[B:[a-zA-Z0-9_]+]]: !tile.tensor<?xf32>, %[[C:[a-zA-Z0-9_]+]]: !tile.tensor<?xf32>)
// CHECK-SAME: grid(#[[MAP1D]]) threads(256) blocks(%[[BX:[a-zA-Z0-9_]+]])
// CHECK-SAME: attributes {arg_names = ["A", "B", "C"], dim_groups = {N = array<i64: 0, 1, 2>}}
// CHECK: %[[FA:[a-zA-Z0-9_]+]] = tile.alloc_fragment {name = "a"} : <1024xf32, fragment>
// CHECK: %[[FB:[a-zA-Z0-9_]+]] = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "b"} : <1024xf32, fragment>
// CHECK: %[[OFF:[a-zA-Z0-9_]+]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: tile.copy %[[A]][%[[OFF]]] to %[[FA]] : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
// CHECK: tile.copy %[[B]][%[[OFF]]] to %[[FB]] : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
// CHECK: tile.parallel (%[[I:[a-zA-Z0-9_]+]]) in [1024] attributes {distribution = #tile.distribution<threads = 256, vector = 4>} {
// CHECK:   %[[X:[a-zA-Z0-9_]+]] = tile.load %[[FA]][%[[I]]] : <1024xf32, fragment>
// CHECK:   %[[Y:[a-zA-Z0-9_]+]] = tile.load %[[FB]][%[[I]]] : <1024xf32, fragment>
// CHECK:   %[[S:[a-zA-Z0-9_]+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK:   tile.store %[[S]], %[[FA]][%[[I]]] : <1024xf32, fragment>
// CHECK-NOT: tile.yield
// CHECK: }
// CHECK: tile.copy %[[FA]] to %[[C]][%[[OFF]]] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
tile.kernel @vector_add(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>, %C: !tile.tensor<?xf32>)
    grid(affine_map<()[s0, s1, s2] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx)
    attributes {arg_names = ["A", "B", "C"], dim_groups = {N = array<i64: 0, 1, 2>}} {
  %a = tile.alloc_fragment {name = "a"} : !tile.buffer<1024xf32, fragment>
  %b = tile.alloc_fragment {name = "b", distribution = #tile.distribution<threads = 256, vector = 4>} : !tile.buffer<1024xf32, fragment>
  %c1024 = arith.constant 1024 : index
  %off = arith.muli %bx, %c1024 : index
  tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
  tile.copy %B[%off] to %b : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
  tile.parallel (%i) in [1024] attributes {distribution = #tile.distribution<threads = 256, vector = 4>} {
    %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
    %y = tile.load %b[%i] : !tile.buffer<1024xf32, fragment>
    %s = arith.addf %x, %y : f32
    tile.store %s, %a[%i] : !tile.buffer<1024xf32, fragment>
    tile.yield
  }
  tile.copy %a to %C[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  tile.yield
}

// Two- and three-dimensional grids, static and dynamic dimensions, shared
// buffers with and without planned offsets, buffer-to-buffer copies with
// float conversion, fill, clear, dim and a 2-D parallel.

// CHECK-LABEL: tile.kernel @tiles
// CHECK-SAME: (%[[X:[a-zA-Z0-9_]+]]: !tile.tensor<?x64xf16>, %[[Y:[a-zA-Z0-9_]+]]: !tile.tensor<128x?xf32>, %[[ALPHA:[a-zA-Z0-9_]+]]: f32, %[[K:[a-zA-Z0-9_]+]]: index, %[[M:[a-zA-Z0-9_]+]]: i32)
// CHECK-SAME: grid(#[[MAP2D]]) threads(128) blocks(%[[BX:[a-zA-Z0-9_]+]], %[[BY:[a-zA-Z0-9_]+]])
// CHECK: %[[N:[a-zA-Z0-9_]+]] = tile.dim %[[X]][0] : <?x64xf16>
// CHECK: %[[XS:[a-zA-Z0-9_]+]] = tile.alloc_shared {name = "Xs"} : <32x64xf16, shared>
// CHECK: %[[YS:[a-zA-Z0-9_]+]] = tile.alloc_shared {name = "Ys", offset = 4096 : i64} : <32x64xf32, shared>
// CHECK: %[[ACC:[a-zA-Z0-9_]+]] = tile.alloc_fragment : <32x64xf32, fragment>
// CHECK: tile.clear %[[ACC]] : <32x64xf32, fragment>
// CHECK: tile.fill %[[ACC]], %[[ALPHA]] : <32x64xf32, fragment>, f32
// CHECK: tile.copy %[[X]][%{{.*}}, %{{.*}}] to %[[XS]] : !tile.tensor<?x64xf16> to !tile.buffer<32x64xf16, shared>
// CHECK: tile.copy %[[XS]] to %[[YS]] : !tile.buffer<32x64xf16, shared> to !tile.buffer<32x64xf32, shared>
// CHECK: tile.parallel (%[[I:[a-zA-Z0-9_]+]], %[[J:[a-zA-Z0-9_]+]]) in [32, 64] {
// CHECK:   %{{.*}} = tile.load %[[YS]][%[[I]], %[[J]]] : <32x64xf32, shared>
// CHECK:   tile.store %{{.*}}, %[[ACC]][%[[I]], %[[J]]] : <32x64xf32, fragment>
// CHECK: }
// CHECK: tile.copy %[[ACC]] to %[[Y]][%{{.*}}, %{{.*}}] : !tile.buffer<32x64xf32, fragment> to !tile.tensor<128x?xf32>
tile.kernel @tiles(%X: !tile.tensor<?x64xf16>, %Y: !tile.tensor<128x?xf32>, %alpha: f32,
                   %k: index, %m: i32)
    grid(affine_map<()[s0, s1] -> (s0 ceildiv 32, s1 ceildiv 64)>) threads(128)
    blocks(%bx, %by) {
  %n = tile.dim %X[0] : !tile.tensor<?x64xf16>
  %Xs = tile.alloc_shared {name = "Xs"} : !tile.buffer<32x64xf16, shared>
  %Ys = tile.alloc_shared {name = "Ys", offset = 4096} : !tile.buffer<32x64xf32, shared>
  %acc = tile.alloc_fragment : !tile.buffer<32x64xf32, fragment>
  tile.clear %acc : !tile.buffer<32x64xf32, fragment>
  tile.fill %acc, %alpha : !tile.buffer<32x64xf32, fragment>, f32
  %c32 = arith.constant 32 : index
  %c0 = arith.constant 0 : index
  %row = arith.muli %bx, %c32 : index
  tile.copy %X[%row, %c0] to %Xs : !tile.tensor<?x64xf16> to !tile.buffer<32x64xf16, shared>
  tile.copy %Xs to %Ys : !tile.buffer<32x64xf16, shared> to !tile.buffer<32x64xf32, shared>
  tile.parallel (%i, %j) in [32, 64] {
    %v = tile.load %Ys[%i, %j] : !tile.buffer<32x64xf32, shared>
    %w = arith.mulf %v, %alpha : f32
    tile.store %w, %acc[%i, %j] : !tile.buffer<32x64xf32, fragment>
  }
  tile.copy %acc to %Y[%row, %k] : !tile.buffer<32x64xf32, fragment> to !tile.tensor<128x?xf32>
}

// Every supported element type, a fully static tensor and a 3-D grid.

// CHECK-LABEL: tile.kernel @element_types
// CHECK-SAME: !tile.tensor<8xf16>, %{{.*}}: !tile.tensor<8xbf16>, %{{.*}}: !tile.tensor<8xf32>, %{{.*}}: !tile.tensor<8xf64>, %{{.*}}: !tile.tensor<8xi8>, %{{.*}}: !tile.tensor<8xi32>, %{{.*}}: !tile.tensor<8x4x2xi64>, %{{.*}}: f16, %{{.*}}: i64
// CHECK-SAME: grid(#[[MAP3D]]) threads(1024) blocks(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: tile.alloc_fragment : <8xbf16, fragment>
// CHECK: tile.alloc_fragment : <8xf64, fragment>
// CHECK: tile.alloc_shared : <8xi8, shared>
// CHECK: tile.alloc_shared : <8xi32, shared>
// CHECK: tile.alloc_fragment : <8x4x2xi64, fragment>
// CHECK: tile.copy %{{.*}} to %{{.*}} : !tile.buffer<8xbf16, fragment> to !tile.buffer<8xf64, fragment>
tile.kernel @element_types(%a: !tile.tensor<8xf16>, %b: !tile.tensor<8xbf16>, %c: !tile.tensor<8xf32>,
                           %d: !tile.tensor<8xf64>, %e: !tile.tensor<8xi8>, %f: !tile.tensor<8xi32>,
                           %g: !tile.tensor<8x4x2xi64>, %h: f16, %i: i64)
    grid(affine_map<()[] -> (1, 2, 3)>) threads(1024) blocks(%x, %y, %z) {
  %0 = tile.alloc_fragment : !tile.buffer<8xbf16, fragment>
  %1 = tile.alloc_fragment : !tile.buffer<8xf64, fragment>
  %2 = tile.alloc_shared : !tile.buffer<8xi8, shared>
  %3 = tile.alloc_shared : !tile.buffer<8xi32, shared>
  %4 = tile.alloc_fragment : !tile.buffer<8x4x2xi64, fragment>
  tile.copy %0 to %1 : !tile.buffer<8xbf16, fragment> to !tile.buffer<8xf64, fragment>
}

// Atomic adds into a tensor tile, and integer bit operations in a body.

// CHECK-LABEL: tile.kernel @atomics_and_bits
// CHECK: tile.copy %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] {atomic_add} : !tile.buffer<16x32xf32, fragment> to !tile.tensor<?x?xf32>
// CHECK: arith.shrui
// CHECK: arith.andi
// CHECK: tile.cast %{{.*}} {saturate} : i32 to i8
// CHECK: tile.atomic max %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : f32, <?x?xf32>
// CHECK: tile.read %{{.*}}[%{{.*}}] : <?xi32>
// CHECK: tile.copy %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}] until %{{.*}} {until_axis = 1 : i64} : !tile.buffer<16x32xf32, fragment> to !tile.tensor<?x?xf32>
tile.kernel @atomics_and_bits(%C: !tile.tensor<?x?xf32>, %W: !tile.tensor<?x?xi8>,
                              %T: !tile.tensor<?xi32>)
    grid(affine_map<()[s0, s1, s2, s3, s4] -> (1)>) threads(32) blocks(%bx) {
  %acc = tile.alloc_fragment : !tile.buffer<16x32xf32, fragment>
  %w = tile.alloc_fragment : !tile.buffer<16x32xi8, fragment>
  tile.copy %acc to %C[%bx, %bx] {atomic_add} : !tile.buffer<16x32xf32, fragment> to !tile.tensor<?x?xf32>
  tile.parallel (%i, %j) in [16, 32] {
    %x = tile.load %acc[%i, %j] : !tile.buffer<16x32xf32, fragment>
    %bits = arith.bitcast %x : f32 to i32
    %c4 = arith.constant 4 : i32
    %c15 = arith.constant 15 : i32
    %s = arith.shrui %bits, %c4 : i32
    %q = arith.andi %s, %c15 : i32
    %n = tile.cast %q {saturate} : i32 to i8
    tile.store %n, %w[%i, %j] : !tile.buffer<16x32xi8, fragment>
    %old = tile.atomic max %x, %C[%i, %j] : f32, !tile.tensor<?x?xf32>
  }
  %page = tile.read %T[%bx] : !tile.tensor<?xi32>
  tile.copy %acc to %C[%bx, %bx] until %page {until_axis = 1 : i64} : !tile.buffer<16x32xf32, fragment> to !tile.tensor<?x?xf32>
}

// Block-uniform control flow: tile.if (with and without else) and
// tile.serial (plain and unrolled).

// CHECK-LABEL: tile.kernel @control_flow
// CHECK: tile.serial %[[I:.*]] = 0 to %{{.*}} {
// CHECK:   tile.if %{{.*}} {
// CHECK:     tile.clear
// CHECK:   } else {
// CHECK:     tile.fill
// CHECK:   }
// CHECK: }
// CHECK: tile.serial %{{.*}} = 0 to %{{.*}} attributes {unroll} {
// CHECK:   tile.if %{{.*}} {
// CHECK-NEXT: }
tile.kernel @control_flow(%A: !tile.tensor<?xf32>)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %a = tile.alloc_fragment : !tile.buffer<32xf32, fragment>
  %n = tile.dim %A[0] : !tile.tensor<?xf32>
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  tile.serial %i = 0 to %n {
    %even = arith.cmpi ult, %i, %c2 : index
    tile.if %even {
      tile.clear %a : !tile.buffer<32xf32, fragment>
    } else {
      tile.fill %a, %one : !tile.buffer<32xf32, fragment>, f32
    }
  }
  tile.serial %u = 0 to %c2 attributes {unroll} {
    %first = arith.cmpi eq, %u, %bx : index
    tile.if %first {
    }
  }
}

// An empty kernel keeps its implicit terminator implicit.

// CHECK-LABEL: tile.kernel @empty
// CHECK-SAME: threads(32) blocks(%{{.*}}) {
// CHECK-NEXT: }
tile.kernel @empty() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
}

// The schedule options are unit attributes.

// CHECK-LABEL: tile.kernel @scheduled
// CHECK-SAME: attributes {edge_loop, persistent, stream_k}
tile.kernel @scheduled() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) attributes {edge_loop, persistent, stream_k} {
}

// CHECK-LABEL: tile.kernel @clustered
// CHECK-SAME: attributes {multicast, multicast_blocks = 4 : i64, persistent}
tile.kernel @clustered() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) attributes {multicast, multicast_blocks = 4 : i64, persistent} {
}

// A size argument: the grid's symbols are the tensor dimensions, then it.

// CHECK-LABEL: tile.kernel @sized
// CHECK-SAME: grid(#{{.*}}) threads(32) blocks(%{{.*}}, %{{.*}}) attributes {size_args = array<i64: 1>}
tile.kernel @sized(%A: !tile.tensor<?x8xf32>, %max: i32) grid(affine_map<()[s0, s1] -> (s1 ceildiv 64, s0)>) threads(32) blocks(%bx, %by) attributes {size_args = array<i64: 1>} {
}


// Every integer attribute at the ends of its range (the verifiers compare
// signed values; the printer prints them signed).

// CHECK-LABEL: tile.kernel @extremes
// CHECK-SAME: grid(#{{.*}}) threads(1) blocks(%{{.*}}) attributes {multicast, multicast_blocks = 8 : i64, persistent}
// CHECK: tile.alloc_shared {offset = 2147483647 : i64, stages = 32 : i64} : <1xf32, shared>
// CHECK: tile.alloc_shared {offset = 0 : i64, stages = 1 : i64} : <1xf32, shared>
// CHECK: tile.alloc_shared {stages = 2147483647 : i64} : <1xi8, shared>
// CHECK: tile.dim %{{.*}}[1] : <4x?xf32>
// CHECK: tile.pipelined %{{.*}} = 0 to %{{.*}} stages 2147483647 {
// CHECK: tile.pipelined %{{.*}} = 0 to %{{.*}} stages 1 {
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [65536, 32767] {
tile.kernel @extremes(%A: !tile.tensor<4x?xf32>) grid(affine_map<()[s0] -> (2147483647)>) threads(1)
    blocks(%bx) attributes {multicast, multicast_blocks = 8 : i64, persistent} {
  %0 = tile.alloc_shared {offset = 2147483647, stages = 32} : !tile.buffer<1xf32, shared>
  %1 = tile.alloc_shared {offset = 0, stages = 1} : !tile.buffer<1xf32, shared>
  %2 = tile.alloc_shared {stages = 2147483647} : !tile.buffer<1xi8, shared>
  %n = tile.dim %A[1] : !tile.tensor<4x?xf32>
  %c0 = arith.constant 0 : index
  tile.pipelined %k = 0 to %n stages 2147483647 {
  }
  tile.pipelined %k = 0 to %c0 stages 1 {
  }
  tile.parallel (%i, %j) in [65536, 32767] {
  }
}

// A slice: a [rows, dim] tile of a [batch, seq, heads, dim] tensor, both
// ways; comparisons and selects in a parallel body (a causal mask).

// CHECK-LABEL: tile.kernel @slices_and_masks
// CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] to %[[QS:.*]] {tensor_dims = array<i64: 1, 3>} : !tile.tensor<?x?x16x64xf16> to !tile.buffer<64x64xf16, shared>
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : index
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: tile.copy %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {tensor_dims = array<i64: 1, 3>} : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?x16x64xf32>
tile.kernel @slices_and_masks(%Q: !tile.tensor<?x?x16x64xf16>, %O: !tile.tensor<?x?x16x64xf32>)
    grid(affine_map<()[s0, s1, s2, s3] -> (s1 ceildiv 64, 16, s0)>) threads(128) blocks(%bx, %h, %b) {
  %qs = tile.alloc_shared {name = "Qs"} : !tile.buffer<64x64xf16, shared>
  %o = tile.alloc_fragment {name = "o"} : !tile.buffer<64x64xf32, fragment>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %row = arith.muli %bx, %c64 : index
  tile.copy %Q[%b, %row, %h, %c0] to %qs {tensor_dims = array<i64: 1, 3>} : !tile.tensor<?x?x16x64xf16> to !tile.buffer<64x64xf16, shared>
  tile.parallel (%i, %j) in [64, 64] {
    %r = arith.addi %row, %i : index
    %masked = arith.cmpi sgt, %j, %r : index
    %x = tile.load %qs[%i, %j] : !tile.buffer<64x64xf16, shared>
    %y = arith.extf %x : f16 to f32
    %ninf = arith.constant 0xFF800000 : f32
    %v = arith.select %masked, %ninf, %y : f32
    tile.store %v, %o[%i, %j] : !tile.buffer<64x64xf32, fragment>
  }
  tile.copy %o to %O[%b, %row, %h, %c0] {tensor_dims = array<i64: 1, 3>} : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x?x16x64xf32>
}
}

// Block variables and preconditions.

// CHECK-LABEL: tile.kernel @variables
// CHECK: tile.require %{{.*}}
// CHECK: %[[ROW:.*]] = tile.var %{{.*}} {name = "row"} : <index>
// CHECK: %[[BEST:.*]] = tile.var %{{.*}} : <f32>
// CHECK: tile.serial
// CHECK:   %[[R:.*]] = tile.var_get %[[ROW]] : <index>
// CHECK:   tile.var_set %[[ROW]], %{{.*}} : <index>
// CHECK:   tile.var_set %[[BEST]], %{{.*}} : <f32>
tile.kernel @variables(%A: !tile.tensor<?xf32>, %n: i32)
    grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
  %len = tile.dim %A[0] : !tile.tensor<?xf32>
  %c128 = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %rem = arith.remui %len, %c128 : index
  %whole = arith.cmpi eq, %rem, %c0 : index
  tile.require %whole
  %row = tile.var %c0 {name = "row"} : !tile.var<index>
  %zero = arith.constant 0.0 : f32
  %best = tile.var %zero : !tile.var<f32>
  tile.serial %i = 0 to %len {
    %r = tile.var_get %row : !tile.var<index>
    %next = arith.addi %r, %c128 : index
    tile.var_set %row, %next : !tile.var<index>
    tile.var_set %best, %zero : !tile.var<f32>
  }
}

// A kernel that starts while the one before it ends, and one that lets the
// next start early.

// CHECK-LABEL: tile.kernel @combine_after_split
// CHECK: tile.dim
// CHECK-NEXT: tile.wait_prior_kernels
// CHECK: tile.copy
tile.kernel @combine_after_split(%P: !tile.tensor<?x64xf32>)
    grid(affine_map<()[s0] -> (s0)>) threads(64) blocks(%bx) {
  %s = tile.alloc_shared : !tile.buffer<1x64xf32, shared>
  %n = tile.dim %P[0] : !tile.tensor<?x64xf32>
  tile.wait_prior_kernels
  %c0 = arith.constant 0 : index
  tile.copy %P[%bx, %c0] to %s : !tile.tensor<?x64xf32> to !tile.buffer<1x64xf32, shared>
}

// CHECK-LABEL: tile.kernel @split
// CHECK-NEXT: tile.launch_dependents
tile.kernel @split(%P: !tile.tensor<?x64xf32>)
    grid(affine_map<()[s0] -> (s0)>) threads(64) blocks(%bx) {
  tile.launch_dependents
}

// CHECK-LABEL: tile.kernel @pointer_array
// CHECK: tile.view %{{.*}}[%{{.*}}] sizes(%{{.*}}, %{{.*}}) {align = 16 : i64} : <?xi64> to <?x?xf16>
// CHECK: tile.view %{{.*}}[%{{.*}}] sizes(%{{.*}}) strides(%{{.*}}) : <?xi64> to <?x64xf16>
// CHECK: tile.view %{{.*}}[%{{.*}}] : <?xi64> to <16x64xf16>
tile.kernel @pointer_array(%P: !tile.tensor<?xi64>, %S: !tile.tensor<?xi32>)
    grid(affine_map<()[s0, s1] -> (s0)>) threads(64) blocks(%bx) {
  %s = tile.alloc_shared : !tile.buffer<16x64xf16, shared>
  %m = tile.read %S[%bx] : !tile.tensor<?xi32>
  %c64 = arith.constant 64 : index
  %A = tile.view %P[%bx] sizes(%m, %c64) {align = 16} : !tile.tensor<?xi64> to !tile.tensor<?x?xf16>
  %B = tile.view %P[%bx] sizes(%m) strides(%c64) : !tile.tensor<?xi64> to !tile.tensor<?x64xf16>
  %C = tile.view %P[%bx] : !tile.tensor<?xi64> to !tile.tensor<16x64xf16>
  %c0 = arith.constant 0 : index
  tile.copy %A[%c0, %c0] to %s : !tile.tensor<?x?xf16> to !tile.buffer<16x64xf16, shared>
  tile.copy %s to %B[%c0, %c0] : !tile.buffer<16x64xf16, shared> to !tile.tensor<?x64xf16>
  tile.copy %s to %C[%c0, %c0] : !tile.buffer<16x64xf16, shared> to !tile.tensor<16x64xf16>
}
