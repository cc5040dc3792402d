#!/usr/bin/env bash
# The generated results are current: README.md's results table,
# benchmarks/RESULTS.md's status table and benchmarks/results.csv match the
# records under benchmarks/results/ (runfiles copies; the working directory of
# a test is the runfiles root). Then the self-test: --check must fail on
# copies with an altered figure, table, marker or record.
set -euo pipefail
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
python3 benchmarks/results.py --check
python3 benchmarks/results.py --self-test
