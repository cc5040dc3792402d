#!/usr/bin/env bash
# The sm_90a schedules (ping-pong, the grid launched whole) against the
# default (persistent) GEMMs, on
# the GPU machine after prepare.sh here: conformance of the schedules' cases
# on every backend (the whole suite on sm_90a), then the default kernels,
# the schedule variants and the defaults again (drift shows), and torch
# beside them. (The variants bundle holds PTX only: its SASS is read here
# with ptxas + nvdisasm.)
#
#   OUT=/tmp/o bash .device/schedules.sh
#   KERNELS=gemm_f16__grid,gemm_bf16__grid OUT=/tmp/o bash .device/schedules.sh
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
b=.device/bundles
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
cases="${CASES:-gemm_f16_pingpong,gemm_bias_gelu_f16_pingpong,gemm_f16_persistent,gemm_bias_gelu_f16_persistent,gemm_f16_streamk,gemm_bias_gelu_f16_streamk}"
{
  timeout 150 ./.device/device_runner --workloads=conformance $b/sm_90a.conformance.pb
  for t in sm_60 sm_70 sm_80; do
    timeout 90 ./.device/device_runner --workloads=conformance --kernels=$cases $b/$t.conformance.pb
  done
} 2>&1 | tee "$out/conformance.txt"
defaults=gemm_f16,gemm_bias_gelu_f16
variants="${KERNELS:-gemm_f16__streamk,gemm_bf16__streamk,gemm_f16__grid,gemm_bf16__grid,gemm_bf16}"
{
  timeout 120 ./.device/device_runner --workloads=benchmark --kernels=$defaults $b/sm_90a.pb
  timeout 200 ./.device/device_runner --workloads=benchmark --kernels=$variants $b/sm_90a.variants.pb
  timeout 120 ./.device/device_runner --workloads=benchmark --kernels=$defaults $b/sm_90a.pb
} 2>&1 | tee "$out/benchmark.txt"
python3 .device/peers.py --only=gemm_f16/,gemm_bf16/,gemm_bias_gelu_f16/ 2>&1 | tee "$out/peers.csv"
