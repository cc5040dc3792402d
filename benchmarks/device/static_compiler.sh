#!/usr/bin/env bash
# Builds a tessera-compile that runs where no LLVM is installed (the GPU
# machine: a quiet host on which to time compiles, see compile_time.sh) from
# the checkout CHECKOUT (default: this one) into OUT: `bazel build
# --config=portable //tools:tessera-compile` links LLVM and MLIR from their
# static archives (third_party/llvm/llvm.BUILD), Abseil, protobuf and zlib
# statically, only glibc, the C++ runtime and libzstd shared. A checkout from
# before that configuration existed gets the same binary another way: Bazel's
# link line of the shared build replayed against the static archives.
#
#   benchmarks/device/static_compiler.sh OUT [CHECKOUT]
set -euo pipefail
out=$(realpath -m "$1")
checkout=$(realpath "${2:-$(dirname "$0")/../..}")
cd "$checkout"
if grep -q portable third_party/llvm/llvm.BUILD; then
  bazel build --config=portable //tools:tessera-compile >/dev/null
  mkdir -p "$(dirname "$out")"
  strip -o "$out" bazel-bin/tools/tessera-compile
  echo "static tessera-compile of $(git rev-parse --short HEAD): $out"
  exit 0
fi
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
