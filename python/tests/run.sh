#!/usr/bin/env bash
# Runs a Python test of the bridge in Bazel's runfiles (the working directory
# of a test): the package from python/, the bridge library, tessera-compile
# and the ops bundles found there, the compile cache in the test's own
# temporary directory.
set -euo pipefail
export PYTHONPATH="$PWD/python"
export TESSERA_BRIDGE_LIBRARY="$PWD/python/libtessera_bridge.so"
export TESSERA_COMPILE="$PWD/tools/tessera-compile"
scratch="${TEST_TMPDIR:-$(mktemp -d)}"
export TESSERA_OPS_DIR="$scratch/ops"
export TESSERA_CACHE_DIR="$scratch/cache"
# tessera.ops's kernels, written for this run (what `bazel run
# //python:ops_bundles -- DIR` writes for a user).
python/ops_bundles "$TESSERA_OPS_DIR" >/dev/null
exec python3 "$@"
