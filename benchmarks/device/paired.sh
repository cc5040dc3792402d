#!/usr/bin/env bash
# Our GEMMs and cuBLAS (torch.matmul) taking turns, $ROUNDS rounds, on the GPU
# machine after prepare.sh here: each round times every kernel of $KERNELS at
# every benchmark shape, then torch.matmul at the same shapes, so that clock
# and temperature drift falls on both sides. Prints per kernel and shape the
# median TFLOP/s of each side and the median of the per-round ratios.
#
#   KERNELS="gemm_bf16@.device/bundles/sm_90a.variants.pb gemm_f16@.device/bundles/sm_80.pb" \
#     ROUNDS=4 OUT=/tmp/o bash .device/paired.sh
#
# A kernel is "name@bundle.pb"; its peer is torch.matmul of its dtype (the
# family name before "__": gemm_f16, gemm_bf16). Both sides enqueue their
# timed runs back to back; SYNC_EACH_RUN=1 makes both wait for each run
# (device_runner and peers.py --sync-each-run).
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
flags=""
[ "${SYNC_EACH_RUN:-0}" = 1 ] && flags="--sync-each-run"
# INPUTS=torch: both sides on torch.rand's 16-bit inputs (see inputs.sh).
[ "${INPUTS:-}" = torch ] && flags="$flags --inputs=torch"
families=$(for k in $KERNELS; do k="${k%%@*}"; echo "${k%%__*}/"; done | sort -u | paste -sd, -)
for round in $(seq "${ROUNDS:-4}"); do
  for k in $KERNELS; do
    timeout 120 ./.device/device_runner --workloads=benchmark ${flags} --kernels="${k%%@*}" \
      "${k#*@}" 2>&1 |
      grep -E "^sm_" | sed "s|^|r$round ${k#*@} |"
  done
  python3 .device/peers.py --gemm-only --only="$families" ${flags} 2>&1 | grep "^torch.matmul" |
    sed "s/^/r$round /"
done > "$out/paired.txt"
python3 - "$out/paired.txt" <<'PY'
import collections, re, statistics, sys
ours = collections.defaultdict(dict)   # (bundle, kernel, shape) -> round -> TFLOP/s
peer = collections.defaultdict(dict)   # (family, shape) -> round -> TFLOP/s
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 1 and f[1].startswith("torch.matmul"):
        _, workload, ms, tf = f[1].split(",")[:4]
        fam, shape = workload.split("/")
        peer[(fam, shape)][f[0]] = float(tf.split()[0])
        continue
    m = re.match(r"(r\d+) (\S+) (\S+)\s+(\S+)/(\S+)\s+(ok|FAIL).*\s([\d.]+) TFLOP/s", line)
    if m and m.group(6) == "ok":
        ours[(m.group(2).split("/")[-1], m.group(3) + " " + m.group(4), m.group(5))][m.group(1)] = float(m.group(7))
print("| kernel | bundle | shape | ours (median TFLOP/s) | cuBLAS (median) | ratio, median of rounds | per round |")
print("|---|---|---|---|---|---|---|")
for (bundle, kernel, shape), rounds in sorted(ours.items()):
    fam = kernel.split()[1].split("__")[0]
    p = peer.get((fam, shape), {})
    ratios = [rounds[r] / p[r] for r in sorted(rounds) if r in p]
    if not ratios:
        continue
    print(f"| {kernel} | {bundle} | {shape} | {statistics.median(rounds.values()):.1f} | "
          f"{statistics.median(p.values()):.1f} | {statistics.median(ratios):.3f} | "
          + " ".join(f"{x:.3f}" for x in ratios) + " |")
PY
