#!/bin/bash
# Runs the tests/lit suite from a Bazel runfiles tree: finds tessera-opt,
# tessera-compile, FileCheck and not there and hands their paths to lit.
set -euo pipefail

runfiles="${TEST_SRCDIR:-${RUNFILES_DIR:-$0.runfiles}}"
main="${runfiles}/${TEST_WORKSPACE:-tessera}"

llvm_tools_dir="${runfiles}/llvm/bin"
if [[ ! -x "${llvm_tools_dir}/FileCheck" ]]; then
  llvm_tools_dir="${main}/external/llvm/bin"
fi
if [[ ! -x "${llvm_tools_dir}/FileCheck" ]]; then
  llvm_tools_dir=/usr/lib/llvm-22/bin
fi

exec "${llvm_tools_dir}/lit" -v \
  --param "tessera_opt=${main}/tools/tessera-opt" \
  --param "tessera_compile=${main}/tools/tessera-compile" \
  --param "tessera_run=${main}/tools/tessera-run" \
  --param "llvm_tools_dir=${llvm_tools_dir}" \
  --param "test_exec_root=${TEST_TMPDIR:-$(mktemp -d)}" \
  "${main}/tests/lit"
