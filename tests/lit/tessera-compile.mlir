// tessera-compile: every stage it prints, and its errors. Bad input gets a
// located diagnostic and exit code 1, never a crash.

// Stages.
// RUN: %tessera-compile %s --emit=tile | FileCheck %s --check-prefix=TILE
// RUN: %tessera-compile %s --emit=gpu | FileCheck %s --check-prefix=GPU
// RUN: %tessera-compile %s --emit=lowered | FileCheck %s --check-prefix=LOWERED
// RUN: %tessera-compile %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: %tessera-compile %s --emit=ptx | FileCheck %s --check-prefix=PTX
// The suite sets TESSERA_VERIFY_EACH=1; both ways of verifying give the PTX.
// RUN: env -u TESSERA_VERIFY_EACH %tessera-compile %s --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: env -u TESSERA_VERIFY_EACH %tessera-compile %s --verify-each --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: %tessera-compile %s --target=sm_70 --emit=llvm | FileCheck %s --check-prefix=LLVM70
// Another LLVM pipeline in place of the kernel pipeline (opt's -passes syntax).
// RUN: %tessera-compile %s --llvm-pipeline='function(instcombine)' --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: not %tessera-compile %s --llvm-pipeline=bogus 2>&1 | FileCheck %s --check-prefix=PIPELINE \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// PIPELINE: error: bad kernel pass pipeline: unknown pass name 'bogus'

// Errors: the message, and no crash report anywhere in the output.
// RUN: not %tessera-compile %s --target=sm_120 2>&1 | FileCheck %s --check-prefix=UNSERVED \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %s --target=sm_75 2>&1 | FileCheck %s --check-prefix=TURING \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %s --target=foo 2>&1 | FileCheck %s --check-prefix=MALFORMED \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %s --target=sm_9 2>&1 | FileCheck %s --check-prefix=SHORT \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %s --emit=bogus 2>&1 | FileCheck %s --check-prefix=EMIT \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %S/Inputs/parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %S/Inputs/invalid-kernel.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %S/Inputs/too-much-shared.mlir 2>&1 | FileCheck %s --check-prefix=NOTARGET \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: not %tessera-compile %S/Inputs/too-much-shared.mlir --target=sm_60 2>&1 | FileCheck %s --check-prefix=SHARED \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: %tessera-compile %S/Inputs/too-much-shared.mlir --target=sm_80 | FileCheck %s --check-prefix=SHARED80
// An empty file: the error points at its first line (the parser's module has none).
// RUN: printf '' > %t.empty.mlir
// RUN: not %tessera-compile %t.empty.mlir --target=sm_80 2>&1 | FileCheck %s --check-prefix=EMPTY \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// EMPTY: empty.mlir:1:1: error: the module holds no tile.kernel

// Flags without a value, input past the limits, outputs that cannot be
// written: one line each, exit 1.
// RUN: not %tessera-compile %s --target= 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not %tessera-compile %s --bundle= 2>&1 | FileCheck %s --check-prefix=NOBUNDLE
// RUN: not %tessera-compile /dev/zero 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: sh -c "printf 'module {\n'; for i in \$(seq 300); do printf '('; done; printf '\n}\n'" > %t.deep.mlir
// RUN: not %tessera-compile %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP \
// RUN:   --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"
// RUN: printf 'func.func private @f() attributes {a = array<index: 1>}\n' > %t.indexarray.mlir
// RUN: not %tessera-compile %t.indexarray.mlir 2>&1 | FileCheck %s --check-prefix=INDEXARRAY \
// RUN:   --implicit-check-not="Stack dump"
// RUN: not %tessera-opt %t.indexarray.mlir 2>&1 | FileCheck %s --check-prefix=INDEXARRAY \
// RUN:   --implicit-check-not="Stack dump"
// RUN: printf '!i = index\nfunc.func private @f() attributes {a = array <!i: 1>}\n' > %t.indexarray2.mlir
// RUN: not %tessera-compile %t.indexarray2.mlir 2>&1 | FileCheck %s --check-prefix=INDEXARRAY2 \
// RUN:   --implicit-check-not="Stack dump"
// RUN: sh -c "printf 'module {\n'; head -c 70000 /dev/zero | tr '\\0' ' '; printf 'x\n}\n'" > %t.long.mlir
// RUN: not %tessera-compile %t.long.mlir 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not %tessera-opt %t.long.mlir 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not %tessera-compile %t.long.mlir 2>&1 | wc -c | FileCheck %s --check-prefix=LONGSIZE
// RUN: sh -c "echo 'module {'; echo '  tile.kernel @many() grid(affine_map<()[] -> (1)>) threads(32) blocks(%%bx) {'; for i in \$(seq 10001); do echo '    arith.constant 1 : index'; done; echo '  }'; echo '}'" > %t.many.mlir
// RUN: not %tessera-compile %t.many.mlir --target=sm_80 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: sh -c '%tessera-compile %s > /dev/full; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: rm -f %t.link && ln -s %t.elsewhere %t.link
// RUN: not %tessera-compile %s --bundle=%t.link -o /dev/null 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not test -e %t.elsewhere
// NOVALUE: tessera-compile: --target needs a value, e.g. --target=sm_90a
// NOBUNDLE: tessera-compile: --bundle needs a file name
// HUGE: tessera-compile: /dev/zero is larger than 64 MiB, the most tessera-compile reads
// DEEP: deep.mlir:2:256: error: nesting deeper than 256 levels of (, [ and {, the most Tessera parses
// INDEXARRAY: indexarray.mlir:1:40: error: a dense array of 'index' elements; MLIR's parser reads i1, i8, i16, i32, i64, f32 and f64 arrays safely
// INDEXARRAY2: indexarray2.mlir:2:40: error: a dense array of '!i' elements
// LONG: long.mlir:2:1: error: a line of 70001 bytes, longer than the 65536 Tessera parses
// LONGSIZE: {{^ *[0-9]{1,3}$}}
// MANY: many.mlir:2:3: error: kernel 'many' holds 10001 operations, more than the 10000 Tessera compiles in one kernel; split it
// FULL: tessera-compile: cannot write standard output: No space left on device
// FULL-NEXT: exit 1
// LINK: tessera-compile: FAILED_PRECONDITION: cannot write {{.*}}.link: it exists and is not a regular file

// Exit code 1 exactly (a crash would be 134 or 139).
// RUN: sh -c '%tessera-compile %s --target=sm_120; echo "exit $?"; \
// RUN:        %tessera-compile %s --target=foo; echo "exit $?"; \
// RUN:        %tessera-compile %s --emit=bogus; echo "exit $?"; \
// RUN:        %tessera-compile %S/Inputs/parse-error.mlir; echo "exit $?"; \
// RUN:        %tessera-compile %S/Inputs/invalid-kernel.mlir; echo "exit $?"; \
// RUN:        %tessera-compile %S/Inputs/does-not-exist.mlir; echo "exit $?"; \
// RUN:        %tessera-compile %S/Inputs/too-much-shared.mlir --target=sm_60; echo "exit $?"' \
// RUN:   2> /dev/null | FileCheck %s --check-prefix=EXIT

// TILE: tile.kernel @vector_add
// TILE-SAME: tile.shared_memory_bytes = 0 : i64
// TILE: tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>, name = "a"}
// TILE: tile.parallel (%{{.*}}) in [1024] attributes {distribution = #tile.distribution<threads = 256, vector = 4>}

// GPU: module attributes {gpu.container_module, tile.target = #tile.target<"sm_90a">}
// GPU: gpu.module @tessera_kernels
// GPU: gpu.func @vector_add(%{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64}, %{{.*}}: i64,
// GPU-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// GPU: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// GPU-NOT: tile.kernel

// LOWERED: gpu.module @tessera_kernels
// LOWERED: llvm.func @vector_add(
// LOWERED-SAME: nvvm.kernel
// LOWERED-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// LOWERED: nvvm.read.ptx.sreg.ctaid.x
// LOWERED: nvvm.read.ptx.sreg.tid.x
// LOWERED-NOT: {{gpu\.func|scf\.|arith\.|memref\.}}

// LLVM: target triple = "nvptx64-nvidia-cuda"
// LLVM: define ptx_kernel void @vector_add(ptr addrspace(1) {{.*}}align 16{{.*}}, i64 %{{.*}}, ptr addrspace(1)
// LLVM: load <4 x float>, ptr addrspace(1) %{{.*}}, align 16
// LLVM: store <4 x float> %{{.*}}, ptr addrspace(1) %{{.*}}, align 16
// LLVM: "nvvm.maxntid"="256,1,1"
// LLVM70: define ptx_kernel void @vector_add(

// PTX: .version 8.1
// PTX: .target sm_90a
// PTX: .visible .entry vector_add(
// PTX: .maxntid 256, 1, 1

// UNSERVED: tessera-compile.mlir:{{[0-9]+}}:1: error: no backend serves target 'sm_120' (served: sm60: sm_60 sm_61 sm_62; sm70: sm_70 sm_72; sm80: sm_80 sm_86 sm_87 sm_89; sm90: sm_90 sm_90a; sm100: sm_100 sm_100a)
// TURING: error: no backend serves target 'sm_75'
// MALFORMED: error: target 'foo' is not of the form sm_XY or sm_XYa (e.g. sm_80, sm_90a)
// SHORT: error: target 'sm_9' is not of the form sm_XY or sm_XYa (e.g. sm_80, sm_90a)
// EMIT: tessera-compile: unknown --emit=bogus (expected tile|gpu|lowered|llvm|ptx|cubin)
// PARSE: Inputs/parse-error.mlir:4:24: error: expected attribute value
// VERIFY: Inputs/invalid-kernel.mlir:3:3: error: 'tile.kernel' op threads per block must be in [1, 1024], got 4096
// MISSING: tessera-compile: cannot open input file '{{.*}}Inputs/does-not-exist.mlir': No such file or directory
// NOTARGET: Inputs/too-much-shared.mlir:2:1: error: no compilation target: add `attributes {tile.target = #tile.target<"sm_80">}` to the module or pass --target
// SHARED: Inputs/too-much-shared.mlir:3:3: error: kernel 'big' needs 81920 bytes of shared memory, over the 49152-byte per-block limit of sm_60: staging ('!tile.buffer<20480xf32, shared>', 81920 bytes)
// SHARED: Inputs/too-much-shared.mlir:5:10: note: shared buffer of 81920 bytes allocated here
// SHARED80: .target sm_80
// SHARED80: .entry big(

// EXIT-COUNT-7: exit 1
// EXIT-NOT: exit

module attributes {tile.target = #tile.target<"sm_90a">} {
  tile.kernel @vector_add(%A: !tile.tensor<?xf32>, %B: !tile.tensor<?xf32>, %C: !tile.tensor<?xf32>)
      grid(affine_map<()[s0, s1, s2] -> (s0 ceildiv 1024)>) threads(256) blocks(%bx) {
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
