"""Peer figures measured in the same run as Tessera's kernels (GPU machine).

Times torch.add on float32 vectors of the benchmark sizes with CUDA events
(warm-up, median of many runs, L2 flushed between runs, like the runtime's
TimeIt) and prints one CSV row per size: peer,workload,median_ms,tb_per_s.
"""

import statistics
import sys

import torch


def time_op(fn, iterations=50, warmup=5):
    flush = torch.empty(2 * 60 * 1024 * 1024 // 4 * 4, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(iterations):
        flush.fill_(0xFF)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def vector_add(n):
    a = torch.rand(n, device="cuda") * 2 - 1
    b = torch.rand(n, device="cuda") * 2 - 1
    c = torch.empty_like(a)
    ms = time_op(lambda: torch.add(a, b, out=c))
    assert torch.equal(c, a + b)
    return ms, 12.0 * n / (ms * 1e-3) / 1e12


def main():
    print("peer,workload,median_ms,tb_per_s")
    for n in (1 << 28, (1 << 28) - 3):
        ms, tbs = vector_add(n)
        print(f"torch.add,vector_add/n={n},{ms:.4f},{tbs:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
