#!/usr/bin/env bash
# Our GEMMs and cuBLAS (torch.matmul) taking turns, $ROUNDS rounds, on the GPU
# machine after prepare.sh here: each round, shape by shape, times every
# kernel of $KERNELS at the shape, then torch.matmul at it, so that clock
# and temperature drift falls on both sides. Prints per kernel and shape the
# median TFLOP/s of each side and the median of the per-round ratios.
#
#   KERNELS="gemm_bf16@.device/bundles/sm_90a.variants.pb gemm_f16@.device/bundles/sm_80.pb" \
#     ROUNDS=4 OUT=/tmp/o bash .device/paired.sh
#
# A kernel is "name@bundle.pb"; its peer is peers.py's for its family (the
# name before "__"): torch.matmul for gemm_f16 and gemm_bf16, torch._scaled_mm
# for fp8_gemm, torch._int_mm for gemm_i8, torch.matmul with TF32 for
# gemm_tf32. Both sides enqueue their
# timed runs back to back; SYNC_EACH_RUN=1 makes both wait for each run
# (device_runner and peers.py --sync-each-run). INPUTS lists the kinds of
# inputs both sides run on, each in every round, a table each: f32 (the
# default: uniform in float32, rounded to the type) and torch (torch.rand in
# the 16-bit type, `--inputs=torch`; inputs.sh runs both). GEMM_SHAPES=
# "MxNxK,..." runs both sides at those shapes instead of the issue's.
set -uo pipefail
out="${OUT:-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
sync=""
[ "${SYNC_EACH_RUN:-0}" = 1 ] && sync="--sync-each-run"
families=$(for k in $KERNELS; do k="${k%%@*}"; echo "${k%%__*}/"; done | sort -u | paste -sd, -)
# One shape at a time, ours then cuBLAS's (PER_SHAPE=0: every shape of ours,
# then every shape of cuBLAS, as before run 149): in the issue's order
# cuBLAS ran 3000 x 5000 x 4000 and 8192 x 8192 x 1000 15-18% slower right
# after 8192^3 than on their own (RESULTS.md runs 144, 148, 151); ours did not.
shapes="${GEMM_SHAPES:-2048x2048x2048,4096x4096x4096,8192x8192x8192,3000x5000x4000,8192x8192x1000}"
[ "${PER_SHAPE:-1}" = 1 ] && groups="${shapes//,/ }" || groups="$shapes"
for round in $(seq "${ROUNDS:-4}"); do
  for inputs in ${INPUTS:-f32}; do
    for group in $groups; do
      flags="$sync --gemm-shapes=$group"
      [ "$inputs" = torch ] && flags="$flags --inputs=torch"
      for k in $KERNELS; do
        timeout 120 ./.device/device_runner --workloads=benchmark ${flags} --kernels="${k%%@*}" \
          "${k#*@}" 2>&1 |
          grep -E "^sm_" | sed "s|^|r$round $inputs ${k#*@} |"
      done
      python3 .device/peers.py --gemm-only --only="$families" ${flags} 2>&1 |
        grep "^torch" | sed "s/^/r$round $inputs /"
    done
  done
done > "$out/paired.txt"
python3 - "$out/paired.txt" <<'PY'
import collections, re, statistics, sys
ours = collections.defaultdict(dict)   # (inputs, bundle, kernel, shape) -> round -> TFLOP/s
peer = collections.defaultdict(dict)   # (inputs, family, shape) -> round -> TFLOP/s
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 2 and f[2].startswith("torch"):
        fields = f[2].split(",")
        if len(fields) < 4:  # "failed: ..." (a peer this torch build lacks)
            continue
        _, workload, ms, tf = fields[:4]
        fam, shape = workload.split("/")
        peer[(f[1], fam, shape)][f[0]] = float(tf.split()[0])
        continue
    m = re.match(r"(r\d+) (\S+) (\S+) (\S+)\s+(\S+)/(\S+)\s+(ok|FAIL).*\s([\d.]+) TFLOP/s", line)
    if m and m.group(7) == "ok":
        key = (m.group(2), "/".join(m.group(3).split("/")[-2:]), m.group(4) + " " + m.group(5), m.group(6))
        ours[key][m.group(1)] = float(m.group(8))
kinds = sorted({key[0] for key in ours})
for kind in kinds:
    if len(kinds) > 1:
        print(f"\ninputs: {kind}\n")
    print("| kernel | bundle | shape | ours (median TFLOP/s) | peer (median) "
          "| ratio, median of rounds | per round |")
    print("|---|---|---|---|---|---|---|")
    for (inputs, bundle, kernel, shape), rounds in sorted(ours.items()):
        if inputs != kind:
            continue
        fam = kernel.split()[1].split("__")[0]
        p = peer.get((inputs, fam, shape), {})
        ratios = [rounds[r] / p[r] for r in sorted(rounds) if r in p]
        if not ratios:
            continue
        print(f"| {kernel} | {bundle} | {shape} | {statistics.median(rounds.values()):.1f} | "
              f"{statistics.median(p.values()):.1f} | {statistics.median(ratios):.3f} | "
              + " ".join(f"{x:.3f}" for x in ratios) + " |")
PY
