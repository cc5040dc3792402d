// tessera-run --extract writes DIR/<entry>.<target>.ptx per kernel; a bundle
// whose kernel names are not plain file names (a path, a hidden or empty
// name) is refused instead of writing outside DIR; unreadable bundles and
// unwritable directories are named with the reason.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: %tessera-run --bundle=%t.pb --extract=%t.dir | FileCheck %s --check-prefix=PLAIN
// A bundle of one kernel, target "sm_80", entry "../escaped", PTX "x".
// RUN: printf '\x0a\x16\x0a\x05sm_80\x12\x0a../escaped\x1a\x01x' > %t.bad.pb
// RUN: not %tessera-run --bundle=%t.bad.pb --extract=%t.dir 2>&1 | FileCheck %s --check-prefix=ESCAPE
// RUN: not ls %t.dir/../escaped.sm_80.ptx
// A directory is not a bundle; a directory that does not exist says so.
// RUN: not %tessera-run --bundle=%t.dir --list 2>&1 | FileCheck %s --check-prefix=DIRECTORY
// RUN: not %tessera-run --bundle=%t.pb --extract=%t.nosuch 2>&1 | FileCheck %s --check-prefix=NOSUCH

// PLAIN: .dir/gemm.sm_80.ptx
// ESCAPE: tessera-run: INVALID_ARGUMENT: kernel name '../escaped' or target 'sm_80' is not a plain file name; nothing more extracted
// DIRECTORY: tessera-run: INVALID_ARGUMENT: cannot read {{.*}}.dir: a directory
// NOSUCH: cannot write {{.*}}.nosuch/gemm.sm_80.ptx: No such file or directory
