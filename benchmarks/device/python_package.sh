#!/usr/bin/env bash
# Assembles the Python package for a machine without Bazel (the GPU
# machine) into DIR: DIR/tessera/ with the bridge library and its CPython
# extension (tessera._fast_launch), the shared libraries they need beyond
# glibc and the C++ runtime (lib/), the ops bundles (ops/) and, where
# STATIC_COMPILER names one, a tessera-compile that needs no LLVM;
# DIR/tests/ with the package's tests. Use it with PYTHONPATH=DIR.
#
#   benchmarks/device/python_package.sh DIR
set -euo pipefail
out=$(realpath -m "$1")
cd "$(dirname "$0")/../.."
bazel build //python:bridge //python:_fast_launch.abi3.so //python:ops_bundles >/dev/null
mkdir -p "$out/tessera/lib" "$out/tessera/ops" "$out/tests/testdata"
cp python/tessera/*.py "$out/tessera/"
cp bazel-bin/python/libtessera_bridge.so bazel-bin/python/_fast_launch.abi3.so "$out/tessera/"
bazel-bin/python/ops_bundles "$out/tessera/ops"
ldd bazel-bin/python/libtessera_bridge.so | awk '/libabsl|libprotobuf/ {print $3}' |
  xargs -r cp -L -t "$out/tessera/lib/"
cp python/tests/*.py "$out/tests/"
cp python/tests/testdata/* "$out/tests/testdata/"
if [ -n "${STATIC_COMPILER:-}" ]; then
  cp "$STATIC_COMPILER" "$out/tessera/tessera-compile"
fi
chmod -R u+w "$out"
echo "python package: $out ($(du -sh "$out" | cut -f1))"
