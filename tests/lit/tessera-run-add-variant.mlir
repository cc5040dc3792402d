// tessera-run --add-variant: a (hand-edited) PTX joins a kernel's family as
// a tuning candidate "<kernel>__<knobs>", copying the kernel's launch
// description; its entry must be named so, and must be new to the bundle.
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: sed 's/\.entry gemm(/.entry gemm__edited(/' %t.ptx > %t.edited.ptx
// RUN: %tessera-run --bundle=%t.pb --add-variant=gemm:%t.edited.ptx --write=%t.two.pb | FileCheck %s --check-prefix=ADDED
// RUN: %tessera-run --bundle=%t.two.pb --list | FileCheck %s --check-prefix=LIST
// RUN: not %tessera-run --bundle=%t.two.pb --add-variant=gemm:%t.edited.ptx --write=%t.three.pb 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not %tessera-run --bundle=%t.pb --add-variant=gemm:%t.ptx --write=%t.three.pb 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not %tessera-run --bundle=%t.pb --add-variant=nosuch:%t.edited.ptx --write=%t.three.pb 2>&1 | FileCheck %s --check-prefix=BASE
// RUN: not %tessera-run --bundle=%t.pb --add-variant=gemm:%t.missing.ptx --write=%t.three.pb 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not %tessera-run --bundle=%t.pb --add-variant=gemm:%t.edited.ptx 2>&1 | FileCheck %s --check-prefix=USAGE

// ADDED: 2 kernels (added gemm__edited)
// LIST: gemm(
// LIST: gemm__edited(
// TWICE: tessera-run: ALREADY_EXISTS: the bundle already has a kernel 'gemm__edited'
// NAME: the PTX's entry is 'gemm'; a variant of gemm is named 'gemm__<knobs>'
// BASE: tessera-run: NOT_FOUND:
// MISSING: tessera-run: NOT_FOUND: cannot open {{.*}}missing.ptx: No such file or directory
// USAGE: tessera-run: --add-variant needs --bundle and --write
