#!/usr/bin/env bash
# The ping-pong schedule against the default sm_90a GEMMs, on the GPU
# machine after prepare.sh here: conformance of the ping-pong cases on every
# backend (the whole suite on sm_90a), then the default kernels, the
# ping-pong variants and the defaults again (drift shows), torch beside
# them. (The variants bundle holds PTX only: its SASS is read here with
# ptxas + nvdisasm.)
#
#   OUT=/tmp/o bash .device/pingpong.sh
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
b=.device/bundles
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
pp=gemm_f16_pingpong,gemm_bias_gelu_f16_pingpong
{
  timeout 120 ./.device/device_runner --workloads=conformance $b/sm_90a.conformance.pb
  for t in sm_60 sm_70 sm_80; do
    timeout 60 ./.device/device_runner --workloads=conformance --kernels=$pp $b/$t.conformance.pb
  done
} 2>&1 | tee "$out/conformance.txt"
defaults=gemm_f16,gemm_bias_gelu_f16
variants=gemm_f16__pingpong,gemm_bias_gelu_f16__pingpong,gemm_bias_gelu_f16__compact
{
  timeout 120 ./.device/device_runner --workloads=benchmark --kernels=$defaults $b/sm_90a.pb
  timeout 150 ./.device/device_runner --workloads=benchmark --kernels=$variants,gemm_bf16,gemm_bf16__pingpong $b/sm_90a.variants.pb
  timeout 120 ./.device/device_runner --workloads=benchmark --kernels=$defaults $b/sm_90a.pb
} 2>&1 | tee "$out/benchmark.txt"
python3 .device/peers.py --only=gemm_f16/,gemm_bf16/,gemm_bias_gelu_f16/ 2>&1 | tee "$out/peers.csv"
