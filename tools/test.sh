#!/usr/bin/env bash
# The whole test suite (what CI runs through .ci/run): installs what is
# missing, builds everything and runs every CPU test: FileCheck suites,
# gtest units, and the conformance suite of every backend (compile + ptxas
# for its architecture). GPU suites (tag requires-gpu) run only where a GPU
# is: this script says when it skipped them. Then the downstream workspace
# examples/embedding (Tessera embedded as an external repository), the lit
# and conformance suites again with assertions on (--config=asserts), and
# each fuzzer for 20 s from its seeds (tools/fuzz.sh; about a minute in all).
# Before all of it, the source checks of tools/lint.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh || exit 1

flags=()
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  flags+=(--config=gpu)
  echo "test: GPU found: running the requires-gpu suites too"
fi
log=$(mktemp)
# Source checks (tools/lint.sh) first: they take a second.
tools/lint.sh 2>&1 | tee "$log"
lint_rc=${PIPESTATUS[0]}
bazel test "${flags[@]}" //... 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
((lint_rc == 0)) || rc=$lint_rc

# Embedding: a workspace of its own that uses Tessera as an external
# repository (its WORKSPACE and .bazelrc are the README's), so a Bazel file
# that only works inside this checkout fails here.
echo
echo "test: the downstream workspace examples/embedding"
(cd examples/embedding && bazel test "${flags[@]}" //...) 2>&1 | tee -a "$log"
embedding_rc=${PIPESTATUS[0]}
((embedding_rc == 0)) || rc=$embedding_rc
echo
echo "test: the lit and conformance suites with assertions on (--config=asserts)"
bazel test --config=asserts "${flags[@]}" //tests/lit:lit //tests/conformance:all 2>&1 \
  | sed -E 's#^(//[^ ]+)#\1[asserts]#' | tee -a "$log"
asserts_rc=${PIPESTATUS[0]}
((asserts_rc == 0)) || rc=$asserts_rc

echo
echo "test: fuzzers, 20 s each (tools/fuzz.sh)"
tools/fuzz.sh 2>&1 | tee -a "$log"
fuzz_rc=${PIPESTATUS[0]}
((fuzz_rc == 0)) || rc=$fuzz_rc

if ((${#flags[@]} == 0)); then
  echo
  echo "test: no GPU on this machine: skipped the requires-gpu suites:"
  bazel query 'attr(tags, "requires-gpu", tests(//...))' 2>/dev/null | sed 's/^/  skipped: /'
  (cd examples/embedding && bazel query 'attr(tags, "requires-gpu", tests(//...))' 2>/dev/null) |
    sed 's|^|  skipped: examples/embedding |'
  echo "  (run them with: bazel test --config=gpu //..., or on the GPU machine with"
  echo "   benchmarks/device/prepare.sh then benchmarks/device/run.sh there)"
fi
passed=$(($(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log") + $(grep -cE '^fuzz: [a-z_]+ ok' "$log") + $(grep -cE '^lint: ok' "$log")))
failed=$(($(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log") + $(grep -cE '^fuzz: [a-z_]+ FAILED' "$log") + $(grep -cE '^lint: integer-keyed' "$log")))
rm -f "$log"
if ((rc != 0 && failed == 0)); then failed=1; fi
echo "$passed passed, $failed failed"
exit "$rc"
