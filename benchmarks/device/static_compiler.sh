#!/usr/bin/env bash
# Builds a statically linked tessera-compile from the checkout CHECKOUT
# (default: this one) into OUT: Bazel builds the tool against Debian's shared
# LLVM/MLIR, then its own link line is replayed against their static
# archives (one --start-group, so their order does not matter), with
# protobuf, zlib and the C++ runtime static and only glibc and libzstd shared.
# The result runs on a machine without LLVM (the GPU machine: a quiet host on
# which to time compiles, see compile_time.sh).
#
#   benchmarks/device/static_compiler.sh OUT [CHECKOUT]
set -euo pipefail
out=$(realpath -m "$1")
checkout=$(realpath "${2:-$(dirname "$0")/../..}")
cd "$checkout"
bazel build //tools:tessera-compile >/dev/null
params=bazel-bin/tools/tessera-compile-2.params
[ -f "$params" ] || { echo "static_compiler.sh: no link parameters at $params" >&2; exit 1; }
llvm=/usr/lib/llvm-22/lib
python3 - "$params" "$out.params" "$out.unstripped" "$llvm" <<'PY'
import glob, sys
params, dest, binary, llvm = sys.argv[1:]
args = []
for a in open(params).read().split('\n'):
    if not a or a == '-pie' or a.startswith('-Wl,-rpath') or '_solib_' in a:
        continue
    if a in ('-l:libMLIR.so.22.1', '-l:libLLVM.so.22.1', '-lprotobuf', '-lstdc++', '-lpthread'):
        continue
    if a == 'bazel-out/k8-opt/bin/tools/tessera-compile':
        a = binary
    if a.startswith('-fuse-ld='):
        a = '-fuse-ld=gold'
    args.append(a)
args += ['-no-pie', '-Wl,--start-group']
args += sorted(glob.glob(llvm + '/libMLIR*.a')) + sorted(glob.glob(llvm + '/libLLVM*.a'))
args += ['-Wl,--end-group', '/usr/lib/x86_64-linux-gnu/libprotobuf.a',
         '/usr/lib/x86_64-linux-gnu/libz.a', '-static-libstdc++', '-static-libgcc',
         '-l:libzstd.so.1', '-ldl', '-lpthread']
open(dest, 'w').write('\n'.join(args) + '\n')
PY
clang++-22 @"$out.params"
strip -o "$out" "$out.unstripped"
rm -f "$out.params" "$out.unstripped"
echo "static tessera-compile of $(git -C "$checkout" rev-parse --short HEAD): $out"
