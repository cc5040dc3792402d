"""A second peer for the sm_80 build: Triton's mma.sync GEMM, run the way ours is.

Issue 3 asks the sm80 build (mma.sync, ldmatrix, cp.async; PTX for sm_80 that
the driver compiles for the H200) for >= 0.60x cuBLAS. cuBLAS runs wgmma
there, so the ratio says nothing about how good an mma.sync GEMM can be on
this GPU. This script compiles a Triton GEMM (the usual blocked kernel:
grouped raster order, tl.dot, software pipelining by num_stages) for target
sm_80, so that Triton's backend lowers tl.dot to mma.sync m16n8k16 + ldmatrix
+ cp.async, loads its PTX (not the sm_80 cubin) so that the driver compiles it
for the GPU as it does ours, and times it against torch.matmul the way
peers.py times the peers (L2 flushed by a 120 MiB write before each run, the
median of 50 runs enqueued back to back).

For each shape and dtype it first times every configuration of CONFIGS once
(the tuning pass, 20 runs each; a config that fails to compile or run is
skipped and printed), then alternates the best one and torch.matmul for
--rounds rounds and prints per shape both medians and the median of the
per-round ratios. Every configuration it times is first checked against
torch.matmul in float32 (relative Frobenius error < 2e-3 for f16, 1e-2 for
bf16, inputs uniform in [-1, 1) as peers.py draws them).

  python3 benchmarks/triton_sm80.py [--rounds=3] [--gemm-shapes=MxNxK,...]
      [--dtypes=f16,bf16] [--ptx-dir=DIR]

Needs torch and triton (the GPU machine has both); no Tessera code.
"""

import os
import statistics
import sys

import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402  (uniform, time_op: the peers' inputs and timing)


@triton.jit
def gemm_kernel(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                stride_cn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    in_group = GROUP * tiles_n
    first_m = (pid // in_group) * GROUP
    group_rows = min(tiles_m - first_m, GROUP)
    pm = first_m + (pid % in_group) % group_rows
    pn = (pid % in_group) // group_rows
    rows = (pm * BM + tl.arange(0, BM)) % M
    cols = (pn * BN + tl.arange(0, BN)) % N
    ks = tl.arange(0, BK)
    a_ptrs = a + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        x = tl.load(a_ptrs, mask=ks[None, :] < left, other=0.0)
        y = tl.load(b_ptrs, mask=ks[:, None] < left, other=0.0)
        acc = tl.dot(x, y, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    out_rows = pm * BM + tl.arange(0, BM)
    out_cols = pn * BN + tl.arange(0, BN)
    tl.store(c + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn,
             acc.to(c.dtype.element_ty),
             mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))


# (BM, BN, BK, warps, stages): Triton's own matmul tutorial's sm_80 configs
# and the tile shapes our sm_80 build tried (RESULTS.md runs 43, 85, 96, 109).
CONFIGS = [
    (128, 128, 32, 4, 4), (128, 128, 32, 4, 5), (128, 128, 64, 4, 3), (128, 128, 64, 4, 4),
    (128, 256, 32, 8, 3), (128, 256, 32, 8, 4), (256, 128, 32, 8, 3), (256, 128, 32, 8, 4),
    (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 32, 8, 4), (64, 256, 32, 4, 4),
]

TYPES = {"f16": (torch.float16, "fp16"), "bf16": (torch.bfloat16, "bf16")}

GROUP = 8  # tile rows per raster group, as our GEMMs' default


def divisibility(*values):
    """Triton's divisibility hint for a set of integers: 16 when all are
    multiples of 16, else 8 when all are (16-byte rows of 16-bit elements),
    else 1."""
    for d in (16, 8):
        if all(v % d == 0 for v in values):
            return d
    return 1


def compile_sm80(config, dtype_name, m, n, k, ptx_dir=None):
    """The GEMM of `config` compiled by Triton for sm_80, its binary replaced
    by its PTX so that the driver compiles it for this GPU at load."""
    bm, bn, bk, warps, stages = config
    t = TYPES[dtype_name][1]
    signature = {"a": "*" + t, "b": "*" + t, "c": "*" + t, "M": "i32", "N": "i32", "K": "i32",
                 "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32",
                 "stride_bn": "constexpr", "stride_cm": "i32", "stride_cn": "constexpr",
                 "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP": "constexpr"}
    constants = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BM": bm, "BN": bn, "BK": bk,
                 "GROUP": GROUP}
    # Pointers from torch are 256-byte aligned; the integers' hints as
    # Triton would specialize them (plus 8, which it does not, so that rows
    # of 5000 16-bit elements still load 16 bytes at a time).
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2)}
    for index, value in ((3, m), (4, n), (5, k), (6, k), (8, n), (10, n)):
        d = divisibility(value)
        if d > 1:
            attrs[(index,)] = [["tt.divisibility", d]]
    source = triton.compiler.ASTSource(fn=gemm_kernel, signature=signature, constexprs=constants,
                                       attrs=attrs)
    kernel = triton.compile(source, target=GPUTarget("cuda", 80, 32),
                            options={"num_warps": warps, "num_stages": stages})
    ptx = kernel.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16" in ptx, "no mma.sync in the sm_80 PTX"
    if ptx_dir:
        os.makedirs(ptx_dir, exist_ok=True)
        name = "gemm_%s_%dx%dx%d_w%d_s%d.ptx" % ((dtype_name,) + tuple(config))
        with open(os.path.join(ptx_dir, name), "w") as f:
            f.write(ptx)
    kernel.kernel = ptx.encode() + b"\0"  # cuModuleLoadData takes PTX text too
    return kernel


def runner(kernel, config, a, b, c):
    m, k = a.shape
    n = b.shape[1]
    bm, bn = config[0], config[1]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn), 1, 1)
    # Triton's launcher takes every argument of the signature, the
    # constexprs too (it skips them).
    args = (a, b, c, m, n, k, a.stride(0), 1, b.stride(0), 1, c.stride(0), 1, bm, bn, config[2],
            GROUP)
    return lambda: kernel[grid](*args)


def check(fn, a, b, c, dtype_name):
    c.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    err = ((c.float() - ref).norm() / ref.norm()).item()
    bound = 2e-3 if dtype_name == "f16" else 1e-2
    return err, err < bound


def main():
    args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
    rounds = int(args.get("--rounds", "3"))
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.get(
        "--gemm-shapes",
        "2048x2048x2048,4096x4096x4096,8192x8192x8192,3000x5000x4000,8192x8192x1000").split(",")]
    dtypes = args.get("--dtypes", "f16,bf16").split(",")
    ptx_dir = args.get("--ptx-dir")
    print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())
    for dtype_name in dtypes:
        dtype = TYPES[dtype_name][0]
        for (m, n, k) in shapes:
            flops = 2.0 * m * n * k
            a = peers.uniform(m, k, dtype=dtype)
            b = peers.uniform(k, n, dtype=dtype)
            c = torch.empty(m, n, device="cuda", dtype=dtype)
            # The tuning pass: each config checked, then timed once.
            tuned = []
            for config in CONFIGS:
                try:
                    kernel = compile_sm80(config, dtype_name, m, n, k, ptx_dir)
                    fn = runner(kernel, config, a, b, c)
                    err, ok = check(fn, a, b, c, dtype_name)
                    if not ok:
                        print("  %s %dx%dx%d %s WRONG (rel err %.2e)" %
                              (dtype_name, m, n, k, config, err))
                        continue
                    ms = peers.time_op(fn, iterations=20)
                except Exception as e:  # a config that does not fit: skipped, said
                    print("  %s %dx%dx%d %s skipped: %s" %
                          (dtype_name, m, n, k, config, str(e).splitlines()[0][:120]))
                    continue
                print("  tune %s %dx%dx%d %s %.4f ms %.1f TFLOP/s regs %s spills %s err %.1e" %
                      (dtype_name, m, n, k, config, ms, flops / ms / 1e9, kernel.n_regs,
                       kernel.n_spills, err))
                tuned.append((ms, config, fn))
            if not tuned:
                print("triton_sm80,%s/%dx%dx%d,no config ran" % (dtype_name, m, n, k))
                continue
            _, best, fn = min(tuned, key=lambda t: t[0])
            ours, peer, ratios = [], [], []
            for _ in range(rounds):
                t_ours = peers.time_op(fn)
                t_peer = peers.time_op(lambda: torch.matmul(a, b, out=c))
                ours.append(flops / t_ours / 1e9)
                peer.append(flops / t_peer / 1e9)
                ratios.append(t_peer / t_ours)
            err, ok = check(fn, a, b, c, dtype_name)
            print("triton_sm80,%s/%dx%dx%d,%s,%.1f TFLOP/s,cuBLAS %.1f TFLOP/s,ratio %.3f (%s),"
                  "err %.1e %s" %
                  (dtype_name, m, n, k, "x".join(map(str, best)), statistics.median(ours),
                   statistics.median(peer), statistics.median(ratios),
                   " ".join("%.3f" % r for r in ratios), err, "ok" if ok else "WRONG"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
