#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after prepare.sh here:
# every bundle's conformance and benchmark workloads, then the peers in the
# same run; tables to stdout, CSVs and SASS to $OUT (or ./out).
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
./.device/device_runner --workloads="${1:-all}" --csv="$out/tessera.csv" .device/bundles/*.pb \
  2>&1 | tee "$out/tessera.txt"
status=${PIPESTATUS[0]}
python3 .device/peers.py 2>&1 | tee "$out/peers.csv"
exit "$status"
