#!/usr/bin/env bash
# The autotuner on the GPU machine, after prepare.sh here: the runtime's
# Autotune tests, then for sm_90a and sm_80 the default GEMMs alone and each
# GEMM family (the default kernel and its variants of the variants bundle:
# tiles, schedules) tuned per shape by device_runner --autotune, whose winner
# is checked against float64 and timed again; torch in the same call. The
# choices go to $OUT/tune_cache.txt (a later --tune-cache=FILE run reuses
# them without tuning).
#
#   OUT=/tmp/o bash .device/tune.sh
#   TARGETS=sm_90a FAMILIES=gemm_bf16 OUT=/tmp/o bash .device/tune.sh
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
b=.device/bundles
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
./.device/runtime_gpu_test --gtest_filter='*Autotune*' 2>&1 | tail -n 8 | tee "$out/runtime_gpu_test.txt"
families="${FAMILIES:-gemm_f16,gemm_bf16,gemm_bias_gelu_f16}"
for t in ${TARGETS:-sm_90a sm_80}; do
  timeout 150 ./.device/device_runner --workloads=benchmark --kernels=$families \
    $b/$t.pb $b/$t.variants.pb
  timeout 300 ./.device/device_runner --workloads=benchmark --autotune \
    --tune-cache="$out/tune_cache.txt" --kernels=$families $b/$t.pb $b/$t.variants.pb
done 2>&1 | tee "$out/benchmark.txt"
python3 .device/peers.py --only=gemm_f16/,gemm_bf16/,gemm_bias_gelu_f16/ 2>&1 | tee "$out/peers.csv"
