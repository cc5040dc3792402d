"""Host time of a launch through the Python bridge, and tessera.ops beside
the same kernel launched directly.

Part 1 mirrors benchmarks/launch_overhead.cc: batches of 200 launches, the
host time until the last returns, the median over 15 rounds, in
microseconds a launch, for vector_add on one element (a no-op), gemm_f16 at
256^3 (TMA tensor maps on sm_90a) and FlashAttention on one tiny head:

  call      Kernel(*tensors) on the same tensors each time: the call's form
            (dtypes, shapes, devices, scalars) found in the kernel's cache of
            prepared launches, torch's current stream (in C where the
            extension tessera._fast_launch is built; TESSERA_FAST_LAUNCH=0
            times the Python path);
  call-new  the same, alternating between two sets of tensors, so that every
            launch has new addresses (and the GEMM re-encodes its tensor maps);
  prepared  Prepared(): one C call;
  op        tessera.ops.gemm / flash_attention: torch's custom-op dispatch,
            the output's allocation and the call.

Part 2 times large problems through tessera.ops and through the kernel
directly (CUDA events around batches of 10 back-to-back calls, the two
alternating, median of 20), to show the op adds nothing on the GPU.

  python3 benchmarks/bridge_overhead.py EXAMPLES_BUNDLE.pb   # e.g. .device/bundles/sm_90a.pb
"""

import statistics
import sys
import time

import torch

import tessera
import tessera.ops

BATCH, ROUNDS = 200, 15


def host_us(launch):
    samples = []
    for round_ in range(ROUNDS + 1):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(BATCH):
            launch()
        end = time.perf_counter()
        torch.cuda.synchronize()
        if round_:  # The first round warms up.
            samples.append((end - start) / BATCH * 1e6)
    return statistics.median(samples)


def paired_gpu_ms(first, second, repeats=20, batch=10):
    """GPU milliseconds a call of `first` and of `second`, from batches of
    back-to-back calls behind a first one (so that the queue runs ahead of
    the host: what a training step sees, not the host's time to one kernel),
    the two alternating batch by batch so that clocks and heat treat them
    alike; the medians."""
    times = ([], [])
    for round_ in range(repeats + 2):
        for launch, samples in zip((first, second), times):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            launch()
            start.record()
            for _ in range(batch):
                launch()
            end.record()
            end.synchronize()
            if round_ >= 2:
                samples.append(start.elapsed_time(end) / batch)
    return statistics.median(times[0]), statistics.median(times[1])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bridge_overhead.py EXAMPLES_BUNDLE.pb")
    dev = torch.device("cuda", 0)
    examples = tessera.load(sys.argv[1])
    rows = []

    def alternating(kernel, first, second):
        sets = [first, second]
        state = [0]

        def launch():
            state[0] ^= 1
            kernel(*sets[state[0]])

        return launch

    x = [torch.randn(1, device=dev) for _ in range(3)]
    y = [torch.randn(1, device=dev) for _ in range(3)]
    add = examples["vector_add"]
    rows.append(("vector_add", "1", host_us(lambda: add(*x)), host_us(alternating(add, x, y)),
                 host_us(add.prepare(*x).__call__), None))

    a, b = (torch.randn(256, 256, device=dev).half() for _ in range(2))
    c = torch.empty(256, 256, device=dev).half()
    other = [torch.randn(256, 256, device=dev).half() for _ in range(3)]
    gemm = tessera.ops.kernel_for(dev, "gemm_f16")
    rows.append(("gemm_f16", "256^3", host_us(lambda: gemm(a, b, c)),
                 host_us(alternating(gemm, (a, b, c), other)),
                 host_us(gemm.prepare(a, b, c).__call__),
                 host_us(lambda: tessera.ops.gemm(a, b))))

    q = torch.randn(1, 64, 1, 128, device=dev).half()
    o = torch.empty_like(q)
    lse = torch.empty(1, 1, 64, device=dev)
    q2, o2, lse2 = torch.randn_like(q), torch.empty_like(o), torch.empty_like(lse)
    attention = tessera.ops.kernel_for(dev, "flash_attention_f16_d128")
    rows.append(("flash_attention", "1x64x1x128", host_us(lambda: attention(q, q, q, o, lse, 0.1)),
                 host_us(alternating(attention, (q, q, q, o, lse, 0.1),
                                     (q2, q2, q2, o2, lse2, 0.1))),
                 host_us(attention.prepare(q, q, q, o, lse, 0.1).__call__),
                 host_us(lambda: tessera.ops.flash_attention(q, q, q, 0.1))))

    torch_add = host_us(lambda: torch.add(x[0], x[1], out=x[2]))
    print(f"# {torch.cuda.get_device_name(dev)}, torch {torch.__version__}; host us a launch "
          f"(median of {ROUNDS} batches of {BATCH}); repeated calls: {tessera.fast_launch_path()}")
    print(f"{'kernel':<16} {'shape':<12} {'call':>8} {'call-new':>9} {'prepared':>9} {'op':>8}")
    for name, shape, call, call_new, prepared, op in rows:
        op_text = f"{op:8.2f}" if op is not None else f"{'-':>8}"
        print(f"{name:<16} {shape:<12} {call:8.2f} {call_new:9.2f} {prepared:9.2f} {op_text}")
    print(f"# torch.add(out=) of one element, torch's own launch for scale: {torch_add:.2f}")

    print("# GPU ms a call (batches of 10, median of 20, alternating): tessera.ops vs the kernel "
          "called directly")
    a, b = (torch.randn(4096, 4096, device=dev).half() for _ in range(2))
    c = torch.empty(4096, 4096, device=dev).half()
    direct, op = paired_gpu_ms(lambda: gemm(a, b, c), lambda: tessera.ops.gemm(a, b))
    print(f"gemm_f16 4096^3        direct {direct:.4f}  op {op:.4f}  op/direct {op / direct:.4f}")
    q = torch.randn(4, 4096, 16, 128, device=dev).half()
    k, v = torch.randn_like(q), torch.randn_like(q)
    o = torch.empty_like(q)
    lse = torch.empty(4, 16, 4096, device=dev)
    direct, op = paired_gpu_ms(lambda: attention(q, k, v, o, lse, 0.088),
                               lambda: tessera.ops.flash_attention(q, k, v, 0.088))
    print(f"flash_attention 4x4096x16x128 direct {direct:.4f}  op {op:.4f}  "
          f"op/direct {op / direct:.4f}")


if __name__ == "__main__":
    main()
