#!/usr/bin/env bash
# Does the input distribution move the timings? Our GEMMs and cuBLAS
# (torch.matmul) each timed on two kinds of uniform [-1, 1) inputs, taking
# turns for $ROUNDS rounds on the GPU machine after prepare.sh here:
#   f32:   drawn in float32, rounded to the 16-bit type (device_runner's and
#          peers.py's default);
#   torch: torch.rand in the 16-bit type, scaled there (`--inputs=torch` on
#          both sides: the low mantissa bits of small values are zero).
# Prints per kernel and shape each side's median TFLOP/s on each kind and
# the ratio to cuBLAS on the same kind (median of the rounds' ratios).
#
#   KERNELS="gemm_f16@.device/bundles/sm_90a.pb" ROUNDS=3 OUT=/tmp/o bash .device/inputs.sh
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
families=$(for k in $KERNELS; do k="${k%%@*}"; echo "${k%%__*}/"; done | sort -u | paste -sd, -)
for round in $(seq "${ROUNDS:-3}"); do
  for inputs in f32 torch; do
    flag=""
    [ "$inputs" = torch ] && flag="--inputs=torch"
    for k in $KERNELS; do
      timeout 120 ./.device/device_runner --workloads=benchmark ${flag} --kernels="${k%%@*}" \
        "${k#*@}" 2>&1 | grep -E "^sm_" | sed "s|^|r$round $inputs ${k#*@} |"
    done
    python3 .device/peers.py --gemm-only --only="$families" ${flag} 2>&1 |
      grep "^torch.matmul" | sed "s/^/r$round $inputs /"
  done
done > "$out/inputs.txt"
python3 - "$out/inputs.txt" <<'PY'
import collections, re, statistics, sys
ours = collections.defaultdict(dict)  # (kernel, shape, inputs) -> round -> TFLOP/s
peer = collections.defaultdict(dict)  # (family, shape, inputs) -> round -> TFLOP/s
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 2 and f[2].startswith("torch.matmul"):
        _, workload, ms, tf = f[2].split(",")[:4]
        fam, shape = workload.split("/")
        peer[(fam, shape, f[1])][f[0]] = float(tf.split()[0])
        continue
    m = re.match(r"(r\d+) (\S+) (\S+) (\S+)\s+(\S+)/(\S+)\s+ok.*\s([\d.]+) TFLOP/s", line)
    if m:
        kernel = m.group(3).split("/")[-1] + " " + m.group(4) + " " + m.group(5)
        ours[(kernel, m.group(6), m.group(2))][m.group(1)] = float(m.group(7))
med = statistics.median
print("| kernel | shape | ours f32 / torch inputs | cuBLAS f32 / torch inputs "
      "| ratio, f32 inputs | ratio, torch inputs |")
print("|---|---|---|---|---|---|")
for kernel, shape in sorted({(k, s) for k, s, _ in ours}):
    fam = kernel.split()[2].split("__")[0]
    row = [kernel, shape]
    o = {i: ours.get((kernel, shape, i), {}) for i in ("f32", "torch")}
    p = {i: peer.get((fam, shape, i), {}) for i in ("f32", "torch")}
    if not all(o.values()) or not all(p.values()):
        continue
    row.append(f"{med(o['f32'].values()):.1f} / {med(o['torch'].values()):.1f}")
    row.append(f"{med(p['f32'].values()):.1f} / {med(p['torch'].values()):.1f}")
    for i in ("f32", "torch"):
        r = [o[i][k] / p[i][k] for k in sorted(o[i]) if k in p[i]]
        if not r:
            row.append("-")
            continue
        row.append(f"{med(r):.3f} ({' '.join(f'{x:.3f}' for x in r)})")
    print("| " + " | ".join(row) + " |")
PY
