"""Peer figures measured in the same run as Tessera's kernels (GPU machine).

Times torch.add on float32 vectors of the benchmark sizes with CUDA events
(warm-up, median of many runs, L2 flushed between runs, like the runtime's
TimeIt) and prints one CSV row per size: peer,workload,median_ms,tb_per_s.
--vector-add-only stops after the vector adds; --gemm-only skips the
softmax, norm and epilogue peers (cuBLAS matmuls only); --only=A,B keeps the
workloads whose name contains A or B; --sync-each-run waits for each timed
run before the next (see time_op); --gemm-shapes=MxNxK,... times the matmuls at
those shapes instead of the issue's (device_runner's flag of that name);
--attention times only torch's scaled_dot_product_attention on its cuDNN and
flash backends at FlashAttention's benchmark sizes; --decode SDPA at one query token for
flash_decoding's; --mla the absorbed MLA decode for mla_decode's; --grouped
a loop of torch matmuls and torch._grouped_mm for grouped_gemm's and grouped_gemm_ptr's (and of
torch._scaled_mm with block scales for grouped_gemm_fp8's); --varlen
FlashAttention-2's varlen kernel and cuDNN on a jagged tensor for
flash_attention_varlen's; --moe eager torch's MoE layer for moe's;
--inputs=torch draws the inputs the way torch users often do, torch.rand in the 16-bit type scaled to [-1, 1), instead
of the default, the distribution of Tessera's device_runner: uniform in
[-1, 1) in float32, rounded to the type (run 103 in RESULTS.md: the two
distributions time a GEMM differently, on either side).
"""

import itertools
import statistics
import sys

import torch

SYNC_EACH_RUN = "--sync-each-run" in sys.argv
TORCH_INPUTS = "--inputs=torch" in sys.argv


def uniform(*shape, dtype=torch.float32):
    """Uniform random values in [-1, 1) of `dtype`. By default drawn in float32
    and rounded to `dtype`, as device_runner draws our kernels' inputs (every
    mantissa bit random at every magnitude); with --inputs=torch drawn by
    torch.rand in `dtype` itself and scaled there, which leaves the low
    mantissa bits of small values zero."""
    if TORCH_INPUTS:
        return torch.rand(*shape, device="cuda", dtype=dtype) * 2 - 1
    return (torch.rand(*shape, device="cuda", dtype=torch.float32) * 2 - 1).to(dtype)


def time_op(fn, iterations=50, warmup=5):
    """Median milliseconds of `fn` between two CUDA events, the L2 flushed by a
    120 MiB write before each run, the way the runtime's TimeIt times our
    kernels: the runs (flush, event, fn, event) enqueued back to back, as
    triton.testing.do_bench does; with --sync-each-run each run is waited for
    before the next is enqueued (device_runner --sync-each-run does the same),
    which leaves the GPU idle between runs and times short kernels 2-3% faster
    on an H200 (RESULTS.md, run 81)."""
    flush = torch.empty(2 * 60 * 1024 * 1024 // 4 * 4, dtype=torch.uint8, device="cuda")
    for i in range(warmup):
        flush.fill_(i % 255 + 1)
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    for i in range(iterations):
        flush.fill_(i % 255 + 1)  # a new value each run, like TimeIt
        starts[i].record()
        fn()
        ends[i].record()
        if SYNC_EACH_RUN:
            ends[i].synchronize()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def vector_add(n):
    a = uniform(n)
    b = uniform(n)
    c = torch.empty_like(a)
    ms = time_op(lambda: torch.add(a, b, out=c))
    assert torch.equal(c, a + b)
    return ms, 12.0 * n / (ms * 1e-3) / 1e12


def matmul(m, n, k, dtype):
    a = uniform(m, k, dtype=dtype)
    b = uniform(k, n, dtype=dtype)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    ms = time_op(lambda: torch.matmul(a, b, out=c))
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def scaled_mm_fp8(m, n, k):
    """torch._scaled_mm (cuBLASLt) on e4m3: A (m x k), B (n x k) as the
    column-major k x n it takes, per-tensor scales, e4m3 output."""
    a = uniform(m, k).to(torch.float8_e4m3fn)
    b = uniform(n, k).to(torch.float8_e4m3fn).t()
    scale_a = torch.tensor(0.75, device="cuda")
    scale_b = torch.tensor(1.5, device="cuda")
    scale_out = torch.tensor(0.125, device="cuda")
    ms = time_op(lambda: torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b,
                                          scale_result=scale_out,
                                          out_dtype=torch.float8_e4m3fn))
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def scaled_mm_fp8_blockwise(m, n, k):
    """torch._scaled_mm on e4m3 with DeepSeek-V3's block scales, as
    fp8_gemm_blockwise: A's per 1 x 128 (m x k/128, outer-dim-major), B's per
    128 x 128 (k/128 x n/128 for the k x n operand), bf16 output. Torch
    builds whose cuBLASLt lacks block scaling raise; the caller reports it."""
    a = uniform(m, k).to(torch.float8_e4m3fn)
    b = uniform(n, k).to(torch.float8_e4m3fn).t()
    scale_a = (torch.rand(k // 128, m, device="cuda") + 0.5).t()
    scale_b = torch.rand(n // 128, k // 128, device="cuda").t() + 0.5
    ms = time_op(lambda: torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b,
                                          out_dtype=torch.bfloat16))
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def int_mm(m, n, k):
    """torch._int_mm: i8 A (m x k) and B (k x n, stored n x k) into i32."""
    a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
    b = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8).t()
    ms = time_op(lambda: torch._int_mm(a, b))
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def matmul_tf32(m, n, k):
    """torch.matmul on f32 with TF32 allowed (B stored n x k, as ours)."""
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        a = uniform(m, k)
        b = uniform(n, k).t()
        c = torch.empty(m, n, device="cuda")
        ms = time_op(lambda: torch.matmul(a, b, out=c))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    return ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12


def softmax(m, n, dtype):
    x = uniform(m, n, dtype=dtype)
    y = torch.empty_like(x)
    ms = time_op(lambda: torch.softmax(x, dim=-1))
    return ms, 2.0 * x.element_size() * m * n / (ms * 1e-3) / 1e12


def norm(m, n, dtype, layer):
    x = uniform(m, n, dtype=dtype)
    w = uniform(n, dtype=dtype)
    b = uniform(n, dtype=dtype)
    if layer:
        fn = lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
    else:
        fn = lambda: torch.nn.functional.rms_norm(x, (n,), w, 1e-6)
    ms = time_op(fn)
    return ms, 2.0 * x.element_size() * m * n / (ms * 1e-3) / 1e12


def gemm_epilogue(m, n, k, dtype, kind, compiled=False):
    """torch's matmul followed by the epilogue: eager (unfused kernels) or
    torch.compile (Inductor may fuse the epilogue into a Triton kernel)."""
    a = uniform(m, k, dtype=dtype)
    b = uniform(k, n, dtype=dtype)
    bias = uniform(n, dtype=dtype)
    r = uniform(m, n, dtype=dtype)
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


def sdpa(b, s, h, d, dtype, causal, backend, dv=None):
    """torch's scaled_dot_product_attention on one backend (SDPBackend.CUDNN_ATTENTION
    or FLASH_ATTENTION) for FlashAttention's benchmark (flash_attention_* in
    device_runner): Q, K, V [b, s, h, d] in memory, as our kernel reads them,
    viewed as SDPA's [b, h, s, d]; FLOPs 4 b h s^2 d, half of it when causal.
    With dv, V's head dimension (DeepSeek's prefill: d 192, dv 128) and FLOPs
    2 b h s^2 (d + dv)."""
    from torch.nn.attention import sdpa_kernel

    dv = dv or d
    q, k = (uniform(b, s, h, d, dtype=dtype).transpose(1, 2) for _ in range(2))
    v = uniform(b, s, h, dv, dtype=dtype).transpose(1, 2)
    scale = 1.25 / d ** 0.5

    def run():
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=scale)

    with sdpa_kernel([backend]):
        run()  # fails here, outside the timing, where the backend cannot run it
        ms = time_op(run)
    return ms, 2.0 * b * h * s * s * (d + dv) * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def attention_peers(want, report):
    """--attention: SDPA on cuDNN and on flash (FlashAttention-2) for every
    workload of flash_attention_{f16,bf16}_d{64,128}[_causal] at batch 8, 16
    heads, sequence 1k to 16k, named as device_runner names ours."""
    from torch.nn.attention import SDPBackend

    backends = (("sdpa cudnn", SDPBackend.CUDNN_ATTENTION),
                ("sdpa flash", SDPBackend.FLASH_ATTENTION))
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for d in (64, 128, 256):
            for causal in (False, True):
                kernel = f"flash_attention_{name}_d{d}" + ("_causal" if causal else "")
                for s in (1024, 2048, 4096, 8192, 16384) if d <= 128 else (4096,):
                    workload = f"{kernel}/b8_sq{s}_skv{s}_h16_hkv16"
                    if not want(workload):
                        continue
                    for peer, backend in backends:
                        try:
                            report(peer, workload, *sdpa(8, s, 16, d, dtype, causal, backend),
                                   "TFLOP/s")
                        except RuntimeError as e:  # the backend refuses this problem
                            print(f"{peer},{workload},failed: {str(e).splitlines()[0][:80]}")
                            sys.stdout.flush()
    # At sequence 4096: the head dimensions of 32- and 64-byte swizzle panels
    # (batch 8), and DeepSeek-V3's prefill (Q K^T 192, V 128; batch 2).
    for name, dtype, d, dv, causal, b in (("f16", torch.float16, 96, None, False, 8),
                                          ("bf16", torch.bfloat16, 80, None, True, 8),
                                          ("f16", torch.float16, 112, None, False, 8),
                                          ("f16", torch.float16, 160, None, True, 8),
                                          ("f16", torch.float16, 192, 128, False, 2),
                                          ("f16", torch.float16, 192, 128, True, 2)):
        workload = (f"flash_attention_{name}_d{d}{f'_v{dv}' if dv else ''}"
                    f"{'_causal' if causal else ''}/b{b}_sq4096_skv4096_h16_hkv16")
        if not want(workload):
            continue
        for peer, backend in backends:
            try:
                report(peer, workload, *sdpa(b, 4096, 16, d, dtype, causal, backend, dv=dv),
                       "TFLOP/s")
            except RuntimeError as e:  # the backend refuses this problem
                print(f"{peer},{workload},failed: {str(e).splitlines()[0][:80]}")
                sys.stdout.flush()


def sdpa_backward(b, s, h, d, dtype, causal, backend):
    """The backward of SDPA on one backend for flash_attention_bwd's benchmark
    (Q, K, V, dO [b, s, h, d] in memory, as ours): the time of
    torch.autograd.grad of O against Q, K and V given dO, the forward run
    once outside the timing; FLOPs 2.5 times the forward's 4 b h s^2 d,
    half when causal (FlashAttention's count)."""
    from torch.nn.attention import sdpa_kernel

    q, k, v = (uniform(b, s, h, d, dtype=dtype).transpose(1, 2).requires_grad_(True)
               for _ in range(3))
    grad = uniform(b, s, h, d, dtype=dtype).transpose(1, 2)
    scale = 1.25 / d ** 0.5
    with sdpa_kernel([backend]):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                               scale=scale)

        def run():
            return torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

        run()  # fails here, outside the timing, where the backend cannot run it
        ms = time_op(run)
    return ms, 2.5 * 4.0 * b * h * s * s * d * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def attention_bwd_peers(want, report):
    """--attention-bwd: SDPA's backward on cuDNN and on flash for
    flash_attention_bwd's benchmark (f16, d128, batch 1, 8 heads, 2048)."""
    from torch.nn.attention import SDPBackend

    workload = "flash_attention_bwd/b1_sq2048_skv2048_h8_hkv8"
    if not want(workload):
        return
    for peer, backend in (("sdpa cudnn bwd", SDPBackend.CUDNN_ATTENTION),
                          ("sdpa flash bwd", SDPBackend.FLASH_ATTENTION)):
        try:
            report(peer, workload, *sdpa_backward(1, 2048, 8, 128, torch.float16, False, backend),
                   "TFLOP/s")
        except RuntimeError as e:
            print(f"{peer},{workload},failed: {str(e).splitlines()[0][:80]}")
            sys.stdout.flush()


VARLEN_LENGTHS = (4096, 512, 2048, 1024, 3072, 768, 1536, 2560, 640, 128)


def packed_batch(lengths):
    """A packed batch of sequences of `lengths`: the cumulative lengths
    (int32 on the GPU, batch + 1 entries), the longest and the total."""
    cu = torch.tensor([0] + list(itertools.accumulate(lengths)), device="cuda",
                      dtype=torch.int32)
    return cu, max(lengths), sum(lengths)


def visible_pairs(lengths, causal):
    """The (query, key) pairs the sequences' queries see (self-attention)."""
    return sum(n * (n + 1) // 2 if causal else n * n for n in lengths)


def varlen_peers(want, report):
    """--varlen: flash_attention_varlen's benchmark (16 heads, the sequences
    of VARLEN_LENGTHS packed into [16384, 16, d]) on torch: FlashAttention-2's
    varlen kernel (aten._flash_attention_forward with cumulative lengths) and
    SDPA on cuDNN over a jagged nested tensor where this torch takes one.
    FLOPs 4 h d per (query, key) pair a query sees."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    h = 16
    cu, longest, total = packed_batch(VARLEN_LENGTHS)
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for d in (64, 128):
            for causal in (False, True):
                workload = (f"flash_attention_varlen_{name}_d{d}" + ("_causal" if causal else "")
                            + f"/n{len(VARLEN_LENGTHS)}_t{total}_h{h}_hkv{h}")
                if not want(workload):
                    continue
                flops = 4.0 * h * d * visible_pairs(VARLEN_LENGTHS, causal)
                q, k, v = (uniform(total, h, d, dtype=dtype) for _ in range(3))
                scale = 1.25 / d ** 0.5

                def flash():
                    return torch.ops.aten._flash_attention_forward(
                        q, k, v, cu, cu, longest, longest, 0.0, causal, False, scale=scale)

                def cudnn_jagged():
                    nq, nk, nv = (torch.nested.nested_tensor_from_jagged(x, offsets=cu.long())
                                  .transpose(1, 2) for x in (q, k, v))
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                        return torch.nn.functional.scaled_dot_product_attention(
                            nq, nk, nv, is_causal=causal, scale=scale)

                for peer, run in (("flash varlen", flash), ("sdpa cudnn jagged", cudnn_jagged)):
                    try:
                        run()  # fails here, outside the timing, where torch cannot run it
                        ms = time_op(run)
                        report(peer, workload, ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
                    except (RuntimeError, AttributeError, TypeError) as e:
                        print(f"{peer},{workload},failed: {str(e).splitlines()[0][:80]}")
                        sys.stdout.flush()


VARLEN_BWD_LENGTHS = (2048, 512, 1024, 1536, 896, 128, 2048)


def varlen_bwd_peers(want, report):
    """--varlen (backward): flash_attention_bwd_varlen's benchmark (8 heads,
    d128, the sequences of VARLEN_BWD_LENGTHS packed) on torch: the backward
    of FlashAttention-2's varlen kernel (autograd through
    aten._flash_attention_forward), the forward run once outside the
    timing. FLOPs 2.5 times the forward's."""
    h, d = 8, 128
    cu, longest, total = packed_batch(VARLEN_BWD_LENGTHS)
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for causal in (False, True):
            workload = (f"flash_attention_bwd_varlen_{name}_d{d}" + ("_causal" if causal else "")
                        + f"/n{len(VARLEN_BWD_LENGTHS)}_t{total}_h{h}_hkv{h}")
            if not want(workload):
                continue
            flops = 2.5 * 4.0 * h * d * visible_pairs(VARLEN_BWD_LENGTHS, causal)
            q, k, v = (uniform(total, h, d, dtype=dtype).requires_grad_(True) for _ in range(3))
            grad = uniform(total, h, d, dtype=dtype)
            try:
                out = torch.ops.aten._flash_attention_forward(
                    q, k, v, cu, cu, longest, longest, 0.0, causal, False,
                    scale=1.25 / d ** 0.5)[0]

                def run():
                    return torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

                run()  # fails here, outside the timing, where torch cannot run it
                ms = time_op(run)
                report("flash varlen bwd", workload, ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
            except (RuntimeError, AttributeError, TypeError) as e:
                print(f"flash varlen bwd,{workload},failed: {str(e).splitlines()[0][:80]}")
                sys.stdout.flush()


def grouped_gemm_peers(want, report):
    """--grouped: grouped_gemm's benchmarks (bf16, 8 groups of 1024 rows, N
    14336, K 4096, B [G, N, K]) on torch: a loop of one matmul per group,
    and torch._grouped_mm where this torch has it (the contiguous layout,
    offsets of each group's end). The masked layout's peer is the same
    loop over the groups' valid rows."""
    groups, rows, n, k = 8, 1024, 14336, 4096
    flops = 2.0 * groups * rows * n * k
    names = (f"grouped_gemm/rows{'_'.join([str(rows)] * groups)}_pad0_n{n}_k{k}",
             f"grouped_gemm_masked/counts{'_'.join([str(rows)] * groups)}_max{rows}_n{n}_k{k}")
    if not any(want(w) for w in names):
        return
    a = uniform(groups * rows, k, dtype=torch.bfloat16)
    b = uniform(groups, n, k, dtype=torch.bfloat16)
    c = torch.empty(groups * rows, n, device="cuda", dtype=torch.bfloat16)

    def loop():
        for g in range(groups):
            torch.matmul(a[g * rows:(g + 1) * rows], b[g].t(), out=c[g * rows:(g + 1) * rows])

    for workload in names:
        if want(workload):
            ms = time_op(loop)
            report("torch matmul loop", workload, ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
    grouped_mm = getattr(torch, "_grouped_mm", None)
    if grouped_mm is None or not want(names[0]):
        return
    offsets = torch.arange(rows, groups * rows + 1, rows, device="cuda", dtype=torch.int32)
    try:
        bt = b.transpose(1, 2)
        ms = time_op(lambda: grouped_mm(a, bt, offs=offsets))
        report("torch._grouped_mm", names[0], ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
    except RuntimeError as e:  # this build or GPU refuses it
        print(f"torch._grouped_mm,{names[0]},failed: {str(e).splitlines()[0][:80]}")
        sys.stdout.flush()


# grouped_gemm_ptr's benchmarks (examples/workloads/grouped_gemm.cc): each
# group's (m, n, k), every operand its own tensor.
POINTER_GROUPS = (
    [(1024, 14336, 4096)] * 8,
    [(2048, 14336, 4096), (512, 14336, 4096), (1536, 14336, 4096), (0, 14336, 4096),
     (1024, 14336, 4096), (768, 14336, 4096), (1280, 14336, 4096), (1024, 14336, 4096)],
)


def pointer_grouped_gemm_peers(want, report):
    """--grouped: grouped_gemm_ptr's benchmarks on torch: a loop of one
    matmul per group on the groups' own tensors (what a pointer array
    names), and torch._grouped_mm on the same rows concatenated where every
    group has one N and K (its offsets are each group's end row)."""
    for sizes in POINTER_GROUPS:
        workload = "grouped_gemm_ptr/" + "_".join(f"{m}x{n}x{k}" for m, n, k in sizes)
        if not want(workload):
            continue
        flops = sum(2.0 * m * n * k for m, n, k in sizes)
        a = [uniform(m, k, dtype=torch.bfloat16) for m, _, k in sizes]
        b = [uniform(n, k, dtype=torch.bfloat16) for _, n, k in sizes]
        c = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for m, n, _ in sizes]

        def loop():
            for ag, bg, cg in zip(a, b, c):
                if ag.numel():
                    torch.matmul(ag, bg.t(), out=cg)

        ms = time_op(loop)
        report("torch matmul loop", workload, ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
        grouped_mm = getattr(torch, "_grouped_mm", None)
        if grouped_mm is None or len({(n, k) for _, n, k in sizes}) != 1:
            continue
        rows = torch.cat(a)
        weights = torch.stack(b).transpose(1, 2)
        ends = torch.tensor(sizes, dtype=torch.int64)[:, 0].cumsum(0)
        offsets = ends.to(device="cuda", dtype=torch.int32)
        try:
            ms = time_op(lambda: grouped_mm(rows, weights, offs=offsets))
            report("torch._grouped_mm", workload, ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
        except RuntimeError as e:  # this build or GPU refuses it
            print(f"torch._grouped_mm,{workload},failed: {str(e).splitlines()[0][:80]}")
            sys.stdout.flush()


def moe_peers(want, report):
    """--moe: the MoE layer's benchmarks (examples/moe.cc: Mixtral 8x7B and
    DeepSeek-V3's routed experts at 4096 tokens, bf16, top-k distinct
    random experts per token) as eager torch runs it (Hugging Face's
    Mixtral block): per expert, its tokens gathered, silu(x W1^T) * (x W3^T)
    times W2^T, scaled by the routing weight and index_add_-ed back. FLOPs
    are the experts' GEMMs only (6 * routed entries * H * F)."""
    import torch.nn.functional as F
    for t, e, k, h, f in ((4096, 8, 2, 4096, 14336), (4096, 256, 8, 7168, 2048)):
        workload = f"moe/t{t}_e{e}_k{k}_h{h}_f{f}_random"
        if not want(workload):
            continue
        x = uniform(t, h, dtype=torch.bfloat16)
        w13 = uniform(e, 2 * f, h, dtype=torch.bfloat16) * h ** -0.5
        w2 = uniform(e, h, f, dtype=torch.bfloat16) * f ** -0.5
        ids = torch.rand(t, e, device="cuda").topk(k, dim=1).indices
        weights = torch.rand(t, k, device="cuda")

        def layer():
            y = torch.zeros_like(x)
            for expert in range(e):
                token, slot = torch.where(ids == expert)
                if token.numel() == 0:
                    continue
                xe = x[token]
                act = F.silu(xe @ w13[expert, :f].t()) * (xe @ w13[expert, f:].t())
                out = (act @ w2[expert].t()) * weights[token, slot, None].to(x.dtype)
                y.index_add_(0, token, out)
            return y

        ms = time_op(layer)
        flops = 6.0 * t * k * h * f
        report("torch eager", workload, ms, flops / (ms * 1e-3) / 1e12, "TFLOP/s")
        del x, w13, w2
        torch.cuda.empty_cache()


def grouped_fp8_peers(want, report):
    """--grouped: the block-scaled FP8 grouped GEMMs' benchmarks (DeepGEMM's
    shapes: contiguous 4 groups of 8192 rows, masked 4 of 256; N 4096, K
    7168) as a loop of torch._scaled_mm with block scales, one per group
    (scales laid out as scaled_mm_fp8_blockwise's)."""
    for name, groups, rows, n, k in (
            ("grouped_gemm_fp8/rows8192_8192_8192_8192_pad0_n4096_k7168", 4, 8192, 4096, 7168),
            ("grouped_gemm_fp8_masked/counts256_256_256_256_max256_n4096_k7168", 4, 256, 4096,
             7168)):
        if not want(name):
            continue
        a = uniform(groups * rows, k).to(torch.float8_e4m3fn)
        b = uniform(groups, n, k).to(torch.float8_e4m3fn)
        scale_a = [(torch.rand(k // 128, rows, device="cuda") + 0.5).t() for _ in range(groups)]
        scale_b = [torch.rand(n // 128, k // 128, device="cuda").t() + 0.5 for _ in range(groups)]

        def loop():
            for g in range(groups):
                torch._scaled_mm(a[g * rows:(g + 1) * rows], b[g].t(), scale_a=scale_a[g],
                                 scale_b=scale_b[g], out_dtype=torch.bfloat16)

        try:
            ms = time_op(loop)
            report("torch._scaled_mm blockwise loop", name, ms,
                   2.0 * groups * rows * n * k / (ms * 1e-3) / 1e12, "TFLOP/s")
        except RuntimeError as e:  # this build or GPU refuses block scales
            print(f"torch._scaled_mm blockwise loop,{name},failed: {str(e).splitlines()[0][:80]}")
            sys.stdout.flush()


def decode_peers(want, report):
    """--decode: SDPA at one query token against a long K/V cache for
    flash_decoding's benchmarks (b, skv, 32 query heads over 8 key heads,
    d128, f16; grouped heads through enable_gqa), on each backend that takes
    the problem and on torch's own choice. TB/s counts the bytes of Q, K, V
    and O, as device_runner does."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = (("sdpa", None), ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION),
                ("sdpa flash", SDPBackend.FLASH_ATTENTION),
                ("sdpa efficient", SDPBackend.EFFICIENT_ATTENTION))
    for b, skv in ((1, 8192), (4, 8192), (16, 4096), (64, 1024), (4, 32768)):
        h, hkv, d = 32, 8, 128
        workload = f"flash_decoding/b{b}_sq1_skv{skv}_h{h}_hkv{hkv}"
        if not want(workload):
            continue
        q = uniform(b, 1, h, d, dtype=torch.float16).transpose(1, 2)
        k, v = (uniform(b, skv, hkv, d, dtype=torch.float16).transpose(1, 2) for _ in range(2))
        scale = 1.25 / d ** 0.5
        nbytes = 2.0 * (2 * b * h * d + 2 * b * skv * hkv * d)

        def run():
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, scale=scale, enable_gqa=True)

        for peer, backend in backends:
            try:
                if backend is None:
                    run()
                    ms = time_op(run)
                else:
                    with sdpa_kernel([backend]):
                        run()  # fails here where the backend cannot run it
                        ms = time_op(run)
                report(peer, workload, ms, nbytes / (ms * 1e-3) / 1e12, "TB/s")
            except RuntimeError as e:
                print(f"{peer},{workload},failed: {str(e).splitlines()[0][:80]}")
                sys.stdout.flush()


def mla_peers(want, report):
    """--mla: the absorbed MLA decode on torch for mla_decode's benchmarks
    (bf16, one latent cache a sequence of 512 + 64 columns, contiguous, not
    paged): SDPA with every query head on one key head (K the whole rows, V
    their first 512 columns; backends that take a value dimension unlike
    the keys'), and the plain matmul-softmax-matmul. TB/s counts Q, the
    cache once and O, as device_runner does."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = (("sdpa", None), ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION),
                ("sdpa efficient", SDPBackend.EFFICIENT_ATTENTION))
    for b, skv, sq, h in ((4, 8192, 1, 16), (64, 4096, 1, 16), (64, 4096, 2, 16),
                          (128, 1024, 1, 128)):
        workload = f"mla_decode/lens{b}x{skv}_sq{sq}_h{h}"
        if not want(workload):
            continue
        d, dv = 576, 512
        q = uniform(b, sq, h, d, dtype=torch.bfloat16).transpose(1, 2)
        kv = uniform(b, skv, 1, d, dtype=torch.bfloat16).transpose(1, 2)
        v = kv[..., :dv]
        scale = 1.25 / d ** 0.5
        nbytes = 2.0 * (b * sq * h * d + b * skv * d + b * sq * h * dv)
        mask = torch.ones(sq, skv, dtype=torch.bool, device="cuda").tril(skv - sq)

        def sdpa():
            return torch.nn.functional.scaled_dot_product_attention(
                q, kv, v, attn_mask=mask if sq > 1 else None, scale=scale, enable_gqa=True)

        def plain():
            s = torch.matmul(q, kv.transpose(-1, -2)).float() * scale
            if sq > 1:
                s = s.masked_fill(~mask, float("-inf"))
            return torch.matmul(torch.softmax(s, dim=-1).to(torch.bfloat16), v)

        for peer, backend in backends + (("torch matmul", "plain"),):
            try:
                run = plain if backend == "plain" else sdpa
                if backend in (None, "plain"):
                    run()
                    ms = time_op(run)
                else:
                    with sdpa_kernel([backend]):
                        run()
                        ms = time_op(run)
                report(peer, workload, ms, nbytes / (ms * 1e-3) / 1e12, "TB/s")
            except RuntimeError as e:
                print(f"{peer},{workload},failed: {str(e).splitlines()[0][:80]}")
                sys.stdout.flush()


def main():
    gemm_only = "--gemm-only" in sys.argv
    only = [a[len("--only="):].split(",") for a in sys.argv if a.startswith("--only=")]
    only = only[0] if only else None
    gemm_shapes = ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                   (3000, 5000, 4000), (8192, 8192, 1000))
    shapes_given = any(a.startswith("--gemm-shapes=") for a in sys.argv)
    for a in sys.argv:
        if a.startswith("--gemm-shapes="):
            gemm_shapes = [tuple(int(d) for d in s.split("x"))
                           for s in a[len("--gemm-shapes="):].split(",") if s]

    def want(workload, gemm=False):
        if gemm_only and not gemm:
            return False
        return only is None or any(part in workload for part in only)

    def report(peer, workload, ms, rate, unit):
        print(f"{peer},{workload},{ms:.4f},{rate:.3f} {unit}" if unit == "TB/s"
              else f"{peer},{workload},{ms:.4f},{rate:.1f} {unit}")
        sys.stdout.flush()

    print("peer,workload,median_ms,rate")
    if "--attention" in sys.argv:
        attention_peers(want, report)
        return
    if "--attention-bwd" in sys.argv:
        attention_bwd_peers(want, report)
        return
    if "--decode" in sys.argv:
        decode_peers(want, report)
        return
    if "--mla" in sys.argv:
        mla_peers(want, report)
        return
    if "--moe" in sys.argv:
        moe_peers(want, report)
        return
    if "--grouped" in sys.argv:
        grouped_gemm_peers(want, report)
        pointer_grouped_gemm_peers(want, report)
        grouped_fp8_peers(want, report)
        return
    if "--varlen" in sys.argv:
        varlen_peers(want, report)
        varlen_bwd_peers(want, report)
        return
    for n in (1 << 28, (1 << 28) - 3):
        if want(f"vector_add/n={n}") or "--vector-add-only" in sys.argv:
            report("torch.add", f"vector_add/n={n}", *vector_add(n), "TB/s")
    if "--vector-add-only" in sys.argv:
        return
    for name, m, n, dtype in (("softmax_f16", 16384, 8192, torch.float16),
                              ("softmax_f32", 16384, 8192, torch.float32),
                              ("softmax_f16_32000", 4096, 32000, torch.float16),
                              ("softmax_f16_1000", 65536, 1000, torch.float16)):
        if want(f"{name}/{m}x{n}"):
            report("torch.softmax", f"{name}/{m}x{n}", *softmax(m, n, dtype), "TB/s")
    epilogues = (("gelu", "gemm_bias_gelu_f16"), ("gelu_erf", "gemm_bias_gelu_erf_f16"),
                 ("silu", "gemm_bias_silu_f16"), ("residual", "gemm_bias_residual_f16"))
    for kind, kernel in epilogues:
        for size in (2048, 8192):
            workload = f"{kernel}/{size}x{size}x{size}"
            if want(workload):
                report(f"torch unfused {kind}", workload,
                       *gemm_epilogue(size, size, size, torch.float16, kind), "TFLOP/s")
    for size in (2048, 8192):
        workload = f"gemm_bias_gelu_f16/{size}x{size}x{size}"
        if not want(workload):
            continue
        try:
            report("torch.compile gelu", workload,
                   *gemm_epilogue(size, size, size, torch.float16, "gelu", compiled=True),
                   "TFLOP/s")
        except Exception as e:  # Inductor needs a working Triton toolchain
            print(f"torch.compile gelu,{workload},failed: {type(e).__name__}")
            sys.stdout.flush()
    for name, layer in (("rmsnorm_f16", False), ("layernorm_f16", True)):
        if want(f"{name}/16384x8192"):
            report(f"torch.{name.split('_')[0]}", f"{name}/16384x8192",
                   *norm(16384, 8192, torch.float16, layer), "TB/s")
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for m, n, k in gemm_shapes:
            workload = f"gemm_{name}/{m}x{n}x{k}"
            if want(workload, gemm=True):
                report("torch.matmul", workload, *matmul(m, n, k, dtype), "TFLOP/s")
    # The data types' GEMMs (workloads_dtypes.cc): FP8 with per-tensor
    # scales, int8, TF32; at the cubes 2048 to 8192, or at --gemm-shapes.
    dtype_shapes = gemm_shapes if shapes_given else [(s, s, s) for s in (2048, 4096, 8192)]
    for peer, kernel, fn in (("torch._scaled_mm", "fp8_gemm", scaled_mm_fp8),
                             ("torch._int_mm", "gemm_i8", int_mm),
                             ("torch.matmul_tf32", "gemm_tf32", matmul_tf32)):
        for m, n, k in dtype_shapes:
            workload = f"{kernel}/{m}x{n}x{k}"
            if want(workload, gemm=True):
                report(peer, workload, *fn(m, n, k), "TFLOP/s")
    for m, n, k in dtype_shapes:
        workload = f"fp8_gemm_blockwise/{m}x{n}x{k}"
        if want(workload, gemm=True):
            try:
                report("torch._scaled_mm_blockwise", workload,
                       *scaled_mm_fp8_blockwise(m, n, k), "TFLOP/s")
            except Exception as e:  # no block scaling in this build's cuBLASLt
                print(f"torch._scaled_mm_blockwise,{workload},failed: "
                      f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
                sys.stdout.flush()

if __name__ == "__main__":
    main()
