"""The Python package on a GPU with torch: kernels from the ops bundles and
from tessera.compile against float64 references (random inputs, outputs
poisoned first, sizes off the tiles), tessera.ops under autograd and
torch.compile, streams, prepared launches and the errors a user meets.
Tagged requires-gpu; on the GPU machine: python3 python/tests/test_torch_gpu.py."""

import itertools
import math
import os
import unittest

import tessera

HERE = os.path.dirname(os.path.abspath(__file__))
AXPY = open(os.path.join(HERE, "testdata", "axpy.mlir")).read()

try:
    import torch
    import tessera.ops
    SKIP = None if torch.cuda.is_available() else "torch sees no CUDA device"
except ImportError:
    torch, SKIP = None, "torch is not installed"


def gemm_reference(a, b):
    return a.double() @ b.double()


def attention_reference(q, k, v, scale, causal):
    """O and LSE in float64 for q [B, Sq, H, D], k, v [B, Skv, Hkv, D]."""
    q, k, v = (x.double() for x in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(group, dim=2)
    v = v.repeat_interleave(group, dim=2)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        sq, skv = q.shape[1], k.shape[1]
        rows = torch.arange(sq, device=q.device)[:, None]
        cols = torch.arange(skv, device=q.device)[None, :]
        scores = scores.masked_fill(cols > rows + skv - sq, -math.inf)
    # Rows that see no key: O = 0 and LSE = +inf, with gradients that stay
    # finite (their scores are replaced by zeros before the softmax).
    seen = torch.isfinite(scores).any(dim=-1, keepdim=True)
    scores = torch.where(seen, scores, 0.0)
    lse = torch.where(seen[..., 0], torch.logsumexp(scores, dim=-1), math.inf)
    o = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1) * seen, v)
    return o, lse


def assert_close(test, got, want, atol, rtol, what):
    test.assertEqual(got.shape, want.shape, f"{what}: shape")
    if got.numel() == 0:  # an empty sequence: nothing to compare
        return
    error = (got.double() - want).abs()
    bound = atol + rtol * want.abs()
    worst = (error - bound).max().item()
    test.assertTrue(torch.isfinite(got).all().item(), f"{what}: non-finite values")
    test.assertLessEqual(worst, 0.0, f"{what}: max error {error.max().item():.3g} over the bound")


@unittest.skipIf(SKIP, SKIP)
class KernelTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.device = torch.device("cuda", torch.cuda.current_device())

    def test_compiled_kernel_runs_with_a_scalar_and_a_tail(self):
        axpy = tessera.compile(AXPY)["axpy"]
        x = torch.randn(5000, device=self.device)  # Not a multiple of the 1024-element tile.
        y = torch.randn(5000, device=self.device)
        want = 1.5 * x.double() + y.double()
        axpy(x, y, 1.5)
        assert_close(self, y, want, 1e-6, 1e-6, "axpy")

    def test_gemm_kernel_into_a_poisoned_output(self):
        gemm = tessera.ops.kernel_for(self.device, "gemm_f16")
        a = torch.randn(333, 200, device=self.device).half()
        b = torch.randn(200, 264, device=self.device).half()
        c = torch.full((333, 264), math.nan, device=self.device).half()
        gemm(a, b, c)
        assert_close(self, c, gemm_reference(a, b), 2e-2, 1e-2, "gemm_f16")

    def test_side_stream_and_prepared_launch(self):
        gemm = tessera.ops.kernel_for(self.device, "gemm_f16")
        a1, a2 = (torch.randn(256, 128, device=self.device).half() for _ in range(2))
        b = torch.randn(128, 192, device=self.device).half()
        c1, c2 = (torch.full((256, 192), math.nan, device=self.device).half() for _ in range(2))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            prepared = gemm.prepare(a1, b, c1)
            prepared()  # torch's current stream: the side stream here.
            prepared.rebind(a2, b, c2)
            prepared(stream=side)
        side.synchronize()
        assert_close(self, c1, gemm_reference(a1, b), 2e-2, 1e-2, "prepared")
        assert_close(self, c2, gemm_reference(a2, b), 2e-2, 1e-2, "rebound")
        with self.assertRaisesRegex(tessera.Error, "differ from the prepared"):
            prepared.rebind(a2[:128], b, c2)

    def test_errors_a_user_meets(self):
        gemm = tessera.ops.kernel_for(self.device, "gemm_f16")
        a = torch.randn(64, 64, device=self.device).half()
        with self.assertRaisesRegex(tessera.Error, "argument 'A': a tensor on cpu"):
            gemm(a.cpu(), a, a)
        with self.assertRaisesRegex(tessera.Error, "argument 'B': not contiguous"):
            gemm(a, a.t(), a)
        with self.assertRaisesRegex(tessera.Error, "expects element type f16, got f32"):
            gemm(a.float(), a, a)
        with self.assertRaisesRegex(RuntimeError, "must both be float16 or bfloat16"):
            tessera.ops.gemm(a.float(), a.float())
        with self.assertRaisesRegex(RuntimeError, "head dim"):
            tessera.ops.flash_attention(torch.empty(1, 4, 2, 64, device=self.device).half(),
                                        torch.empty(1, 4, 2, 128, device=self.device).half(),
                                        torch.empty(1, 4, 2, 128, device=self.device).half())
        tessera.synchronize(self.device.index)


@unittest.skipIf(SKIP, SKIP)
class OpsTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(1)
        self.device = torch.device("cuda", torch.cuda.current_device())

    def test_gemm_values_and_gradients(self):
        for dtype, tol in ((torch.float16, 1e-2), (torch.bfloat16, 2e-2)):
            a = torch.randn(300, 136, device=self.device, dtype=dtype, requires_grad=True)
            b = torch.randn(136, 200, device=self.device, dtype=dtype, requires_grad=True)
            c = tessera.ops.gemm(a, b)
            assert_close(self, c, gemm_reference(a, b), 2 * tol, tol, f"gemm {dtype}")
            grad = torch.randn_like(c)
            c.backward(grad)
            assert_close(self, a.grad, grad.double() @ b.double().t(), 4 * tol, tol, "dA")
            assert_close(self, b.grad, a.double().t() @ grad.double(), 4 * tol, tol, "dB")

    def test_gemm_sizes_off_the_multiple_of_8(self):
        for m, k, n in ((1, 3, 5), (77, 130, 9), (5, 8, 8)):
            a = torch.randn(m, k, device=self.device).half()
            b = torch.randn(k, n, device=self.device).half()
            assert_close(self, tessera.ops.gemm(a, b), gemm_reference(a, b), 1e-2, 1e-2,
                         f"gemm {m}x{k}x{n}")
        empty = tessera.ops.gemm(torch.randn(4, 0, device=self.device).half(),
                                 torch.randn(0, 6, device=self.device).half())
        self.assertTrue(torch.equal(empty, torch.zeros(4, 6, device=self.device).half()))

    def test_empty_then_full_launches_of_one_kernel(self):
        axpy = tessera.compile(AXPY)["axpy"]
        x = torch.randn(100, device=self.device)
        axpy(x[:0], x[:0], 1.0)  # Zero elements at a non-null address,
        axpy(torch.empty(0, device=self.device), torch.empty(0, device=self.device), 1.0)  # null.
        y = torch.randn(100, device=self.device)
        want = 3.0 * x.double() + y.double()
        axpy(x, y, 3.0)
        assert_close(self, y, want, 1e-6, 1e-6, "axpy after empty launches")

    def test_gemm_under_torch_compile(self):
        a = torch.randn(512, 256, device=self.device).half()
        b = torch.randn(256, 384, device=self.device).half()
        compiled = torch.compile(lambda x, y: torch.relu(tessera.ops.gemm(x, y)) * 2,
                                 fullgraph=True)
        eager = torch.relu(tessera.ops.gemm(a, b)) * 2
        self.assertTrue(torch.equal(compiled(a, b), eager))

    def test_attention_against_float64(self):
        cases = [(torch.float16, 128, False, 300, 333), (torch.bfloat16, 64, True, 200, 200),
                 (torch.float16, 256, True, 77, 130), (torch.bfloat16, 128, True, 130, 70)]
        for dtype, head_dim, causal, sq, skv in cases:
            q = torch.randn(2, sq, 8, head_dim, device=self.device, dtype=dtype)
            k = torch.randn(2, skv, 2, head_dim, device=self.device, dtype=dtype)
            v = torch.randn(2, skv, 2, head_dim, device=self.device, dtype=dtype)
            scale = 1.0 / math.sqrt(head_dim)
            o, lse = tessera.ops.flash_attention(q, k, v, causal=causal)
            want_o, want_lse = attention_reference(q, k, v, scale, causal)
            what = f"attention {dtype} d{head_dim} causal={causal} {sq}x{skv}"
            tol = 1e-2 if dtype == torch.float16 else 3e-2
            seen = torch.isfinite(want_lse)  # Causal rows that see no key: LSE +inf, O 0.
            assert_close(self, o, torch.where(seen.transpose(1, 2)[..., None], want_o, 0.0),
                         tol, tol, what + " O")
            self.assertTrue(torch.equal(torch.isinf(lse), ~seen), what + " LSE inf")
            assert_close(self, lse[seen], want_lse[seen], 1e-3, 1e-3, what + " LSE")

    def test_attention_under_torch_compile(self):
        q = torch.randn(1, 128, 4, 128, device=self.device).half()
        k = torch.randn(1, 256, 4, 128, device=self.device).half()
        compiled = torch.compile(lambda a, b: tessera.ops.flash_attention(a, b, b)[0] + 1,
                                 fullgraph=True)
        self.assertTrue(torch.equal(compiled(q, k), tessera.ops.flash_attention(q, k, k)[0] + 1))

    def test_attention_gradients_against_float64_and_deterministic(self):
        cases = [(torch.float16, 128, False, 200, 150, 4, 2), (torch.bfloat16, 64, True, 77, 131, 3, 1),
                 (torch.float16, 64, True, 130, 70, 2, 2)]
        for dtype, head_dim, causal, sq, skv, heads, kv_heads in cases:
            what = f"attention backward {dtype} d{head_dim} causal={causal} {sq}x{skv}"
            q, k, v = (torch.randn(2, n, h, head_dim, device=self.device, dtype=dtype)
                       for n, h in ((sq, heads), (skv, kv_heads), (skv, kv_heads)))
            grad_o = torch.randn(2, sq, heads, head_dim, device=self.device, dtype=dtype)
            grad_lse = torch.randn(2, heads, sq, device=self.device)
            scale = 1.0 / math.sqrt(head_dim)

            def grads(fn, inputs):
                inputs = [x.detach().clone().requires_grad_(True) for x in inputs]
                o, lse = fn(*inputs)
                seen = torch.isfinite(lse)
                loss = (o.double() * grad_o.double()).sum() + \
                    (torch.where(seen, lse, 0.0).double() * grad_lse.double()).sum()
                loss.backward()
                return [x.grad for x in inputs]

            got = grads(lambda a, b, c: tessera.ops.flash_attention(a, b, c, causal=causal),
                        (q, k, v))
            again = grads(lambda a, b, c: tessera.ops.flash_attention(a, b, c, causal=causal),
                          (q, k, v))
            want = grads(lambda a, b, c: attention_reference(a, b, c, scale, causal),
                         (q.double(), k.double(), v.double()))
            tol = 2e-2 if dtype == torch.float16 else 6e-2
            for name, g, a, w in zip("QKV", got, again, want):
                self.assertTrue(torch.equal(g, a), f"{what}: d{name} differs run to run")
                self.assertTrue(torch.isfinite(g).all().item(), f"{what}: d{name} not finite")
                # Each row (one token's head) against its own norm, so that a
                # wrong small row (a masked tail) cannot hide under large ones.
                error = (g.double() - w).norm(dim=-1)
                bound = tol * w.norm(dim=-1) + 1e-3 * tol * w.norm(dim=-1).max()
                worst = (error - bound).max().item()
                self.assertLessEqual(worst, 0.0, f"{what} d{name}: a row's error over its bound")

    def test_varlen_attention_and_gradients_against_float64(self):
        # Lengths 0, 1, odd and past a block; Sq < Skv and Sq > Skv in one
        # batch; grouped heads. Each sequence against its own reference.
        lq, lk = [77, 1, 0, 200, 130], [131, 1, 9, 150, 0]
        cases = [(torch.float16, 64, False), (torch.bfloat16, 128, True)]
        cu = lambda n: torch.tensor([0] + list(itertools.accumulate(n)), dtype=torch.int32,
                                    device=self.device)
        for dtype, head_dim, causal in cases:
            what = f"varlen {dtype} d{head_dim} causal={causal}"
            q = torch.randn(sum(lq), 4, head_dim, device=self.device, dtype=dtype)
            k, v = (torch.randn(sum(lk), 2, head_dim, device=self.device, dtype=dtype)
                    for _ in range(2))
            grad_o = torch.randn_like(q)
            scale = 1.0 / math.sqrt(head_dim)
            inputs = [x.clone().requires_grad_(True) for x in (q, k, v)]
            o, lse = tessera.ops.flash_attention_varlen(*inputs, cu(lq), cu(lk), max(lq), max(lk),
                                                        causal=causal)
            (o.double() * grad_o.double()).sum().backward()
            tol = 1e-2 if dtype == torch.float16 else 3e-2
            for b in range(len(lq)):
                rows = slice(sum(lq[:b]), sum(lq[:b + 1]))
                keys = slice(sum(lk[:b]), sum(lk[:b + 1]))
                if lq[b] == 0:
                    continue
                ref = [x[None, s].double().requires_grad_(True)
                       for x, s in ((q, rows), (k, keys), (v, keys))]
                want_o, want_lse = attention_reference(*ref, scale, causal)
                seen = torch.isfinite(want_lse[0])  # [H, Sq]
                assert_close(self, o[rows], torch.where(seen.t()[..., None], want_o[0], 0.0),
                             tol, tol, f"{what} sequence {b} O")
                self.assertTrue(torch.equal(torch.isinf(lse[:, rows]), ~seen), what + " LSE inf")
                assert_close(self, lse[:, rows][seen], want_lse[0][seen], 1e-3, 1e-3,
                             f"{what} sequence {b} LSE")
                if lk[b] == 0:
                    continue
                (want_o * grad_o[None, rows].double()).sum().backward()
                for name, got, r, s in zip("QKV", [x.grad for x in inputs], ref,
                                           (rows, keys, keys)):
                    error = (got[s].double() - r.grad[0]).norm(dim=-1)
                    bound = 2 * tol * r.grad[0].norm(dim=-1) + 1e-3
                    self.assertLessEqual((error - bound).max().item(), 0.0,
                                         f"{what} sequence {b} d{name}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
