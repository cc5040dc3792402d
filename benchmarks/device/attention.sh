#!/usr/bin/env bash
# FlashAttention's benchmark on the GPU machine, after prepare.sh here: our
# flash_attention_{f16,bf16}_d{64,128}[_causal] kernels (the conformance
# bundles hold them) at batch 8, 16 heads, sequence 1k to 16k, checked on
# sampled rows and timed; then torch SDPA on cuDNN and on flash in the same
# run; then the table side by side (TFLOP/s and ratios). Outputs to $OUT.
#
#   OUT=/tmp/o TARGETS=sm_90a bash .device/attention.sh   # one target per call: ~5-8 min
#   SEQS=4096 DTYPES=f16 ...    # only these sequence lengths and types, on both sides
set -uo pipefail
out="${OUT:-out}"
targets="${TARGETS:-sm_90a sm_80}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
kernels=$(for t in ${DTYPES:-f16 bf16}; do for d in 64 128; do
  printf 'flash_attention_%s_d%s,flash_attention_%s_d%s_causal,' $t $d $t $d; done; done)
status=0
for t in $targets; do
  # Each target apart, under a time limit: a kernel that hangs costs its step.
  timeout 480 ./.device/device_runner --workloads=benchmark --kernels="${kernels%,}" \
    ${SEQS:+--workload-filter=$(for s in ${SEQS//,/ }; do printf '_sq%s_,' $s; done)} \
    --csv="$out/attention_$t.csv" .device/bundles/$t.conformance.pb 2>&1 | tee "$out/attention_$t.txt"
  ((status |= PIPESTATUS[0]))
done
# The peers at the same workloads: each kernel (and sequence length) of ours.
only=$(for k in ${kernels//,/ }; do
  if [ -n "${SEQS:-}" ]; then for s in ${SEQS//,/ }; do printf '%s/b8_sq%s_,' $k $s; done
  else printf '%s/,' $k; fi; done)
python3 .device/peers.py --attention --only="${only%,}" 2>&1 | tee "$out/attention_peers.csv"
for t in $targets; do
  python3 .device/attention_table.py "$out/attention_$t.csv" "$out/attention_peers.csv" |
    tee "$out/attention_table_$t.txt"
done
exit "$status"
