#!/usr/bin/env bash
# The sm_80 build against two peers in one call, on the GPU machine after
# prepare.sh here: Triton's mma.sync GEMM compiled for sm_80 and JIT-compiled
# by the driver as ours is (benchmarks/triton_sm80.py: its configurations
# tuned per shape, then alternated with torch.matmul), then our sm_80
# kernels of $KERNELS alternated with torch.matmul (paired.sh). Both print
# ratios to cuBLAS from the same call.
#
#   ROUNDS=3 OUT=/tmp/o bash .device/sm80_peers.sh
#
# GEMM_SHAPES="MxNxK,..." narrows both halves, DTYPES=f16,bf16 Triton's; OURS=0 runs
# Triton's half only; KERNELS as paired.sh's.
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
V80=.device/bundles/sm_80.variants.pb
shapes="${GEMM_SHAPES:-2048x2048x2048,4096x4096x4096,8192x8192x8192,3000x5000x4000,8192x8192x1000}"
PYTHONUNBUFFERED=1 timeout 400 python3 .device/triton_sm80.py --rounds="${ROUNDS:-3}" \
  --gemm-shapes="$shapes" --dtypes="${DTYPES:-f16,bf16}" 2>&1 | tee "$out/triton_sm80.txt"
[ "${OURS:-1}" = 1 ] || exit 0
KERNELS="${KERNELS:-gemm_f16@.device/bundles/sm_80.pb gemm_f16__streamk_group4@$V80
gemm_f16__streamk_edge@$V80 gemm_bf16__streamk@$V80 gemm_bf16__streamk_edge@$V80}" \
  ROUNDS="${ROUNDS:-3}" GEMM_SHAPES="$shapes" OUT="$out" bash .device/paired.sh
