#!/usr/bin/env bash
# The GEMM and reduction tables in one call, on the GPU machine after
# prepare.sh here: conformance of every backend; the default kernels of
# sm_80 and sm_90a (GEMMs, fused GEMM, softmax, norms); each sm_90a and sm_80
# GEMM family autotuned over its variants (runtime::Autotune, the winner
# timed again); with a bundle $B/sm_80.hand.pb (hand-edited PTX added by
# `tessera-run --add-variant`), its gemm_f16 variants against the default,
# interleaved twice; torch last. Outputs to $OUT.
#
#   OUT=/tmp/o bash .device/tables.sh
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
b=.device/bundles
r=./.device/device_runner
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
timeout 400 $r --workloads=conformance $b/sm_60.conformance.pb $b/sm_70.conformance.pb \
  $b/sm_80.conformance.pb $b/sm_90a.conformance.pb > "$out/conformance.txt" 2>&1
grep -E "FAIL|passed" "$out/conformance.txt" | tail -n 5
if [ -f $b/sm_80.hand.pb ]; then
  hand=$(./.device/tessera-run --bundle=$b/sm_80.hand.pb --list | grep -o '^gemm_f16__[a-z0-9_]*' | sort -u)
  for round in 1 2; do
    for k in gemm_f16 $hand; do
      timeout 60 $r --workloads=benchmark --kernels=$k $b/sm_80.hand.pb 2>&1 | grep -E "^sm_80"
    done
  done > "$out/ab.txt"
fi
kernels=gemm_f16,gemm_bf16,gemm_bias_gelu_f16,gemm_bias_gelu_erf_f16,gemm_bias_silu_f16,gemm_bias_residual_f16,softmax_f16,softmax_f32,softmax_f16_32000,softmax_f16_1000,rmsnorm_f16,layernorm_f16
{
  for t in sm_90a sm_80; do
    timeout 150 $r --workloads=benchmark --kernels=$kernels $b/$t.pb $b/$t.variants.pb
  done
  for t in sm_90a sm_80; do
    timeout 150 $r --workloads=benchmark --autotune --tune-cache="$out/tune_cache.txt" \
      --kernels=gemm_f16,gemm_bf16,gemm_bias_gelu_f16 $b/$t.pb $b/$t.variants.pb
  done
} > "$out/benchmark.txt" 2>&1
grep -cE " ok " "$out/benchmark.txt"; grep -E "FAIL" "$out/benchmark.txt" | head
python3 .device/peers.py > "$out/peers.csv" 2>&1
