"""FlashAttention's benchmark table: our kernels (device_runner's CSV) beside
torch SDPA on cuDNN and on flash (peers.py --attention's CSV), both measured
in the same run. One row per target and workload: TFLOP/s (4 b h Sq Skv D,
half of it when causal) of each, and our ratio to each peer.

    python3 attention_table.py OURS.csv PEERS.csv
"""

import csv
import re
import sys


def flops(workload):
    """FLOPs of a flash_attention_* workload from its name."""
    kernel, problem = workload.split("/")
    d = int(re.search(r"_d(\d+)", kernel).group(1))
    sizes = dict(re.findall(r"([a-z]+)(\d+)", problem))
    total = 4.0 * int(sizes["b"]) * int(sizes["h"]) * int(sizes["sq"]) * int(sizes["skv"]) * d
    return total * (0.5 if kernel.endswith("_causal") else 1.0)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: attention_table.py OURS.csv PEERS.csv")
    peers = {}
    with open(sys.argv[2]) as f:
        for row in csv.reader(f):
            if len(row) == 4 and row[0].startswith("sdpa") and row[2] != "median_ms":
                try:
                    peers[(row[0], row[1])] = float(row[2])
                except ValueError:
                    pass
    print(f"{'target':7} {"workload":64} {'ours':>7} {'cudnn':>7} {'flash':>7} "
          f"{'/cudnn':>7} {'/flash':>7}  (TFLOP/s)")
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            workload = row["workload"]
            if not workload.startswith("flash_attention"):
                continue
            ms = float(row["median_ms"] or 0)
            ours = flops(workload) / (ms * 1e-3) / 1e12 if ms > 0 else 0.0
            cells = []
            for peer in ("sdpa cudnn", "sdpa flash"):
                peer_ms = peers.get((peer, workload))
                cells.append(flops(workload) / (peer_ms * 1e-3) / 1e12 if peer_ms else None)
            ok = "" if row["correct"] == "1" else "  WRONG"
            text = lambda x: f"{x:7.1f}" if x else f"{'-':>7}"
            ratio = lambda x: f"{ours / x:7.2f}" if x and ours else f"{'-':>7}"
            print(f"{row['target']:7} {workload:64} {ours:7.1f} {text(cells[0])} "
                  f"{text(cells[1])} {ratio(cells[0])} {ratio(cells[1])}{ok}")


if __name__ == "__main__":
    main()
