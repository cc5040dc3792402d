#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after prepare.sh here:
# the conformance suite of every backend, the benchmarks of every backend,
# then the peers in the same run. Tables to stdout; CSVs to $OUT (or ./out).
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
status=0
python3 .device/peers.py --vector-add-only 2>&1 | tee "$out/peers_before.csv"
if [ -x .device/runtime_gpu_test ]; then
  ./.device/runtime_gpu_test 2>&1 | tail -n 4 | tee "$out/runtime_gpu_test.txt"
  ((status |= PIPESTATUS[0]))
fi
# Where the sm_90a GEMMs read their operands (one-hot inputs), one process
# per kernel so that a fault names its kernel.
mkdir -p "$out/probe"
for k in $(./.device/tessera-run --bundle=.device/probe.pb --list | grep -o 'probe_[0-9a-z_]*' | sort -u); do
  ./.device/gemm_probe "$out/probe" --only="$k" .device/probe.pb 2>&1 | tee -a "$out/probe.txt"
  ((status |= PIPESTATUS[0]))
done
tar czf "$out/probe.tgz" -C "$out" probe && rm -rf "$out/probe"
./.device/device_runner --workloads=conformance --csv="$out/conformance.csv" \
  .device/bundles/*.conformance.pb 2>&1 | tee "$out/conformance.txt"
((status |= PIPESTATUS[0]))
mapfile -t examples < <(ls .device/bundles/*.pb | grep -v conformance)
./.device/device_runner --workloads=benchmark --csv="$out/benchmark.csv" "${examples[@]}" \
  2>&1 | tee "$out/benchmark.txt"
((status |= PIPESTATUS[0]))
python3 .device/peers.py 2>&1 | tee "$out/peers_after.csv"
# SASS of the sm_90a GEMM: which instructions the tensor cores run.
mkdir -p /tmp/kernels
./.device/tessera-run --bundle=.device/bundles/sm_90a.pb --extract=/tmp/kernels >/dev/null
if [ -f /tmp/kernels/gemm_f16.sm_90a.cubin ]; then
  cuobjdump --dump-sass /tmp/kernels/gemm_f16.sm_90a.cubin > "$out/gemm_f16.sm_90a.sass"
  echo "SASS gemm_f16 sm_90a:"; grep -oE '\b(HGMMA|HMMA|LDSM|LDGSTS|FFMA|BAR)[A-Z0-9_.]*' \
    "$out/gemm_f16.sm_90a.sass" | sort | uniq -c | sort -rn | head -12
fi
exit "$status"
