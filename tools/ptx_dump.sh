#!/usr/bin/env bash
# Writes the PTX of every kernel the project builds into a directory, one
# file per kernel and target: the examples (every target), the conformance
# cases (every target), the tuning variants and the layout probes. Used to
# check that a change to the compiler leaves its output as it was:
#
#   tools/ptx_dump.sh /tmp/before        # on the old commit
#   tools/ptx_dump.sh /tmp/after         # on the new one
#   tools/ptx_compare.py /tmp/before /tmp/after
#
# Layout: DIR/<bundle>/<entry>.<target>.ptx, e.g. DIR/conformance/gemm_f16.sm_80.ptx.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: tools/ptx_dump.sh OUT_DIR" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
out=$(realpath -m "$1")
bundles=$(mktemp -d)
trap 'rm -rf "$bundles"' EXIT
bazel build //examples:all_examples //tests/conformance:write_bundles //benchmarks:variants \
  //tools:tessera-run >&2
mkdir -p "$bundles/examples" "$bundles/conformance"
./bazel-bin/examples/all_examples --no-run --bundle-dir="$bundles/examples" >/dev/null
./bazel-bin/tests/conformance/write_bundles "$bundles/conformance" >/dev/null
mkdir -p "$bundles/variants" "$bundles/probes"
for target in sm_80 sm_90a; do
  ./bazel-bin/benchmarks/variants --target=$target "$bundles/variants/$target.pb" >/dev/null
done
for target in sm_70 sm_80 sm_90a; do
  ./bazel-bin/benchmarks/variants --probe --target=$target "$bundles/probes/$target.pb" >/dev/null
done
rm -rf "$out"
count=0
for group in examples conformance variants probes; do
  mkdir -p "$out/$group"
  for bundle in "$bundles/$group"/*; do
    ./bazel-bin/tools/tessera-run --bundle="$bundle" --extract="$out/$group" >/dev/null
  done
  # Only the PTX is compared; cubins (where ptxas ran) follow from it.
  find "$out/$group" -type f ! -name '*.ptx' -delete
  count=$((count + $(find "$out/$group" -name '*.ptx' | wc -l)))
done
echo "ptx_dump: $count kernels in $out"
