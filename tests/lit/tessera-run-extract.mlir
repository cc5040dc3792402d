// tessera-run --extract writes DIR/<entry>.<target>.ptx per kernel; a bundle
// whose kernel names are not plain file names (a path, a hidden or empty
// name) is refused when it is read, before anything is written; unreadable
// bundles, bare protobufs without the kernel file header and missing
// directories are named with the reason.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %tessera-compile %S/Inputs/gemm-pipelined.mlir --target=sm_80 --emit=ptx -o %t.ptx --bundle=%t.pb
// RUN: %tessera-run --bundle=%t.pb --extract=%t.dir | FileCheck %s --check-prefix=PLAIN
// A kernel file (format 1, header and checksum) of a bundle of one kernel,
// target "sm_80", entry "../escaped", PTX "x".
// RUN: printf '\x89TESSERA\x01\x00\x00\x00\x01\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\xfe\x22\x65\x96\xec\xb5\x7f\x21' > %t.bad.pb
// RUN: printf '\x0a\x16\x0a\x05sm_80\x12\x0a../escaped\x1a\x01x' >> %t.bad.pb
// RUN: not %tessera-run --bundle=%t.bad.pb --extract=%t.dir 2>&1 | FileCheck %s --check-prefix=ESCAPE
// RUN: not ls %t.dir/../escaped.sm_80.ptx
// The same bundle as a bare protobuf, as written before the header existed.
// RUN: printf '\x0a\x16\x0a\x05sm_80\x12\x0a../escaped\x1a\x01x' > %t.bare.pb
// RUN: not %tessera-run --bundle=%t.bare.pb --list 2>&1 | FileCheck %s --check-prefix=BARE
// An empty file is not a bundle without kernels.
// RUN: rm -f %t.empty.pb && touch %t.empty.pb
// RUN: not %tessera-run --bundle=%t.empty.pb --list 2>&1 | FileCheck %s --check-prefix=EMPTY
// A directory is not a bundle; a directory that does not exist says so.
// RUN: not %tessera-run --bundle=%t.dir --list 2>&1 | FileCheck %s --check-prefix=DIRECTORY
// RUN: not %tessera-run --bundle=%t.pb --extract=%t.nosuch 2>&1 | FileCheck %s --check-prefix=NOSUCH
// A string field that is not UTF-8: our error alone, no protobuf log line.
// RUN: printf '\x89TESSERA\x01\x00\x00\x00\x01\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x0f\x1c\xc1)\x08\x25\xe6\x91\x0a\x0e\x0a\x05sm_80\x12\x02\xff\xfe\x1a\x01x' > %t.utf.pb
// RUN: not %tessera-run --bundle=%t.utf.pb --list 2>&1 | FileCheck %s --check-prefix=UTF8 --implicit-check-not=libprotobuf
// A device is read no further than a kernel file's header.
// RUN: not %tessera-run --bundle=/dev/zero --list 2>&1 | FileCheck %s --check-prefix=ZERO
// An empty --bundle, and a listing that cannot reach stdout: exit non-zero.
// RUN: not %tessera-run --bundle= --list 2>&1 | FileCheck %s --check-prefix=NOBUNDLE
// RUN: sh -c '%tessera-run --bundle=%t.pb --list > /dev/full; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=FULL
// A FIFO where a PTX file goes stays a FIFO; the other files are written.
// RUN: rm -rf %t.fifo && mkdir -p %t.fifo && mkfifo %t.fifo/gemm.sm_80.ptx
// RUN: not %tessera-run --bundle=%t.pb --extract=%t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: test -p %t.fifo/gemm.sm_80.ptx

// PLAIN: .dir/gemm.sm_80.ptx
// ESCAPE: tessera-run: INVALID_ARGUMENT: {{.*}}.bad.pb: kernel entry '../escaped' is not a PTX identifier
// BARE: tessera-run: DATA_LOSS: {{.*}}.bare.pb is not a Tessera kernel file: no magic header
// EMPTY: tessera-run: DATA_LOSS: {{.*}}.empty.pb is empty: not a Tessera kernel file
// DIRECTORY: tessera-run: INVALID_ARGUMENT: cannot read {{.*}}.dir: a directory
// NOSUCH: tessera-run: NOT_FOUND: --extract: the directory {{.*}}.nosuch does not exist
// NOBUNDLE: tessera-run: --bundle needs a file name
// FULL: tessera-run: cannot write standard output: No space left on device
// FULL-NEXT: exit 1
// FIFO: tessera-run: FAILED_PRECONDITION: cannot write {{.*}}.fifo/gemm.sm_80.ptx: it exists and is not a regular file
// UTF8: tessera-run: DATA_LOSS: {{.*}}.utf.pb is corrupt: not a binary tessera.runtime.KernelBundle (16 payload bytes; a field is malformed or a string is not UTF-8)
// ZERO: tessera-run: DATA_LOSS: /dev/zero is not a Tessera kernel file: no magic header (32 bytes
