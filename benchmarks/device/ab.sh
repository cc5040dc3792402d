#!/usr/bin/env bash
# Interleaved A/B of kernels on the GPU machine after prepare.sh here: each
# kernel of $KERNELS (a family member, e.g. gemm_f16__lsr added with
# `tessera-run --add-variant`) is benchmarked at every shape of its workload,
# in order, $ROUNDS times; then torch (cuBLAS) once for the GEMM ratios
# (PEERS=0: not).
#
#   KERNELS="gemm_f16 gemm_f16__lsr" BUNDLES=".device/bundles/sm_80.hand.pb" \
#     ROUNDS=2 OUT=/tmp/o bash .device/ab.sh
#
# A kernel written "name@bundle.pb" runs from that bundle alone. TIME_WRONG=1
# times wrong results too (ceiling experiments on PTX that skips work).
# GEMM_SHAPES="MxNxK,..." times the plain GEMMs (and cuBLAS) at those shapes.
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
for round in $(seq "${ROUNDS:-2}"); do
  for k in $KERNELS; do
    # "kernel@bundle.pb": that kernel from that bundle only (e.g. a previous
    # compiler's PTX, whose launch description differs from today's).
    bundles="${BUNDLES:-}"
    if [[ "$k" == *@* ]]; then bundles="${k#*@}"; k="${k%%@*}"; fi
    timeout 90 ./.device/device_runner --workloads=benchmark ${TIME_WRONG:+--time-wrong} \
      ${GEMM_SHAPES:+--gemm-shapes=$GEMM_SHAPES} \
      --kernels="$k" $bundles 2>&1 |
      grep -E "^sm_|FAIL|error" | sed "s/^/r$round /"
  done
done > "$out/ab.txt"
grep -c " ok " "$out/ab.txt"; grep -E "FAIL|error" "$out/ab.txt" | head
if [ "${PEERS:-1}" = 1 ]; then python3 .device/peers.py --gemm-only ${GEMM_SHAPES:+--gemm-shapes=$GEMM_SHAPES} > "$out/peers.csv" 2>&1; fi
