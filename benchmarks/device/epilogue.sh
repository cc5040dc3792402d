#!/usr/bin/env bash
# The fused GEMM + bias + tanh GELU against the plain GEMM and torch,
# interleaved $ROUNDS times on the GPU machine after prepare.sh here: our
# gemm_f16 and gemm_bias_gelu_f16 autotuned over the sm_90a variants (the
# tuning cache makes rounds after the first reuse the choice), then torch's
# matmul, unfused chain (matmul, add, gelu) and torch.compile of the chain.
#
#   ROUNDS=3 OUT=/tmp/o bash .device/epilogue.sh
#
# SYNC_EACH_RUN=1: both sides wait for each timed run before the next.
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
b=.device/bundles
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
sync=""
[ "${SYNC_EACH_RUN:-0}" = 1 ] && sync="--sync-each-run"
for round in $(seq "${ROUNDS:-3}"); do
  timeout 150 ./.device/device_runner --workloads=benchmark --autotune ${sync} \
    --tune-cache="$out/tune_cache.txt" --kernels=gemm_f16,gemm_bias_gelu_f16 \
    $b/sm_90a.pb $b/sm_90a.variants.pb 2>&1 |
    grep -E "(gemm_f16|gemm_bias_gelu_f16)/(2048x2048x2048|8192x8192x8192)|FAIL" |
    sed "s/^/r$round /"
  python3 .device/peers.py ${sync} \
    --only=gemm_bias_gelu_f16/,gemm_f16/2048x2048x2048,gemm_f16/8192x8192x8192 2>&1 |
    grep -v "^peer," | sed "s/^/r$round /"
done > "$out/epilogue.txt"
cat "$out/epilogue.txt"
