// The data types' MMA atoms, chosen by each backend's ordered preference
// list from IR input (Inputs/gemm-tn.mlir: A M x K, B N x K, C of the
// accumulator type), and the remark when a K-major-only atom is passed over.
// sm80 mma.sync: s8/u8 m16n8k32, TF32 m16n8k8, f16 accumulators, f64 m8n8k4.
// RUN: sed 's/ELT/i8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=S8
// RUN: sed 's/ELT/ui8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=U8
// RUN: sed 's/ELT/f32/g; s/ACC/f32/g; s/PREC/precision(tf32)/' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=TF32
// RUN: sed 's/ELT/f16/g; s/ACC/f16/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=F16ACC
// RUN: sed 's/ELT/f64/g; s/ACC/f64/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=F64
// RUN: sed 's/ELT/f64/g; s/ACC/f64/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=tile | FileCheck %s --check-prefix=F64TILE
// f32 without precision(tf32) stays exact (SIMT, no remark); FP8 has no
// mma.sync atom here (SIMT, no remark: the type rules the atoms out).
// RUN: sed 's/ELT/f32/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx 2>&1 | FileCheck %s --check-prefix=EXACT
// RUN: sed 's/ELT/f8E4M3FN/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=ptx 2>&1 | FileCheck %s --check-prefix=FP8SIMT
// A TF32 gemm with B stored K x N: the K-major atom is passed over, with a remark.
// RUN: sed 's/ELT/f32/g; s/ACC/f32/g; s/PREC/precision(tf32)/; s/ {transpose_b}//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_80 --emit=tile 2>&1 | FileCheck %s --check-prefix=TF32NN
// sm_90a wgmma: FP8 k32 (f32 and f16 accumulators), s8/u8 k32, TF32 k8, f16 accumulators.
// RUN: sed 's/ELT/f8E4M3FN/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=E4M3
// RUN: sed 's/ELT/f8E5M2/g; s/ACC/f16/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=E5M2
// RUN: sed 's/ELT/i8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WS8
// RUN: sed 's/ELT/ui8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WU8
// RUN: sed 's/ELT/f32/g; s/ACC/f32/g; s/PREC/precision(tf32)/' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WTF32
// RUN: sed 's/ELT/f16/g; s/ACC/f16/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=WF16ACC
// An FP8 gemm with B stored K x N: wgmma is passed over, with a remark.
// RUN: sed 's/ELT/f8E4M3FN/g; s/ACC/f32/g; s/PREC//; s/ {transpose_b}//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_90a --emit=tile 2>&1 | FileCheck %s --check-prefix=FP8NN
// sm_89 (the sm80 backend): FP8 mma.sync m16n8k32 (inline PTX, PTX ISA 8.4); sm_86 has none.
// RUN: sed 's/ELT/f8E4M3FN/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_89 --emit=ptx | FileCheck %s --check-prefix=SM89
// RUN: sed 's/ELT/f8E5M2/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_89 --emit=ptx | FileCheck %s --check-prefix=SM89E5M2
// RUN: sed 's/ELT/f8E4M3FN/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_86 --emit=ptx | FileCheck %s --check-prefix=FP8SIMT
// sm70: f16 accumulators on m8n8k4's .f16 C/D form, the fragment's
// registers exchanged within each quad (one butterfly stage, two XOR
// shuffles per 8 x 8 block) before the MMAs and after them; the f32 atom,
// named, still sums f16 accumulators in f32; the f16 one takes f16 only.
// RUN: sed 's/ELT/f16/g; s/ACC/f16/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_70 --emit=tile | FileCheck %s --check-prefix=SM70F16ACC
// RUN: sed 's/ELT/f16/g; s/ACC/f16/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_70 --emit=ptx | FileCheck %s --check-prefix=SM70F16PTX
// RUN: sed 's/ELT/f16/g; s/ACC/f16/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_70 --emit=tile | %tessera-opt --tile-lower-to-gpu | FileCheck %s --check-prefix=SM70F16OPT
// RUN: sed 's/ELT/f16/g; s/ACC/f16/g; s/PREC/{atom = "SM70_8x8x4_F32F16F16F32"}/; s/ {transpose_b}//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_70 --emit=ptx | FileCheck %s --check-prefix=SM70F32NAMED
// RUN: sed 's/ELT/f16/g; s/ACC/f32/g; s/PREC/{atom = "SM70_8x8x4_F16F16F16F16"}/; s/ {transpose_b}//' %S/Inputs/gemm-tn.mlir | not %tessera-compile - --target=sm_70 --emit=tile 2>&1 | FileCheck %s --check-prefix=SM70F16F32
// sm_60: every type through SIMT FMA (GP100 has no dp4a); naming dp4a there is an error.
// RUN: sed 's/ELT/ui8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_60 --emit=ptx | FileCheck %s --check-prefix=SM60U8
// RUN: sed 's/ELT/i8/g; s/ACC/i32/g; s/PREC/{atom = "SM61_DP4A_1x1x4_S32S8S8S32"}/; s/ {transpose_b}//' %S/Inputs/gemm-tn.mlir | not %tessera-compile - --target=sm_60 --emit=tile 2>&1 | FileCheck %s --check-prefix=SM60DP4A
// sm_61 (the sm60 backend): i8/u8 with i32 accumulators through dp4a, four
// bytes along K per 32-bit register: one shared load per operand word where
// K is contiguous (A M x K, B N x K), byte loads packed otherwise (B K x N).
// RUN: sed 's/ELT/i8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_61 --emit=ptx | FileCheck %s --check-prefix=SM61S8
// RUN: sed 's/ELT/ui8/g; s/ACC/i32/g; s/PREC//; s/ {transpose_b}//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_61 --emit=ptx | FileCheck %s --check-prefix=SM61U8NN
// RUN: sed 's/ELT/ui8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_61 --emit=tile | FileCheck %s --check-prefix=SM61U8TILE
// The typed op, from the planned tile IR through tessera-opt's tile-lower-to-gpu.
// RUN: sed 's/ELT/ui8/g; s/ACC/i32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_61 --emit=tile | %tessera-opt --tile-lower-to-gpu | FileCheck %s --check-prefix=SM61OPT
// K not a multiple of 4: SIMT, with a remark; f16 stays SIMT without one.
// RUN: sed 's/ELT/i8/g; s/ACC/i32/g; s/PREC//; s/64x64xi8/64x62xi8/g' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_61 --emit=tile 2>&1 | FileCheck %s --check-prefix=SM61ODDK
// RUN: sed 's/ELT/f16/g; s/ACC/f32/g; s/PREC//' %S/Inputs/gemm-tn.mlir | %tessera-compile - --target=sm_61 --emit=ptx 2>&1 | FileCheck %s --check-prefix=SM61F16

// S8: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// S8: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// U8: mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32
// TF32: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// F16ACC: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16
// F64: mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64
// F64-NOT: fma.rn
// F64TILE: tile.gemm {{.*}} {atom = "SM80_8x8x4_F64F64F64F64_TN", transpose_b}
// EXACT-NOT: remark
// EXACT: fma.rn.f32
// EXACT-NOT: mma.sync
// FP8SIMT-NOT: remark
// FP8SIMT: fma.rn.f32
// TF32NN: remark: using SIMT_1x1x1_F32F32F32F32 instead of SM80_16x8x8_F32TF32TF32F32_TN: SM80_16x8x8_F32TF32TF32F32_TN reads tf32 operands K-major only: A as M x K, B as N x K (transpose_b)
// E4M3: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
// E5M2: wgmma.mma_async.sync.aligned.m64n64k32.f16.e5m2.e5m2
// WS8: wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {{.*}}, p;
// WU8: wgmma.mma_async.sync.aligned.m64n64k32.s32.u8.u8
// WTF32: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{.*}}, p, 1, 1;
// WF16ACC: wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16
// FP8NN: remark: using SIMT_1x1x1_F32F32F32F32 instead of SM90_64xNx32_F32E4M3E4M3F32_SS: SM90_64xNx32_F32E4M3E4M3F32_SS reads e4m3 operands K-major only: A as M x K, B as N x K (transpose_b)
// SM89: .version 8.4
// SM89: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM89: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
// SM89E5M2: mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32
// SM70F16ACC: tile.gemm {{.*}} {atom = "SM70_8x8x4_F16F16F16F16", transpose_b}
// SM70F16PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// SM70F16PTX: mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16
// SM70F16PTX-NOT: cvt.f32.f16
// SM70F16PTX-NOT: .f32.f16.f16.f32
// SM70F16PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// SM70F16OPT: gpu.shuffle xor {{.*}} : i32
// SM70F16OPT: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 8, n = 8, k = 4>} : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>
// SM70F32NAMED: mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32
// SM70F16F32: error: 'tile.gemm' op atom 'SM70_8x8x4_F16F16F16F16' cannot be used on sm_70: SM70_8x8x4_F16F16F16F16 does not accumulate in f32
// SM60U8: ld.shared.b8
// SM60U8: mul.wide.u16
// SM60U8-NOT: dp4a
// SM60DP4A: error: 'tile.gemm' op atom 'SM61_DP4A_1x1x4_S32S8S8S32' cannot be used on sm_60: the backend has no such atom
// SM61S8: .target sm_61
// SM61S8-NOT: ld.shared.{{[su]}}8
// SM61S8: ld.shared.b32
// SM61S8: dp4a.s32.s32
// SM61S8-NOT: mul.wide
// SM61U8NN: dp4a.u32.u32
// SM61U8NN-NOT: mul.wide
// SM61U8TILE: tile.gemm {{.*}} {atom = "SM61_DP4A_1x1x4_S32U8U8S32", transpose_b}
// SM61ODDK: remark: using SIMT_1x1x1_F32F32F32F32 instead of SM61_DP4A_1x1x4_S32S8S8S32: SM61_DP4A_1x1x4_S32S8S8S32 needs M, N, K multiples of 1, 1, 4 (tile is 64x64x62)
// SM61ODDK: tile.gemm {{.*}} {atom = "SIMT_1x1x1_F32F32F32F32", transpose_b}
// SM61F16-NOT: remark
// SM61F16-NOT: dp4a
// SM61F16: fma.rn.f32
// SM61OPT: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<4xi8>
// SM61OPT: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<4xi8>
// SM61OPT: nvvm.dot.accumulate.4way {{.*}} <unsigned>, {{.*}} <unsigned>, {{.*}} : vector<4xi8>, vector<4xi8>
