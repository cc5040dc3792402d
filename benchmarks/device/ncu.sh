#!/usr/bin/env bash
# Nsight Compute on the GPU machine after prepare.sh here: one warm launch of
# each of our GEMM kernels at one shape, and cuBLAS (torch.matmul) at the same
# shapes, with the sections that say where time goes (speed of light, memory,
# compute pipes, warp states). Clocks are left alone (METHOD.md).
#
#   PROFILE="gemm_bf16:4096 gemm_bf16__grid_mc:4096" PEERS="bf16:4096" \
#     OUT=/tmp/o bash .device/ncu.sh
#
# A PROFILE entry is KERNEL:SIZE, SIZE one of the GEMM benchmark shapes
# (2048, 4096, 8192 for the cubes, 3000x5000x4000, 8192x8192x1000) or, for
# a plain GEMM, any MxNxK (run alone with device_runner --gemm-shapes): each
# shape's runs are 1 check, 5 warm-ups and 50 timed launches, so the launch
# picked is the fifth of that shape. EXTRA_METRICS: more metrics,
# comma-separated (e.g. sm__cycles_active.min,sm__cycles_active.max: how
# evenly the SMs work).
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
source "$(dirname "$0")/common.sh"
ncu=$(find_ncu) || exit 1
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
  --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second${EXTRA_METRICS:+,$EXTRA_METRICS}"
bundles="${BUNDLES:-.device/bundles/sm_90a.pb .device/bundles/sm_90a.variants.pb}"
for entry in ${PROFILE:-}; do
  kernel="${entry%%:*}"; size="${entry##*:}"
  launch=$(profile_launch "$size") || { echo "bad size $size"; continue; }
  read -r skip shapes <<<"$launch"
  echo "== $kernel at $size (launch $skip)"
  timeout 300 "$ncu" --clock-control none $sections -k "regex:^${kernel}\$" --launch-skip "$skip" \
    --launch-count 1 ./.device/device_runner --workloads=benchmark $shapes --kernels="$kernel" $bundles \
    > "$out/ncu_${kernel}_${size}.txt" 2>&1
  grep -E "Duration|SM Frequency|Throughput|Hit Rate|gmma|lts__t_bytes|per_second${EXTRA_METRICS:+|${EXTRA_METRICS//,/|}}" \
    "$out/ncu_${kernel}_${size}.txt" | head -48
  grep -E "stalled" "$out/ncu_${kernel}_${size}.txt" | sort -k3 -g -r | head -8
done
for peer in ${PEERS:-}; do
  dtype="${peer%%:*}"; size="${peer##*:}"
  echo "== torch.matmul $dtype at $size^3"
  timeout 300 "$ncu" --clock-control none $sections -k "regex:nvjet|gemm|xmma|cutlass" \
    --launch-skip 3 --launch-count 1 python3 -c "
import torch
a = torch.rand($size, $size, device='cuda', dtype=torch.$dtype) * 2 - 1
b = torch.rand($size, $size, device='cuda', dtype=torch.$dtype) * 2 - 1
c = torch.empty($size, $size, device='cuda', dtype=torch.$dtype)
for _ in range(6): torch.matmul(a, b, out=c)
torch.cuda.synchronize()
" > "$out/ncu_torch_${dtype}_${size}.txt" 2>&1
  grep -E "^  [a-z_0-9]+.*\(|Duration|SM Frequency|Throughput|Hit Rate|gmma|lts__t_bytes|per_second" \
    "$out/ncu_torch_${dtype}_${size}.txt" | head -40
  grep -E "stalled" "$out/ncu_torch_${dtype}_${size}.txt" | sort -k3 -g -r | head -8
done
