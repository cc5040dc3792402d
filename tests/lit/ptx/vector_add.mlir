// Vector add compiled to PTX for every built-in backend: the target line,
// 16-byte global vector accesses for f32 and the block size bound.
// RUN: %tessera-compile %s --target=sm_60 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM60
// RUN: %tessera-compile %s --target=sm_70 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM70
// RUN: %tessera-compile %s --target=sm_80 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: %tessera-compile %s --target=sm_90a --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM90A
// The module's own tile.target (sm_86) when --target is absent; -o writes a file.
// RUN: %tessera-compile %s -o %t.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM86 < %t.ptx

// SM60: .target sm_60
// SM70: .target sm_70
// SM80: .target sm_80
// SM86: .target sm_86
// SM90A: .target sm_90a
// CHECK: .address_size 64
// CHECK: .visible .entry vector_add(
// CHECK-NEXT: .param .u64 .ptr .global .align 16 vector_add_param_0,
// CHECK-NEXT: .param .u64 vector_add_param_1,
// CHECK: .maxntid 256, 1, 1
// CHECK-DAG: ld.global.v4.b32
// CHECK-DAG: st.global.v4.b32
// CHECK: ret;

module attributes {tile.target = #tile.target<"sm_86">} {
  tile.kernel @vector_add(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>, %C: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1, s2] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx)
      attributes {arg_names = ["A", "B", "C"], dim_groups = {N = array<i64: 0, 1, 2>}} {
    %a = tile.alloc_fragment {name = "a"} : !tile.buffer<1024xf32, fragment>
    %b = tile.alloc_fragment {name = "b"} : !tile.buffer<1024xf32, fragment>
    %c1024 = arith.constant 1024 : index
    %off = arith.muli %bx, %c1024 : index
    tile.copy %A[%off] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.copy %B[%off] to %b : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] {
      %x = tile.load %a[%i] : !tile.buffer<1024xf32, fragment>
      %y = tile.load %b[%i] : !tile.buffer<1024xf32, fragment>
      %s = arith.addf %x, %y : f32
      tile.store %s, %a[%i] : !tile.buffer<1024xf32, fragment>
    }
    tile.copy %a to %C[%off] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}
