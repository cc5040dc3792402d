// A size argument (tile.kernel's `size_args`) in tile-lower-to-gpu: the i32
// argument sizes the grid after the tensor dimensions, so a persistent
// kernel's loop over the grid's blocks ends at ceil(rows / 64) read from it.
// RUN: %tessera-compile %s --target=sm_80 --emit=gpu | FileCheck %s
// RUN: %tessera-compile %s --target=sm_90a --emit=gpu | FileCheck %s

// CHECK: gpu.func @rows(%{{.*}}: !llvm.ptr<1> {{.*}}, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1> {{.*}}, %{{.*}}: i64, %[[ROWS:.*]]: i32)
// CHECK: %[[N:.*]] = arith.index_cast %[[ROWS]] : i32 to index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[N]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %block_id_x to %[[BLOCKS]] step %grid_dim_x {
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @rows(%X: !tile.tensor<?x64xf32>, %Y: !tile.tensor<?x64xf32>, %rows: i32)
      grid(affine_map<()[s0, s1, s2] -> (s2 ceildiv 64)>) threads(128) blocks(%bx)
      attributes {size_args = array<i64: 2>, persistent} {
    %t = tile.alloc_fragment {name = "t"} : !tile.buffer<64x64xf32, fragment>
    %c64 = arith.constant 64 : index
    %row = arith.muli %bx, %c64 : index
    %c0 = arith.constant 0 : index
    tile.copy %X[%row, %c0] to %t : !tile.tensor<?x64xf32> to !tile.buffer<64x64xf32, fragment>
    tile.copy %t to %Y[%row, %c0] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x64xf32>
  }
}
