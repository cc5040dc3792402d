"""Peer figures measured in the same run as Tessera's kernels (GPU machine).

Times torch.add on float32 vectors of the benchmark sizes with CUDA events
(warm-up, median of many runs, L2 flushed between runs, like the runtime's
TimeIt) and prints one CSV row per size: peer,workload,median_ms,tb_per_s.
--vector-add-only stops after the vector adds; --gemm-only skips the
softmax, norm and epilogue peers (cuBLAS matmuls only).
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


def matmul(m, n, k, dtype):
    a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    ms = time_op(lambda: torch.matmul(a, b, out=c))
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def softmax(m, n, dtype):
    x = torch.rand(m, n, device="cuda", dtype=dtype) * 2 - 1
    y = torch.empty_like(x)
    ms = time_op(lambda: torch.softmax(x, dim=-1))
    return ms, 2.0 * x.element_size() * m * n / (ms * 1e-3) / 1e12


def norm(m, n, dtype, layer):
    x = torch.rand(m, n, device="cuda", dtype=dtype) * 2 - 1
    w = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
    if layer:
        fn = lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
    else:
        fn = lambda: torch.nn.functional.rms_norm(x, (n,), w, 1e-6)
    ms = time_op(fn)
    return ms, 2.0 * x.element_size() * m * n / (ms * 1e-3) / 1e12


def gemm_epilogue(m, n, k, dtype, kind, compiled=False):
    """torch's matmul followed by the epilogue: eager (unfused kernels) or
    torch.compile (Inductor may fuse the epilogue into a Triton kernel)."""
    a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1
    bias = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
    r = torch.rand(m, n, device="cuda", dtype=dtype) * 2 - 1
    F = torch.nn.functional
    chains = {
        "gelu": lambda a, b, bias, r: F.gelu(torch.matmul(a, b) + bias, approximate="tanh"),
        "gelu_erf": lambda a, b, bias, r: F.gelu(torch.matmul(a, b) + bias),
        "silu": lambda a, b, bias, r: F.silu(torch.matmul(a, b) + bias),
        "residual": lambda a, b, bias, r: torch.matmul(a, b) + bias + r,
    }
    chain = chains[kind]
    if compiled:
        chain = torch.compile(chain)
        chain(a, b, bias, r)  # compile outside the timing
    ms = time_op(lambda: chain(a, b, bias, r))
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def main():
    print("peer,workload,median_ms,rate")
    for n in (1 << 28, (1 << 28) - 3):
        ms, tbs = vector_add(n)
        print(f"torch.add,vector_add/n={n},{ms:.4f},{tbs:.3f} TB/s")
    sys.stdout.flush()
    if "--vector-add-only" in sys.argv:
        return
    gemm_only = "--gemm-only" in sys.argv
    for name, m, n, dtype in () if gemm_only else (("softmax_f16", 16384, 8192, torch.float16),
                              ("softmax_f32", 16384, 8192, torch.float32),
                              ("softmax_f16_32000", 4096, 32000, torch.float16),
                              ("softmax_f16_1000", 65536, 1000, torch.float16)):
        ms, tbs = softmax(m, n, dtype)
        print(f"torch.softmax,{name}/{m}x{n},{ms:.4f},{tbs:.3f} TB/s")
        sys.stdout.flush()
    epilogues = (("gelu", "gemm_bias_gelu_f16"), ("gelu_erf", "gemm_bias_gelu_erf_f16"),
                 ("silu", "gemm_bias_silu_f16"), ("residual", "gemm_bias_residual_f16"))
    for kind, kernel in () if gemm_only else epilogues:
        for size in (2048, 8192):
            ms, tflops = gemm_epilogue(size, size, size, torch.float16, kind)
            print(f"torch unfused {kind},{kernel}/{size}x{size}x{size},{ms:.4f},{tflops:.1f} TFLOP/s")
            sys.stdout.flush()
    for size in () if gemm_only else (2048, 8192):
        try:
            ms, tflops = gemm_epilogue(size, size, size, torch.float16, "gelu", compiled=True)
            print(f"torch.compile gelu,gemm_bias_gelu_f16/{size}x{size}x{size},{ms:.4f},"
                  f"{tflops:.1f} TFLOP/s")
        except Exception as e:  # Inductor needs a working Triton toolchain
            print(f"torch.compile gelu,gemm_bias_gelu_f16/{size}x{size}x{size},failed: "
                  f"{type(e).__name__}")
        sys.stdout.flush()
    for name, layer in () if gemm_only else (("rmsnorm_f16", False), ("layernorm_f16", True)):
        ms, tbs = norm(16384, 8192, torch.float16, layer)
        print(f"torch.{name.split('_')[0]},{name}/16384x8192,{ms:.4f},{tbs:.3f} TB/s")
        sys.stdout.flush()
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for m, n, k in ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                        (3000, 5000, 4000), (8192, 8192, 1000)):
            ms, tflops = matmul(m, n, k, dtype)
            print(f"torch.matmul,gemm_{name}/{m}x{n}x{k},{ms:.4f},{tflops:.1f} TFLOP/s")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
