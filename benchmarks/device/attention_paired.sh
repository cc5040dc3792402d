#!/usr/bin/env bash
# FlashAttention and torch SDPA (cuDNN and flash) taking turns, $ROUNDS
# rounds, on the GPU machine after prepare.sh here: each round, sequence
# length by length, times our kernels of $TARGETS at that length, then the
# peers at it, so that clock and temperature drift falls on both sides.
# Prints per target and workload the median TFLOP/s of each side and the
# median of the per-round ratios (attention_table.py).
#
#   ROUNDS=3 SEQS=4096 TARGETS=sm_90a OUT=/tmp/o bash .device/attention_paired.sh
#   DTYPES=f16 ...   # only these types (default f16 bf16), d64 and d128, causal and not
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
kernels=$(for t in ${DTYPES:-f16 bf16}; do for d in 64 128; do
  printf 'flash_attention_%s_d%s,flash_attention_%s_d%s_causal,' $t $d $t $d; done; done)
kernels="${kernels%,}"
status=0
for round in $(seq "${ROUNDS:-3}"); do
  for s in ${SEQS:-4096}; do
    for t in ${TARGETS:-sm_90a}; do
      timeout 240 ./.device/device_runner --workloads=benchmark --kernels="$kernels" \
        --workload-filter="_sq${s}_" --csv="$out/ours_${t}_s${s}_r$round.csv" \
        .device/bundles/$t.conformance.pb > "$out/ours_${t}_s${s}_r$round.txt" 2>&1
      ((status |= $?))
    done
    only=$(for k in ${kernels//,/ }; do printf '%s/b8_sq%s_,' $k $s; done)
    python3 .device/peers.py --attention --only="${only%,}" > "$out/peers_s${s}_r$round.csv" 2>&1
  done
done
for t in ${TARGETS:-sm_90a}; do
  pairs=()
  for round in $(seq "${ROUNDS:-3}"); do
    for s in ${SEQS:-4096}; do
      pairs+=("$out/ours_${t}_s${s}_r$round.csv" "$out/peers_s${s}_r$round.csv")
    done
  done
  python3 .device/attention_table.py "${pairs[@]}" | tee "$out/attention_paired_$t.txt"
done
exit "$status"
