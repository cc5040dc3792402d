// Barriers around tile.parallel loops that touch shared memory: a loop that
// only reads waits for a barrier only where shared memory was written since
// the last one (a read after reads needs none); a loop that writes waits
// for the earlier reads (and writes) of every thread.
// RUN: %tessera-compile %s --target=sm_80 --emit=gpu | FileCheck %s

// CHECK-LABEL: gpu.func @reads
// The copy into S, then the barrier its readers wait for.
// CHECK: llvm.store %{{.*}} : vector<4xf32>, !llvm.ptr<3>
// CHECK: gpu.barrier
// Two loops reading S, one barrier before both.
// CHECK: memref.load %{{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %{{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.store %{{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>
// The loop writing S waits for both readers.
// CHECK: gpu.barrier
// CHECK-NEXT: memref.load %{{.*}} : memref<32xf32>
// CHECK-NEXT: memref.store %{{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>
// The loop reading S after that write waits for it.
// CHECK: gpu.barrier
// CHECK-NEXT: memref.load %{{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module {
  tile.kernel @reads(%X: !tile.tensor<?x64xf32>, %Y: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 64)>) threads(128) blocks(%bx)
      attributes {dim_groups = {M = array<i64: 0, 1>}} {
    %s = tile.alloc_shared {name = "S"} : !tile.buffer<64x64xf32, shared>
    %a = tile.alloc_fragment {name = "a"} : !tile.buffer<64x64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %bx, %c64 : index
    tile.copy %X[%row, %c0] to %s : !tile.tensor<?x64xf32> to !tile.buffer<64x64xf32, shared>
    tile.parallel (%i, %j) in [64, 64] {
      %v = tile.load %s[%i, %j] : !tile.buffer<64x64xf32, shared>
      tile.store %v, %a[%i, %j] : !tile.buffer<64x64xf32, fragment>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %v = tile.load %s[%j, %i] : !tile.buffer<64x64xf32, shared>
      %x = tile.load %a[%i, %j] : !tile.buffer<64x64xf32, fragment>
      %sum = arith.addf %v, %x : f32
      tile.store %sum, %a[%i, %j] : !tile.buffer<64x64xf32, fragment>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %x = tile.load %a[%i, %j] : !tile.buffer<64x64xf32, fragment>
      tile.store %x, %s[%i, %j] : !tile.buffer<64x64xf32, shared>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %v = tile.load %s[%j, %i] : !tile.buffer<64x64xf32, shared>
      tile.store %v, %a[%i, %j] : !tile.buffer<64x64xf32, fragment>
    }
    tile.copy %a to %Y[%row, %c0] : !tile.buffer<64x64xf32, fragment> to !tile.tensor<?x64xf32>
  }
}
