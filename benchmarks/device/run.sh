#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after prepare.sh here:
# the GEMM layout probes, the conformance suite of every backend, the
# benchmarks of every backend, then the peers in the same run. Tables to
# stdout; CSVs to $OUT (or ./out).
#
#   TARGETS="sm_70 sm_90a" PEERS=0 bash .device/run.sh   # a subset, no torch
set -uo pipefail
out="${OUT:-out}"
targets="${TARGETS:-sm_60 sm_70 sm_80 sm_90a}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
status=0
peers="${PEERS:-1}"
[ "$peers" = 1 ] && python3 .device/peers.py --vector-add-only 2>&1 | tee "$out/peers_before.csv"
if [ -x .device/runtime_gpu_test ]; then
  ./.device/runtime_gpu_test 2>&1 | tail -n 4 | tee "$out/runtime_gpu_test.txt"
  ((status |= PIPESTATUS[0]))
fi
bundles() {  # the bundles of the chosen targets matching $1
  for t in $targets; do ls .device/bundles/$t.$1 2>/dev/null; done
}
# Where the GEMMs read their operands (one-hot inputs), one process per
# kernel so that a fault names its kernel.
mkdir -p "$out/probe"
for t in $targets; do
  bundle=.device/bundles/$t.probe.pb
  [ -f "$bundle" ] || continue
  for k in $(./.device/tessera-run --bundle="$bundle" --list | grep -o '^probe_[0-9a-z_]*' | sort -u); do
    timeout 30 ./.device/gemm_probe "$out/probe" --only="$k" "$bundle" 2>&1 | sed "s/^/$t /" | tee -a "$out/probe.txt"
    ((status |= PIPESTATUS[0]))
  done
done
tar czf "$out/probe.tgz" -C "$out" probe && rm -rf "$out/probe"
mapfile -t conformance < <(bundles conformance.pb)
# Each step under a time limit: a kernel that hangs costs its step, not the run.
timeout 400 ./.device/device_runner --workloads=conformance --csv="$out/conformance.csv" \
  "${conformance[@]}" 2>&1 | tee "$out/conformance.txt"
((status |= PIPESTATUS[0]))
mapfile -t examples < <(bundles pb; bundles variants.pb; bundles ab.pb)
timeout 360 ./.device/device_runner --workloads=benchmark --csv="$out/benchmark.csv" \
  "${examples[@]}" 2>&1 | tee "$out/benchmark.txt"
((status |= PIPESTATUS[0]))
[ "$peers" = 1 ] && python3 .device/peers.py 2>&1 | tee "$out/peers_after.csv"
# The ceiling of the sm80 build's instruction on this GPU (registers only).
timeout 30 ./.device/mma_peak 2>&1 | tee "$out/mma_peak.txt"
# The special-function unit's throughput per PTX form (a GELU epilogue's floor).
timeout 30 ./.device/sfu_peak 2>&1 | tee "$out/sfu_peak.txt"
# SASS of the GEMMs: which instructions the tensor cores run.
mkdir -p /tmp/kernels
for t in $targets; do
  ./.device/tessera-run --bundle=.device/bundles/$t.pb --extract=/tmp/kernels >/dev/null
  if [ -f /tmp/kernels/gemm_f16.$t.cubin ]; then
    cuobjdump --dump-sass /tmp/kernels/gemm_f16.$t.cubin > "$out/gemm_f16.$t.sass"
    echo "SASS gemm_f16 $t:"; grep -oE '\b(HGMMA|HMMA|LDSM|LDGSTS|UTMALDG|SYNCS|FFMA|BAR)[A-Z0-9_.]*' \
      "$out/gemm_f16.$t.sass" | sort | uniq -c | sort -rn | head -12
  fi
done
exit "$status"
