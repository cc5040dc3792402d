// A copy staged through shared memory, in f16: 8 halves per 16-byte global
// access, the dynamic shared memory symbol and barriers, on each target.
// RUN: %tessera-compile %s --target=sm_60 | FileCheck %s --check-prefixes=CHECK,SM60
// RUN: %tessera-compile %s --target=sm_70 | FileCheck %s --check-prefixes=CHECK,SM70
// RUN: %tessera-compile %s --target=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: %tessera-compile %s --target=sm_90a | FileCheck %s --check-prefixes=CHECK,SM90A

// SM60: .target sm_60
// SM70: .target sm_70
// SM80: .target sm_80
// SM90A: .target sm_90a
// CHECK: .extern .shared .align 1024 .b8 __dynamic_shmem__0[]
// CHECK: .visible .entry stage(
// CHECK: .maxntid 128, 1, 1
// CHECK: bar.sync 0;
// CHECK: ld.global.v4.b32
// CHECK: st.shared.v4.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: bar.sync
// CHECK: ret;

module {
  tile.kernel @stage(%X: !tile.tensor<?x64xf16>, %Y: !tile.tensor<?x64xf16>)
      grid(affine_map<()[s0, s1] -> (s0 ceildiv 32)>) threads(128) blocks(%bx) {
    %s = tile.alloc_shared {name = "s"} : !tile.buffer<32x64xf16, shared>
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %row = arith.muli %bx, %c32 : index
    tile.copy %X[%row, %c0] to %s : !tile.tensor<?x64xf16> to !tile.buffer<32x64xf16, shared>
    tile.copy %s to %Y[%row, %c0] : !tile.buffer<32x64xf16, shared> to !tile.tensor<?x64xf16>
  }
}
