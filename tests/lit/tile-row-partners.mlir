// Row partners: the accumulator a row reduction reads (S) and the one its
// row values rescale (O) split their rows over warps alike, so the row
// vectors hold just each thread's rows. Eight warps over 64 rows: alone S
// would take 2 x 4 warps and O 1 x 8, and m, mx and l would be held whole
// by every thread (192 registers: over the limit); together both take
// 2 x 4 (the split both fit with the squarest warp tiles of O, the larger).
// RUN: %tessera-compile %S/Inputs/attention-rows-wide.mlir --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT80
// RUN: %tessera-compile %S/Inputs/attention-rows-wide.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX80
// sm_90a: 64 rows on two warpgroups is not a wgmma tile; mma.sync, the same split.
// RUN: %tessera-compile %S/Inputs/attention-rows-wide.mlir --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT90
// sm_70 (m8n8k4 quadpairs): the same split of its own steps.
// RUN: %tessera-compile %S/Inputs/attention-rows-wide.mlir --target=sm_70 --emit=tile 2>&1 | FileCheck %s --check-prefix=LAYOUT70
// The same loop with four warps: whole rows fit (4 x 1) and are kept.
// RUN: sed -e 's/threads(256)/threads(128)/' %S/Inputs/attention-rows-wide.mlir | %tessera-compile - --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=FOUR

// LAYOUT80-NOT: held whole
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "s"} : <64x64xf32, fragment>
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "o"} : <64x256xf32, fragment>
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "m", row_slice} : <64xf32, fragment>
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "mx", row_slice} : <64xf32, fragment>
// LAYOUT80-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "l", row_slice} : <64xf32, fragment>
// PTX80: mma.sync.aligned.m16n8k16
// PTX80-NOT: .local

// LAYOUT90-NOT: held whole
// LAYOUT90-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "o"} : <64x256xf32, fragment>
// LAYOUT90-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 2, warps_n = 4>, name = "m", row_slice} : <64xf32, fragment>

// LAYOUT70-NOT: held whole
// LAYOUT70-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 16, warps_m = 2, warps_n = 4, {{.*}}>, name = "o"} : <64x256xf32, fragment>
// LAYOUT70-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 16, warps_m = 2, warps_n = 4, {{.*}}>, name = "l", row_slice} : <64xf32, fragment>

// FOUR-NOT: held whole
// FOUR-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "o"} : <64x256xf32, fragment>
// FOUR-DAG: tile.alloc_fragment {mma_layout = #tile.mma_layout<m = 16, n = 8, warps_m = 4, warps_n = 1>, name = "m", row_slice} : <64xf32, fragment>
