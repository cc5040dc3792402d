#!/usr/bin/env bash
# run_bundle links no LLVM and no MLIR: no such shared library is needed and
# no LLVM or MLIR code is inside. compile_bundle's bundle loads in it.
set -euo pipefail
run=run_bundle
compile=compile_bundle
needs() { readelf -d "$1" | grep -cE 'NEEDED.*lib(LLVM|MLIR)' || true; }
if [ "$(needs "$run")" != 0 ]; then
  echo "FAIL: run_bundle needs LLVM or MLIR" >&2
  exit 1
fi
# Nor is either linked in statically: LLVM and MLIR are built with RTTI, so
# code of theirs brings type names (N4mlir..., N4llvm...) that survive
# stripping.
mentions() { strings -a "$1" | grep -cE 'N4(mlir|llvm)[0-9]' || true; }
if [ "$(mentions "$run")" != 0 ]; then
  echo "FAIL: run_bundle holds LLVM or MLIR code" >&2
  exit 1
fi
# The compiler binary, by contrast, passes neither check (so they can fail).
if [ "$(needs "$compile")" = 0 ] || [ "$(mentions "$compile")" = 0 ]; then
  echo "FAIL: compile_bundle shows no LLVM/MLIR: the checks above prove nothing" >&2
  exit 1
fi
# Both run when copied out of bazel-bin (the compiler finds Debian's
# libMLIR and libLLVM through its runpath).
cp "$compile" "$run" "$TEST_TMPDIR/"
bundle="$TEST_TMPDIR/scaled_add.tbundle"
"$TEST_TMPDIR/$compile" "$bundle"
out=$("$TEST_TMPDIR/$run" "$bundle")
echo "$out"
grep '^sm_80: scaled_add(' <<<"$out" >/dev/null
grep '^sm_90a: scaled_add(' <<<"$out" >/dev/null
