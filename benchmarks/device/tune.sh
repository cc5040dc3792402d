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
#
# GEMM_SHAPES="MxNxK,...": both sides at those shapes instead of the issue's.
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
b=.device/bundles
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
./.device/runtime_gpu_test --gtest_filter='*Autotune*' 2>&1 | tail -n 8 | tee "$out/runtime_gpu_test.txt"
families="${FAMILIES:-gemm_f16,gemm_bf16,gemm_bias_gelu_f16}"
shapes="${GEMM_SHAPES:-2048x2048x2048,4096x4096x4096,8192x8192x8192,3000x5000x4000,8192x8192x1000}"
for t in ${TARGETS:-sm_90a sm_80}; do
  timeout 150 ./.device/device_runner --workloads=benchmark --gemm-shapes="$shapes" \
    --kernels=$families $b/$t.pb $b/$t.variants.pb
  timeout 300 ./.device/device_runner --workloads=benchmark --gemm-shapes="$shapes" --autotune \
    --tune-cache="$out/tune_cache.txt" --kernels=$families $b/$t.pb $b/$t.variants.pb
done 2>&1 | tee "$out/benchmark.txt"
# The peers: each GEMM shape in a process of its own (in one process cuBLAS
# runs the odd shapes 15-18% slower right after 8192^3: RESULTS.md runs 144,
# 151, 156), then the fused GEMM's (torch's unfused chain, torch.compile).
gemms=$(echo "$families" | tr , '\n' | grep -E '^gemm_b?f16$' | sed 's|$|/|' | paste -sd, -)
{
  echo "peer,workload,median_ms,rate"
  for shape in $(echo "$shapes" | tr , ' '); do
    [ -n "$gemms" ] || break
    python3 .device/peers.py --gemm-only --only="$gemms" --gemm-shapes="$shape" 2>&1 |
      grep -v "^peer,"
  done
  case ",$families," in
    *,gemm_bias_gelu_f16,*)
      python3 .device/peers.py --only=gemm_bias_gelu_f16/ 2>&1 | grep -v "^peer," ;;
  esac
} | tee "$out/peers.csv"
