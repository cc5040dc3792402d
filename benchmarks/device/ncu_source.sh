#!/usr/bin/env bash
# Where one GEMM kernel's warps stall, per SASS instruction (Nsight Compute's
# source page, warp stall sampling), on the GPU machine after prepare.sh:
# one warm launch at one GEMM shape (SIZE, as ncu.sh takes it), the 40
# instructions with the most samples and the sampled stall reasons of each.
#
#   KERNEL=gemm_bf16 SIZE=4096 BUNDLES=.device/bundles/sm_90a.variants.pb \
#     OUT=/tmp/o bash .device/ncu_source.sh
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
source "$(dirname "$0")/common.sh"
ncu=$(find_ncu) || exit 1
launch=$(profile_launch "${SIZE:-4096}") || { echo "bad size ${SIZE:-4096}"; exit 1; }
read -r skip shapes <<<"$launch"
timeout 300 "$ncu" --clock-control none --section SourceCounters --section WarpStateStats \
  --page source --print-source sass --csv -k "regex:^${KERNEL}\$" \
  --launch-skip "$skip" --launch-count 1 ./.device/device_runner \
  --workloads=benchmark $shapes --kernels="$KERNEL" $BUNDLES > "$out/source_${KERNEL}.csv" 2>&1
python3 - "$out/source_${KERNEL}.csv" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"#') or l.startswith('"Address') or 'Source' in l and 'Address' in l)
rows = list(csv.DictReader(lines[start:]))
key = next(k for k in rows[0] if 'Sampling (All' in k)
total = sum(float(r[key] or 0) for r in rows)
print('columns:', [k for k in rows[0]][:40])
print('total samples', total)
for r in sorted(rows, key=lambda r: -float(r[key] or 0))[:40]:
    print(f"{float(r[key] or 0) / total * 100:5.1f}%", r.get('Address', ''), r.get('Source', '')[:90])
PY
