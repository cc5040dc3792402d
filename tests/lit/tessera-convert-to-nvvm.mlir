// tessera-convert-to-nvvm: the gpu.module's kernels, after scf-to-cf, become
// LLVM and NVVM dialect functions: gpu ops become NVVM special registers,
// memref allocas and accesses LLVM allocas and GEPs, math.tanh a libdevice
// call; identical blocks (the two arms of a bounds check) are merged first,
// as upstream's convert-gpu-to-nvvm does, and nothing else is folded. A
// per-thread array (a static alloca accessed at constant indices only) is an
// LLVM array alloca and each access a GEP to its row-major element; other
// accesses to a memref of static shape and identity layout are the aligned
// pointer plus the row-major index (no-wrap arithmetic, an inbounds GEP).
// Scalar float arithmetic keeps its fast-math flags.
// RUN: %tessera-opt %s --pass-pipeline='builtin.module(gpu.module(tessera-convert-to-nvvm))' | FileCheck %s

// CHECK-LABEL: gpu.module @tessera_kernels
// CHECK: llvm.func @__nv_tanhf(f32) -> f32
// CHECK: llvm.func @k(%[[OUT:.*]]: !llvm.ptr<1>, %[[N:.*]]: i64) attributes {gpu.kernel, nvvm.kernel}
// CHECK-DAG: %[[C0:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK-DAG: %[[C11:.*]] = llvm.mlir.constant(11 : index) : i64
// CHECK: %[[PAIR:.*]] = llvm.alloca %{{.*}} x !llvm.array<16 x f32> : (i64) -> !llvm.ptr
// CHECK: %[[REGS:.*]] = llvm.alloca %{{.*}} x !llvm.array<4 x f32> : (i64) -> !llvm.ptr
// CHECK: %[[TID32:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[TID:.*]] = llvm.sext %[[TID32]] : i32 to i64
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK: %[[IN:.*]] = llvm.icmp "ult" %[[TID]], %[[N]] : i64
// CHECK: llvm.cond_br %[[IN]], ^[[BOTH:bb[0-9]+]], ^[[BOTH]]
// CHECK: ^[[BOTH]]:
// CHECK: %[[R0:.*]] = llvm.getelementptr inbounds|nuw %[[REGS]][%[[C0]], %[[C0]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<4 x f32>
// CHECK: llvm.store %[[ONE]], %[[R0]] : f32, !llvm.ptr
// CHECK-NOT: llvm.store %[[ONE]]
// CHECK: %[[V:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[T:.*]] = llvm.call @__nv_tanhf(%[[V]]) : (f32) -> f32
// CHECK: %[[P:.*]] = llvm.getelementptr %[[OUT]][%[[TID]]]
// CHECK: llvm.store %[[T]], %[[P]] : f32, !llvm.ptr<1>
// CHECK: %[[TILE:.*]] = llvm.alloca %{{.*}} x f32 : (i64) -> !llvm.ptr
// CHECK: %[[BASE:.*]] = llvm.extractvalue %{{.*}}[1]
// CHECK: %[[C8:.*]] = llvm.mlir.constant(8 : index) : i64
// CHECK: %[[ROW:.*]] = llvm.mul %[[TID]], %[[C8]] overflow<nsw, nuw> : i64
// CHECK: %[[IDX:.*]] = llvm.add %[[ROW]], %[[TID]] overflow<nsw, nuw> : i64
// CHECK: %[[Q:.*]] = llvm.getelementptr inbounds|nuw %[[BASE]][%[[IDX]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.load %[[Q]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: %[[P11:.*]] = llvm.getelementptr inbounds|nuw %[[PAIR]][%[[C0]], %[[C11]]]
// CHECK: llvm.load %[[P11]] : !llvm.ptr -> f32
// CHECK: %[[M:.*]] = llvm.fmul %[[F:.*]], %[[F]] {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK: %[[A:.*]] = llvm.fadd %[[M]], %[[F]] : f32
// CHECK: %[[H:.*]] = llvm.fptrunc %[[A]] : f32 to f16
// CHECK: %[[X:.*]] = llvm.fpext %[[H]] : f16 to f32
// CHECK: %[[S:.*]] = llvm.select %[[IN]], %[[X]], %[[M]] : i1, f32
// CHECK: llvm.store %[[S]]
// CHECK-NOT: memref.
// CHECK-NOT: gpu.thread_id
module attributes {gpu.container_module} {
  gpu.module @tessera_kernels {
    gpu.func @k(%out: !llvm.ptr<1>, %n: i64) kernel {
      %pair = memref.alloca() : memref<2x8xf32>
      %regs = memref.alloca() : memref<4xf32>
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      %bound = arith.index_cast %n : i64 to index
      %in = arith.cmpi ult, %tid, %bound : index
      cf.cond_br %in, ^then, ^else
    ^then:
      memref.store %one, %regs[%c0] : memref<4xf32>
      cf.br ^join
    ^else:
      memref.store %one, %regs[%c0] : memref<4xf32>
      cf.br ^join
    ^join:
      %v = memref.load %regs[%c0] : memref<4xf32>
      %t = math.tanh %v : f32
      %i = arith.index_cast %tid : index to i64
      %p = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
      llvm.store %t, %p : f32, !llvm.ptr<1>
      %tile = memref.alloca() : memref<4x8xf32>
      %e = memref.load %tile[%tid, %tid] {alignment = 4 : i64} : memref<4x8xf32>
      llvm.store %e, %p : f32, !llvm.ptr<1>
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %f = memref.load %pair[%c1, %c3] : memref<2x8xf32>
      llvm.store %f, %p : f32, !llvm.ptr<1>
      %m = arith.mulf %f, %f fastmath<contract> : f32
      %a = arith.addf %m, %f : f32
      %h = arith.truncf %a : f32 to f16
      %x = arith.extf %h : f16 to f32
      %s = arith.select %in, %x, %m : f32
      llvm.store %s, %p : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
