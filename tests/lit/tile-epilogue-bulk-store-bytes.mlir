// tile-lower-to-gpu, the bulk-store epilogue of persistent sm_90a GEMMs
// with 1- and 4-byte outputs (tile-epilogue-bulk-store.mlir has 16-bit).
// For FP8 the accumulator scaled and converted by a tile.parallel into an e4m3
// fragment, which is staged anyway (only 16-bit copies keep the direct
// stores after epilogue math): two 128-column panels of 128-byte rows; the
// quad's lanes exchange their pairs (shuffles, byte permutes) so that each
// lane writes 16 contiguous bytes, one st.shared.v4 per 64 columns of its
// row. The block's last tile stores directly, 16 bytes per lane as well.
// RUN: sed 's/ELT/f8E4M3FN/g; s/OUT/f8E4M3FN/g; s/BK/128/g; s/PREC//' %S/Inputs/gemm-persistent-scaled.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=FP8
// RUN: sed 's/ELT/f8E4M3FN/g; s/OUT/f8E4M3FN/g; s/BK/128/g; s/PREC//' %S/Inputs/gemm-persistent-scaled.mlir | %tessera-compile - --target=sm_90a --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: %tessera-run --bundle=%t.pb --list | FileCheck %s --check-prefix=FP8LAUNCH
// TF32 with f32 output, the accumulator copied as it leaves the loop: eight
// 32-column panels, each lane's pair stored as it is (st.shared.v2).
// RUN: sed 's/ELT/f32/g; s/OUT/f32/g; s/BK/32/g; s/PREC/precision(tf32)/; /%%out = /d; /^    tile.parallel/,/^    }$/d; s/tile.copy %%out/tile.copy %%acc/' %S/Inputs/gemm-persistent-scaled.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=TF32
// RUN: sed 's/ELT/f32/g; s/OUT/f32/g; s/BK/32/g; s/PREC/precision(tf32)/; /%%out = /d; /^    tile.parallel/,/^    }$/d; s/tile.copy %%out/tile.copy %%acc/' %S/Inputs/gemm-persistent-scaled.mlir | %tessera-compile - --target=sm_90a --emit=ptx -o %t32.ptx --bundle=%t32.pb
// RUN: %tessera-run --bundle=%t32.pb --list | FileCheck %s --check-prefix=TF32LAUNCH
// Elsewhere (no bulk tensor copies) the e4m3 fragment's direct stores are
// wide too.
// RUN: sed 's/ELT/f8E4M3FN/g; s/OUT/f8E4M3FN/g; s/BK/128/g; s/PREC//; s/sm_90a/sm_89/' %S/Inputs/gemm-persistent-scaled.mlir | %tessera-compile - --target=sm_89 --emit=ptx | FileCheck %s --check-prefix=DIRECT

// The scaling's conversion to e4m3: one cvt.rn.satfinite per element (sm_89+
// caps.hasFp8Convert), not the integer encoding.
// FP8: .entry gemm(
// FP8: wgmma.wait_group.sync.aligned 0;
// FP8-COUNT-128: cvt.rn.satfinite.e4m3x2.f32
// FP8: cp.async.bulk.wait_group.read 1;
// FP8: bar.sync 1, 256;
// FP8: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// FP8: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// FP8: prmt.b32 {{.*}}, 0x5410U;
// FP8: prmt.b32 {{.*}}, 0x7632U;
// FP8: st.shared.v4.b32
// FP8: st.shared.v4.b32
// FP8: st.shared.v4.b32
// FP8: st.shared.v4.b32
// FP8-NOT: st.shared
// FP8: fence.proxy.async.shared::cta;
// FP8: bar.sync 1, 256;
// FP8: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// FP8-NEXT: // end inline asm
// FP8-NEXT: cp.async.bulk.commit_group;
// FP8: cp.async.bulk.wait_group.read 1;
// FP8-COUNT-4: st.shared.v4.b32
// FP8-NOT: st.shared
// FP8: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// FP8-NOT: cp.async.bulk.tensor.2d.global
// The last tile: 16 bytes per lane, 8 per thread.
// FP8-COUNT-8: st.global.v4.b32
// FP8-NOT: st.global.b8
// FP8-NOT: st.global.b16
// FP8: cp.async.bulk.wait_group 0;
// FP8: ret;

// 4 stages of 48 KiB, the mbarriers, then (1024-aligned) two 16 KiB panels;
// D's tensor map: 128 rows of 128 one-byte columns.
// FP8LAUNCH: smem 230400 B target sm_90a, persistent, TMA arg0[128, 128] swizzle 128, TMA arg1[256, 128] swizzle 128, TMA arg3[128, 128] swizzle 128

// TF32: .entry gemm(
// TF32: cp.async.bulk.wait_group.read 1;
// TF32: bar.sync 1, 256;
// TF32-COUNT-8: st.shared.v2.b32
// TF32-NOT: st.shared
// TF32: fence.proxy.async.shared::cta;
// TF32: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// TF32-COUNT-7: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// TF32-NOT: cp.async.bulk.tensor.2d.global
// TF32: cp.async.bulk.wait_group 0;
// TF32: ret;
// TF32LAUNCH: smem 230400 B target sm_90a, persistent, TMA arg0[128, 32] swizzle 128, TMA arg1[256, 32] swizzle 128, TMA arg3[128, 32] swizzle 128

// DIRECT-NOT: bulk_group
// DIRECT: st.global.v4.b32
// DIRECT-NOT: st.global.b16
// DIRECT-NOT: st.global.b8
// DIRECT: ret;
