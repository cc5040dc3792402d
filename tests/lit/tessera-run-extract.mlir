// tessera-run --extract writes DIR/<entry>.<target>.ptx per kernel; a bundle
// whose kernel names are not plain file names (a path, a hidden or empty
// name) is refused instead of writing outside DIR.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: %tessera-run --bundle=%t.pb --extract=%t.dir | FileCheck %s --check-prefix=PLAIN
// A bundle of one kernel, target "sm_80", entry "../escaped", PTX "x".
// RUN: printf '\x0a\x16\x0a\x05sm_80\x12\x0a../escaped\x1a\x01x' > %t.bad.pb
// RUN: not %tessera-run --bundle=%t.bad.pb --extract=%t.dir 2>&1 | FileCheck %s --check-prefix=ESCAPE
// RUN: not ls %t.dir/../escaped.sm_80.ptx

// PLAIN: .dir/gemm.sm_80.ptx
// ESCAPE: tessera-run: INVALID_ARGUMENT: kernel name '../escaped' or target 'sm_80' is not a plain file name; nothing more extracted
