// tile-lower-to-gpu: tile kernels become gpu.func kernels in one gpu.module;
// tensors become global pointers plus one i64 per dynamic dimension; copies
// use aligned vector accesses where the offsets prove alignment and scalar
// accesses otherwise; shared buffers are views of dynamic shared memory,
// fenced by barriers. Inputs carry the distributions and offsets that
// tile-layout-inference and tile-plan-shared-memory would assign.
// RUN: %tessera-opt %s --split-input-file --tile-lower-to-gpu --verify-diagnostics | FileCheck %s

// CHECK-LABEL: module attributes {gpu.container_module, tile.target = #tile.target<"sm_80">}
// CHECK-NOT: tile.kernel
// CHECK: gpu.module @tessera_kernels {
// CHECK: gpu.func @vector_add(%[[A:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[AN:[a-z0-9]+]]: i64, %[[B:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[BN:[a-z0-9]+]]: i64) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<4xf32>
// CHECK: %[[N:.*]] = arith.index_cast %[[AN]] : i64 to index
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK: %[[TX:.*]] = gpu.thread_id x
// CHECK: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: arith.muli %[[BX]], %[[C1024]] : index
// The whole vector in bounds: one 16-byte load.
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK:   %[[PTR:.*]] = llvm.getelementptr inbounds %[[A]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK:   llvm.load %[[PTR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// At the tensor's end: guarded scalar loads, zero outside.
// CHECK: } else {
// CHECK:   arith.cmpi slt, %{{.*}}, %[[N]] : index
// CHECK:   llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: }
// CHECK: memref.store %{{.*}}, %[[REGS]][%{{.*}}] : memref<4xf32>
// The parallel body runs once per register slot.
// CHECK-COUNT-4: arith.addf
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return
// CHECK-NOT: {{tile\.(kernel|alloc|copy|parallel|load|store)}}
// CHECK: // -----
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @vector_add(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>} : !tile.buffer<1024xf32, fragment>
    %c1024 = arith.constant 1024 : index
    %off = arith.muli %bx, %c1024 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] attributes {distribution = #tile.distribution<threads = 256, vector = 4>} {
      %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
      %y = arith.addf %x, %x : f32
      tile.store %y, %a[%i] : !tile.buffer<1024xf32, fragment>
    }
    tile.copy %a to %B[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// An offset of bx * 1022 is not a multiple of 4: every access is scalar.
// CHECK-LABEL: gpu.func @misaligned
// CHECK-NOT: vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: vector<4xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK-NOT: vector<4xf32>
// CHECK: gpu.return
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @misaligned(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 1022)>) threads(256) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>} : !tile.buffer<1024xf32, fragment>
    %c1022 = arith.constant 1022 : index
    %off = arith.muli %bx, %c1022 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.copy %a to %B[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// Shared buffers are views of the dynamic shared memory at their planned
// offset; every copy that touches shared memory starts with a barrier
// (one between two copies, none after the last). A 2-D tensor with a dynamic inner dimension has rows of unknown
// alignment: scalar loads. Shared rows of 64 f16 take 16-byte vector
// stores and loads (8 elements stay contiguous under any swizzle). With a
// static inner dimension of 64 f16 the global stores are 16-byte vectors.
// CHECK-LABEL: gpu.func @staged
// CHECK-SAME: (%[[X:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64, %[[Y:[a-z0-9]+]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %{{[a-z0-9]+}}: i64)
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[C4096:.*]] = arith.constant 4096 : index
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[VIEW:.*]] = memref.view %[[SMEM]][%[[C4096]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: !llvm.ptr<1> -> vector<8xf16>
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK-NOT: !llvm.ptr<1> -> vector<8xf16>
// CHECK: memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
// CHECK: llvm.getelementptr inbounds %[[Y]]
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @staged(%X: !tile.tensor<?x?xf16>, %Y: !tile.tensor<?x64xf16>)
      grid(affine_map<()[s0, s1, s2] -> (s0 ceildiv 32)>) threads(128) blocks(%bx)
      attributes {tile.shared_memory_bytes = 8192 : i64} {
    %s = tile.alloc_shared {name = "s", offset = 4096} : !tile.buffer<32x64xf16, shared>
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %row = arith.muli %bx, %c32 : index
    tile.copy %X[%row, %c0] to %s : !tile.tensor<?x?xf16> to !tile.buffer<32x64xf16, shared>
    tile.copy %s to %Y[%row, %c0] : !tile.buffer<32x64xf16, shared> to !tile.tensor<?x64xf16>
  }
}

// -----

// Scalars pass as they are (index as i64); static dimensions are constants,
// dynamic ones the i64 parameters; a 2-D grid reads block ids x and y. All
// kernels of a module share one gpu.module.
// CHECK-LABEL: gpu.module @tessera_kernels
// CHECK: gpu.func @scalars(%{{[a-z0-9]+}}: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[M:[a-z0-9]+]]: i64, %[[S:[a-z0-9]+]]: f32, %[[K:[a-z0-9]+]]: i64, %{{[a-z0-9]+}}: i32) kernel
// CHECK-DAG: %[[MI:.*]] = arith.index_cast %[[M]] : i64 to index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK: gpu.block_id x
// CHECK: gpu.block_id y
// CHECK: %[[SUM:.*]] = arith.addi %[[MI]], %[[KI]] : index
// CHECK: arith.addi %[[SUM]], %[[C8]] : index
// CHECK: memref.store %[[S]], %{{.*}}[%{{.*}}] : memref<2xf32>
// CHECK: gpu.return
// CHECK-NOT: gpu.module
// CHECK: gpu.func @second() kernel attributes {known_block_size = array<i32: 1024, 1, 1>}
module attributes {tile.target = #tile.target<"sm_70">} {
  tile.kernel @scalars(%A: !tile.tensor<?x8xf32>, %s: f32, %k: index, %m: i32)
      grid(affine_map<()[s0] -> (s0 ceildiv 32, 2)>) threads(64) blocks(%bx, %by) {
    %rows = tile.dim %A[0] : !tile.tensor<?x8xf32>
    %cols = tile.dim %A[1] : !tile.tensor<?x8xf32>
    %sum = arith.addi %rows, %k : index
    %sum2 = arith.addi %sum, %cols : index
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 2>} : !tile.buffer<128xf32, fragment>
    tile.fill %a, %s : !tile.buffer<128xf32, fragment>, f32
  }
  tile.kernel @second() grid(affine_map<()[] -> (1)>) threads(1024) blocks(%bx) {
  }
}

// -----

// Fills: a fragment is filled in registers; a shared buffer by every thread,
// between barriers. Chunks past the tile's end are guarded.
// CHECK-LABEL: gpu.func @fills
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<1xf16>
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[VIEW:.*]] = memref.view %[[SMEM]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK: memref.store %[[ZERO]], %[[REGS]][%{{.*}}] : memref<1xf16>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[VIEW]][%{{.*}}] : memref<48xf32, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[VIEW]][%{{.*}}] : memref<48xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: gpu.return
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @fills(%v: f32) grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx)
      attributes {tile.shared_memory_bytes = 192 : i64} {
    %r = tile.alloc_fragment {distribution = #tile.distribution<threads = 32, vector = 1>} : !tile.buffer<32xf16, fragment>
    %s = tile.alloc_shared {offset = 0} : !tile.buffer<48xf32, shared>
    tile.clear %r : !tile.buffer<32xf16, fragment>
    tile.fill %s, %v : !tile.buffer<48xf32, shared>, f32
  }
}

// -----

// A converting copy moves 8 f32 (32 bytes) per thread for an f16 fragment,
// but claims only the 16 bytes the tensor's base pointer is aligned to.
// CHECK-LABEL: gpu.func @convert
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @convert(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf16>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 2048)>) threads(256) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 8>} : !tile.buffer<2048xf16, fragment>
    %c2048 = arith.constant 2048 : index
    %off = arith.muli %bx, %c2048 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<2048xf16, fragment>
    tile.copy %a to %B[%off] : !tile.buffer<2048xf16, fragment> to !tile.tensor<?xf16>
  }
}

// -----

// Integer copies: i32 into i8 clamps to [-128, 127] before it truncates;
// i8 into i32 and ui8 into i32 extend by sign and by zero.
// CHECK-LABEL: gpu.func @integer_copies
// CHECK: %[[HI:.*]] = arith.constant 127 : i32
// CHECK: %[[MIN:.*]] = arith.minsi %{{.*}}, %[[HI]] : i32
// CHECK: %[[LO:.*]] = arith.constant -128 : i32
// CHECK: %[[MAX:.*]] = arith.maxsi %[[MIN]], %[[LO]] : i32
// CHECK: arith.trunci %[[MAX]] : i32 to i8
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.extui %{{.*}} : i8 to i32
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @integer_copies(%A: !tile.tensor<?xi32>, %B: !tile.tensor<?xi8>,
                              %U: !tile.tensor<?xui8>, %C: !tile.tensor<?xi32>)
      grid(affine_map<()[s0, s1, s2, s3] -> (s0 ceildiv 256)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<256xi32, fragment>
    %b = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<256xi8, fragment>
    %c256 = arith.constant 256 : index
    %off = arith.muli %bx, %c256 : index
    tile.copy %A[%off] to %b : !tile.tensor<?xi32> to !tile.buffer<256xi8, fragment>
    tile.copy %b to %a : !tile.buffer<256xi8, fragment> to !tile.buffer<256xi32, fragment>
    tile.copy %U[%off] to %a : !tile.tensor<?xui8> to !tile.buffer<256xi32, fragment>
    tile.copy %a to %C[%off] : !tile.buffer<256xi32, fragment> to !tile.tensor<?xi32>
  }
}

// -----

// An atomic add: a relaxed device-scope atomicrmw per element in bounds.
// CHECK-LABEL: gpu.func @atomic_add
// CHECK: scf.if
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, f32
// CHECK-NOT: llvm.store
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @atomic_add(%A: !tile.tensor<?xf32>)
      grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<256xf32, fragment>
    %c256 = arith.constant 256 : index
    %off = arith.muli %bx, %c256 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<256xf32, fragment>
    tile.copy %a to %A[%off] {atomic_add} : !tile.buffer<256xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// sm_90a adds an aligned run of 4 f32 in one vector reduction when the
// whole run is in bounds, element by element otherwise.
// CHECK-LABEL: gpu.func @atomic_add_vector
// CHECK: scf.if
// CHECK: llvm.inline_asm has_side_effects {{.*}}"red.relaxed.gpu.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f"
// CHECK: } else {
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, f32
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @atomic_add_vector(%A: !tile.tensor<?xf32>)
      grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<256xf32, fragment>
    %c256 = arith.constant 256 : index
    %off = arith.muli %bx, %c256 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<256xf32, fragment>
    tile.copy %a to %A[%off] {atomic_add} : !tile.buffer<256xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// An index read from data: every thread loads the element under an
// unsigned bounds check (0 outside) and sign-extends it; the copy's offset
// is that index.
// CHECK-LABEL: gpu.func @read_index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: %[[PAGE:.*]] = scf.if %[[IN]] -> (i32) {
// CHECK:   llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : i32
// CHECK: arith.index_cast %[[PAGE]] : i32 to index
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @read_index(%T: !tile.tensor<?xi32>, %A: !tile.tensor<?x64xf32>, %B: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0, s1, s2] -> (s0)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<4x64xf32, fragment>
    %row = tile.read %T[%bx] : !tile.tensor<?xi32>
    %c0 = arith.constant 0 : index
    tile.copy %A[%row, %c0] to %a : !tile.tensor<?x64xf32> to !tile.buffer<4x64xf32, fragment>
    tile.copy %a to %B[%row, %c0] : !tile.buffer<4x64xf32, fragment> to !tile.tensor<?x64xf32>
  }
}

// -----

// tile.serial becomes scf.for over the count, tile.if an scf.if with both
// branches; an unrolled tile.serial emits its body per iteration.
// CHECK-LABEL: gpu.func @control_flow
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   scf.if %{{.*}} {
// CHECK:     memref.store %{{.*}} : memref<1xf32>
// CHECK:   } else {
// CHECK:     memref.store %{{.*}} : memref<1xf32>
// CHECK:   }
// CHECK: }
// CHECK: scf.if %{{.*}} {
// CHECK:   memref.store
// CHECK: }
// CHECK: scf.if %{{.*}} {
// CHECK:   memref.store
// CHECK: }
// CHECK: llvm.store
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @control_flow(%A: !tile.tensor<?xf32>)
      grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 32, vector = 1>} : !tile.buffer<32xf32, fragment>
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
        tile.clear %a : !tile.buffer<32xf32, fragment>
      }
    }
    %c0 = arith.constant 0 : index
    tile.copy %a to %A[%c0] : !tile.buffer<32xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// `until` clamps the bounded dimension: the copy's bounds test uses
// min(N, until), and no vector is assumed whole past it.
// CHECK-LABEL: gpu.func @until
// CHECK: %[[END:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi slt, %{{.*}}, %[[END]] : index
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @until(%A: !tile.tensor<?xf32>, %stop: index)
      grid(affine_map<()[s0] -> (s0 ceildiv 256)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<256xf32, fragment>
    %c256 = arith.constant 256 : index
    %off = arith.muli %bx, %c256 : index
    tile.copy %A[%off] to %a until %stop : !tile.tensor<?xf32> to !tile.buffer<256xf32, fragment>
    tile.copy %a to %A[%off] until %stop : !tile.buffer<256xf32, fragment> to !tile.tensor<?xf32>
  }
}

// -----

// An element atomic in a parallel body: an atomicrmw per element under an
// unsigned bounds check, its old value stored.
// CHECK-LABEL: gpu.func @element_atomic
// CHECK: arith.cmpi ult
// CHECK: scf.if %{{.*}} -> (i32) {
// CHECK:   llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @element_atomic(%H: !tile.tensor<?xi32>)
      grid(affine_map<()[s0] -> (1)>) threads(32) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 32, vector = 1>} : !tile.buffer<32xi32, fragment>
    tile.parallel (%i) in [32] attributes {distribution = #tile.distribution<threads = 32, vector = 1>} {
      %one = arith.constant 1 : i32
      %old = tile.atomic add %one, %H[%i] : i32, !tile.tensor<?xi32>
      tile.store %old, %a[%i] : !tile.buffer<32xi32, fragment>
    }
  }
}

// -----

// `until` on the columns of a whole 2-D tensor bounds them and keeps the
// row pitch: the address is row * N + col with N the tensor's own.
// CHECK-LABEL: gpu.func @until_columns
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[M:arg[0-9]+]]: i64, %[[N:arg[0-9]+]]: i64
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK: arith.minui %[[NI]], %{{.*}} : index
// CHECK: arith.muli %{{.*}}, %[[NI]] : index
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @until_columns(%A: !tile.tensor<?x?xf32>, %stop: index)
      grid(affine_map<()[s0, s1] -> (1)>) threads(32) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 32, vector = 1>} : !tile.buffer<4x32xf32, fragment>
    %c0 = arith.constant 0 : index
    tile.copy %A[%bx, %c0] to %a until %stop {until_axis = 1 : i64} : !tile.tensor<?x?xf32> to !tile.buffer<4x32xf32, fragment>
  }
}

// -----

// A loop every thread runs whole (over a replicated fragment): its atomics
// are thread 0's, or each would be added once per thread.
// CHECK-LABEL: gpu.func @replicated_atomic
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK: arith.cmpi ult
// CHECK: %[[GUARD:.*]] = arith.andi %[[ZERO]], %{{.*}} : i1
// CHECK: scf.if %[[GUARD]] -> (f32) {
// CHECK:   llvm.atomicrmw fadd
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @replicated_atomic(%H: !tile.tensor<?xf32>)
      grid(affine_map<()[s0] -> (1)>) threads(64) blocks(%bx) {
    %m = tile.alloc_fragment {distribution = #tile.distribution<threads = 1, vector = 1>, replicated} : !tile.buffer<4xf32, fragment>
    tile.parallel (%i) in [4] attributes {distribution = #tile.distribution<threads = 1, vector = 1>} {
      %x = tile.load %m[%i] : !tile.buffer<4xf32, fragment>
      %old = tile.atomic add %x, %H[%i] : f32, !tile.tensor<?xf32>
    }
  }
}

// -----

// Errors: the passes that must run first, and accesses outside tile.parallel.

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @no_distribution() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
    // expected-error @+1 {{'tile.alloc_fragment' op has no distribution; run tile-layout-inference first}}
    %a = tile.alloc_fragment : !tile.buffer<32xf32, fragment>
  }
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @no_offset() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
    // expected-error @+1 {{'tile.alloc_shared' op has no offset; run tile-plan-shared-memory first}}
    %s = tile.alloc_shared : !tile.buffer<32xf32, shared>
  }
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @parallel_no_distribution() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
    // expected-error @+1 {{'tile.parallel' op has no distribution; run tile-layout-inference first}}
    tile.parallel (%i) in [32] {
    }
  }
}

// -----

module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @load_outside() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx)
      attributes {tile.shared_memory_bytes = 128 : i64} {
    %s = tile.alloc_shared {offset = 0} : !tile.buffer<32xf32, shared>
    // expected-error @+1 {{'tile.load' op outside tile.parallel is not supported; read and write buffer elements inside a tile.parallel body}}
    %x = tile.load %s[%bx] : !tile.buffer<32xf32, shared>
  }
}

// -----

module {
  // expected-error @+1 {{no compilation target}}
  tile.kernel @no_target() grid(affine_map<()[] -> (1)>) threads(32) blocks(%bx) {
  }
}

// -----

// A tile.parallel the lowering would unroll into more than 2048 elements a
// thread (here 8 x 268435455, just under the verifier's 2^31 iterations) is
// an error, not a compile that runs out of memory.
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @unroll_limit() grid(affine_map<()[] -> (1)>) threads(64) blocks(%bx) {
    %s = tile.alloc_shared {name = "s", offset = 0} : !tile.buffer<16x16xf32, shared>
    // expected-error @+1 {{'tile.parallel' op puts 33554432 elements of its iteration space on each of the kernel's 64 threads, over the limit of 2048 (the lowering unrolls them per thread): use a smaller tile or more threads}}
    tile.parallel (%i, %j) in [8, 268435455] attributes {distribution = #tile.distribution<threads = 64, vector = 1>} {
      %x = tile.load %s[%i, %i] : !tile.buffer<16x16xf32, shared>
      tile.store %x, %s[%i, %i] : !tile.buffer<16x16xf32, shared>
    }
  }
}

// -----

// A tile.var is a one-element array at the function's entry (where LLVM
// keeps it in a register), stored where it is declared and assigned and
// loaded where it is read; tile.require generates no code of its own.
// CHECK-LABEL: gpu.func @variables
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<1xindex>
// CHECK-NOT: tile.require
// CHECK: memref.store %{{.*}}, %[[SLOT]][%{{.*}}] : memref<1xindex>
// CHECK: scf.for
// CHECK:   %[[ROW:.*]] = memref.load %[[SLOT]][%{{.*}}] : memref<1xindex>
// CHECK:   arith.addi %[[ROW]], %{{.*}} : index
// CHECK:   %[[NEXT:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK:   memref.store %[[NEXT]], %[[SLOT]][%{{.*}}] : memref<1xindex>
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @variables(%T: !tile.tensor<?xi32>, %A: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0, s1] -> (1)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<4x64xf32, fragment>
    %n = tile.dim %T[0] : !tile.tensor<?xi32>
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %rem = arith.remui %n, %c4 : index
    %whole = arith.cmpi eq, %rem, %c0 : index
    tile.require %whole
    %row = tile.var %c0 {name = "row"} : !tile.var<index>
    tile.serial %i = 0 to %n {
      %r = tile.var_get %row : !tile.var<index>
      tile.clear %a : !tile.buffer<4x64xf32, fragment>
      tile.copy %a to %A[%r, %c0] : !tile.buffer<4x64xf32, fragment> to !tile.tensor<?x64xf32>
      %len = tile.read %T[%i] : !tile.tensor<?xi32>
      %next = arith.addi %r, %len : index
      tile.var_set %row, %next : !tile.var<index>
    }
  }
}

// -----

// Grid dependency control on sm_90a: the wait and the early launch become
// griddepcontrol, and the kernel is marked for a launch with programmatic
// stream serialization.
// CHECK-LABEL: gpu.func @combine(
// CHECK-SAME: tessera.waits_for_prior_kernels
// CHECK: nvvm.griddepcontrol wait
// CHECK: llvm.load
// CHECK-LABEL: gpu.func @split(
// CHECK-NOT: tessera.waits_for_prior_kernels
// CHECK: nvvm.griddepcontrol launch_dependents
module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @combine(%P: !tile.tensor<?x64xi32>)
      grid(affine_map<()[s0] -> (s0)>) threads(64) blocks(%bx) {
    tile.wait_prior_kernels
    %c0 = arith.constant 0 : index
    %v = tile.read %P[%bx, %c0] : !tile.tensor<?x64xi32>
  }
  tile.kernel @split(%P: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0] -> (s0)>) threads(64) blocks(%bx) {
    tile.launch_dependents
  }
}

// -----

// Without grid dependency control (sm_80) both generate nothing and the
// kernel launches as any other.
// CHECK-LABEL: gpu.func @combine_sm80(
// CHECK-NOT: tessera.waits_for_prior_kernels
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @combine_sm80(%P: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0] -> (s0)>) threads(64) blocks(%bx) {
    tile.launch_dependents
    tile.wait_prior_kernels
  }
}

// -----

// tile.view: the address is one i64 read (0 outside the pointer tensor),
// cast to a global pointer; its dynamic sizes are clamped at 0; `align`
// is checked once (a trap where the address, the innermost size or a
// stride has a low bit set), and then the copies move 16-byte vectors
// through explicit strides.
// CHECK-LABEL: gpu.func @view_copy
// CHECK: scf.if %{{.*}} -> (i32)
// CHECK: %[[ADDR:.*]] = scf.if %{{.*}} -> (i64) {
// CHECK:   llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr<1>
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %{{.*}} : i64
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[LOW]], %{{.*}} : i64
// CHECK: scf.if %[[BAD]] {
// CHECK:   llvm.intr.trap
// CHECK: llvm.getelementptr inbounds %[[PTR]]
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @view_copy(%P: !tile.tensor<?xi64>, %S: !tile.tensor<?xi32>, %B: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0, s1, s2] -> (s0)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<4x64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %rows = tile.read %S[%bx] : !tile.tensor<?xi32>
    %A = tile.view %P[%bx] sizes(%rows, %c64) {align = 16} : !tile.tensor<?xi64> to !tile.tensor<?x?xf32>
    tile.copy %A[%c0, %c0] to %a : !tile.tensor<?x?xf32> to !tile.buffer<4x64xf32, fragment>
    tile.copy %a to %B[%bx, %c0] : !tile.buffer<4x64xf32, fragment> to !tile.tensor<?x64xf32>
  }
}

// -----

// Without `align`, a view promises one element: no check, scalar accesses.
// CHECK-LABEL: gpu.func @view_unaligned
// CHECK: llvm.inttoptr
// CHECK-NOT: llvm.intr.trap
// CHECK-NOT: -> vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: -> vector<4xf32>
// CHECK: gpu.return
module attributes {tile.target = #tile.target<"sm_80">} {
  tile.kernel @view_unaligned(%P: !tile.tensor<?xi64>, %B: !tile.tensor<?x64xf32>)
      grid(affine_map<()[s0, s1] -> (s0)>) threads(64) blocks(%bx) {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 64, vector = 4>} : !tile.buffer<4x64xf32, fragment>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %A = tile.view %P[%bx] strides(%c64) : !tile.tensor<?xi64> to !tile.tensor<4x64xf32>
    tile.copy %A[%c0, %c0] to %a : !tile.tensor<4x64xf32> to !tile.buffer<4x64xf32, fragment>
    tile.copy %a to %B[%bx, %c0] : !tile.buffer<4x64xf32, fragment> to !tile.tensor<?x64xf32>
  }
}
