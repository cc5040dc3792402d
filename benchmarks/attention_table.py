"""FlashAttention's benchmark table: our kernels (device_runner's CSV) beside
torch SDPA on cuDNN and on flash (peers.py --attention's CSV), both measured
in the same run. One row per target and workload: TFLOP/s (4 b h Sq Skv D,
half of it when causal) of each, and our ratio to each peer.

    python3 attention_table.py OURS.csv PEERS.csv
    python3 attention_table.py OURS1.csv PEERS1.csv OURS2.csv PEERS2.csv ...

With several pairs (paired rounds, attention_paired.sh), each row gives the
medians of each side over the rounds and the median of the per-round ratios.
"""

import csv
import re
import statistics
import sys


def flops(workload):
    """FLOPs of a flash_attention_* workload from its name."""
    kernel, problem = workload.split("/")
    d = int(re.search(r"_d(\d+)", kernel).group(1))
    sizes = dict(re.findall(r"([a-z]+)(\d+)", problem))
    total = 4.0 * int(sizes["b"]) * int(sizes["h"]) * int(sizes["sq"]) * int(sizes["skv"]) * d
    return total * (0.5 if kernel.endswith("_causal") else 1.0)


def read_peers(path):
    """{(peer, workload): median ms} from peers.py --attention's CSV."""
    peers = {}
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) == 4 and row[0].startswith("sdpa") and row[2] != "median_ms":
                try:
                    peers[(row[0], row[1])] = float(row[2])
                except ValueError:
                    pass
    return peers


def read_ours(path):
    """[(target, workload, ms, correct)] from device_runner's CSV."""
    with open(path) as f:
        return [(row["target"], row["workload"], float(row["median_ms"] or 0), row["correct"] == "1")
                for row in csv.DictReader(f) if row["workload"].startswith("flash_attention")]


PEERS = ("sdpa cudnn", "sdpa flash")


def main():
    args = sys.argv[1:]
    if len(args) < 2 or len(args) % 2:
        sys.exit("usage: attention_table.py OURS.csv PEERS.csv [OURS.csv PEERS.csv ...]")
    # Per (target, workload): our TFLOP/s and each peer's, round by round.
    rounds = {}
    for ours_path, peers_path in zip(args[0::2], args[1::2]):
        peers = read_peers(peers_path)
        for target, workload, ms, correct in read_ours(ours_path):
            rate = lambda t: flops(workload) / (t * 1e-3) / 1e12 if t else None
            entry = rounds.setdefault((target, workload), {"ours": [], "ok": True,
                                                            **{p: [] for p in PEERS}})
            entry["ours"].append(rate(ms))
            entry["ok"] &= correct
            for p in PEERS:
                entry[p].append(rate(peers.get((p, workload))))
    paired = len(args) > 2
    print(f"{'target':7} {'workload':64} {'ours':>7} {'cudnn':>7} {'flash':>7} "
          f"{'/cudnn':>7} {'/flash':>7}  (TFLOP/s{', medians of ' + str(len(args) // 2) + ' rounds' if paired else ''})")
    for (target, workload), e in rounds.items():
        ours = [x for x in e["ours"] if x]
        text = lambda xs: f"{statistics.median(xs):7.1f}" if xs else f"{'-':>7}"
        cells, ratios = [], []
        for p in PEERS:
            cells.append(text([x for x in e[p] if x]))
            per_round = [o / x for o, x in zip(e["ours"], e[p]) if o and x]
            ratios.append(f"{statistics.median(per_round):7.2f}" if per_round else f"{'-':>7}")
        ok = "" if e["ok"] else "  WRONG"
        line = f"{target:7} {workload:64} {text(ours)} {cells[0]} {cells[1]} {ratios[0]} {ratios[1]}{ok}"
        if paired:
            line += "  rounds /cudnn " + " ".join(
                f"{o / x:.2f}" for o, x in zip(e["ours"], e["sdpa cudnn"]) if o and x)
        print(line)


if __name__ == "__main__":
    main()
