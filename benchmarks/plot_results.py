#!/usr/bin/python3
"""Renders the README's results plot from benchmarks/results.csv.

Each row of the CSV is one workload: our figure, the peer's from the same
call on the GPU, and their ratio (above 1: Tessera is faster; for times in
ms the ratio is the peer's time over ours). The `record` column names the
run in benchmarks/RESULTS.md the figures are copied from. The plot is a
horizontal bar chart of the ratios with a line at 1.0.

  /usr/bin/python3 benchmarks/plot_results.py [CSV] [PNG]
      # defaults: benchmarks/results.csv, docs/results.png

Needs Debian's matplotlib: apt-get install python3-matplotlib.
"""
import csv
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_results.py: matplotlib is missing; install it with "
             "`apt-get install python3-matplotlib` and run /usr/bin/python3")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def label(row):
    """'GEMM sm_90a f16 4096^3 vs cuBLAS': the workload, its shape, the peer."""
    dims = row["shape"].split("x")
    shape = f"{dims[0]}^3" if len(dims) == 3 and len(set(dims)) == 1 else row["shape"]
    return f"{row['workload']} {row['dtype']} {shape} vs {row['peer_name']}"


def main():
    csv_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "benchmarks", "results.csv")
    png_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs", "results.png")
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_results.py: no rows in {csv_path}")

    rows.reverse()  # barh draws bottom-up: keep the CSV's order top-down
    labels = [label(r) for r in rows]
    ratios = [float(r["ratio"]) for r in rows]
    colors = ["#2f7ed8" if x >= 1.0 else "#f28f43" for x in ratios]

    fig, ax = plt.subplots(figsize=(9, 0.36 * len(rows) + 1.4))
    bars = ax.barh(range(len(rows)), ratios, color=colors, height=0.7)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=9)
    for bar, x, row in zip(bars, ratios, rows):
        # The ratio as recorded, right of the bar (and of the 1.0 line when
        # the bar ends just short of it).
        at = max(x, 1.0) if x > 0.9 else x
        ax.text(at + 0.03, bar.get_y() + bar.get_height() / 2, row["ratio"] + "x",
                va="center", fontsize=8)
    ax.set_xlim(0, max(ratios) * 1.12)
    ax.set_xlabel("ratio to the peer (above 1: Tessera faster), NVIDIA H200")
    ax.set_title("Tessera against its peers (benchmarks/RESULTS.md)", fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    os.makedirs(os.path.dirname(png_path), exist_ok=True)
    fig.savefig(png_path, dpi=110)
    print(f"plot_results.py: wrote {png_path} ({len(rows)} workloads)")


if __name__ == "__main__":
    main()
