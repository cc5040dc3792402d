"""tessera.ops: Tessera's GEMM and FlashAttention forward as torch.library
custom operators (torch.ops.tessera.gemm, torch.ops.tessera.flash_attention,
and flash_attention_varlen for packed batches of sequences),
with fake (meta) implementations, so they trace under torch.compile, and
autograd: gemm's backward is two GEMMs, flash_attention's the deterministic
three-kernel backward (head dims 64 and 128; a gradient of the LSE output
counts too).

    import tessera.ops
    c = tessera.ops.gemm(a, b)                          # f16 or bf16, [M, K] @ [K, N]
    o, lse = tessera.ops.flash_attention(q, k, v, causal=True)
    o, lse = tessera.ops.flash_attention_varlen(        # packed batches, FlashAttention's
        q, k, v, cu_q, cu_k, max_q, max_k, causal=True)  # varlen form

The kernels come from the ops bundles, one file per target, written by
`bazel run //python:ops_bundles -- $PWD/python/tessera/ops` and found at
$TESSERA_OPS_DIR or in ops/ next to this package; the device's target picks
the file (tessera.target_for_capability).
"""

import math
import os
import threading
from typing import Optional, Tuple

import torch

import tessera

__all__ = ["flash_attention", "flash_attention_backward", "flash_attention_varlen",
           "flash_attention_varlen_backward", "gemm", "kernel_for"]

_DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16"}
_lock = threading.Lock()
_bundles = {}


def ops_dir():
    """The directory of the ops bundles (see the module's documentation)."""
    explicit = os.environ.get("TESSERA_OPS_DIR")
    if explicit:
        return explicit
    return os.path.join(os.path.dirname(os.path.abspath(tessera.__file__)), "ops")


def kernel_for(device, name):
    """Kernel `name` of the ops bundle of `device`'s target (a tessera.Kernel)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    with _lock:
        bundle = _bundles.get(index)
        if bundle is None:
            target = tessera.target_for_capability(tessera.device_capability(index))
            bundle = _bundles[index] = tessera.load(os.path.join(ops_dir(), target + ".pb"))
    return bundle[name]


def _check_gemm(a, b):
    torch._check(a.dim() == 2 and b.dim() == 2,
                 lambda: f"tessera.ops.gemm: expects 2-D a and b, got {a.dim()}-D and {b.dim()}-D")
    torch._check(a.shape[1] == b.shape[0],
                 lambda: f"tessera.ops.gemm: a is {tuple(a.shape)} but b is {tuple(b.shape)} "
                 "(a's columns must equal b's rows)")
    torch._check(a.dtype == b.dtype and a.dtype in _DTYPES,
                 lambda: f"tessera.ops.gemm: a and b must both be float16 or bfloat16, got "
                 f"{a.dtype} and {b.dtype}")
    torch._check(a.device == b.device,
                 lambda: f"tessera.ops.gemm: a is on {a.device}, b on {b.device}")


# The GEMM kernels read K and N in multiples of 8 (16-byte rows for their
# vector and bulk copies); other sizes are zero-padded up to them.
_GEMM_MULTIPLE = 8


def _padded(x, rows, cols):
    if tuple(x.shape) == (rows, cols):
        return x.contiguous()
    out = x.new_zeros((rows, cols))
    out[:x.shape[0], :x.shape[1]] = x
    return out


@torch.library.custom_op("tessera::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A B for A [M, K] and B [K, N] of float16 or bfloat16 (f32
    accumulation). K and N that are not multiples of 8 cost a zero-padded
    copy of the operands (and of C's columns)."""
    _check_gemm(a, b)
    (m, k), n = a.shape, b.shape[1]
    if m == 0 or n == 0 or k == 0:
        return torch.zeros((m, n), dtype=a.dtype, device=a.device)
    k8, n8 = -(-k // _GEMM_MULTIPLE) * _GEMM_MULTIPLE, -(-n // _GEMM_MULTIPLE) * _GEMM_MULTIPLE
    c = torch.empty((m, n8), dtype=a.dtype, device=a.device)
    kernel_for(a.device, "gemm_" + _DTYPES[a.dtype])(_padded(a, m, k8), _padded(b, k8, n8), c)
    return c if n8 == n else c[:, :n].contiguous()


@gemm.register_fake
def _gemm_fake(a, b):
    _check_gemm(a, b)
    return a.new_empty((a.shape[0], b.shape[1]))


def _gemm_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _gemm_backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad = grad.contiguous()
    grad_a = gemm(grad, b.t().contiguous()) if ctx.needs_input_grad[0] else None
    grad_b = gemm(a.t().contiguous(), grad) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b


gemm.register_autograd(_gemm_backward, setup_context=_gemm_setup_context)


def _check_attention(q, k, v):
    torch._check(q.dim() == 4 and k.dim() == 4 and v.dim() == 4,
                 lambda: "tessera.ops.flash_attention: expects q [B, Sq, H, D] and k, v "
                 f"[B, Skv, Hkv, D], got {q.dim()}-D, {k.dim()}-D, {v.dim()}-D")
    torch._check(k.shape == v.shape,
                 lambda: f"tessera.ops.flash_attention: k is {tuple(k.shape)} but v is "
                 f"{tuple(v.shape)}")
    torch._check(q.shape[0] == k.shape[0] and q.shape[3] == k.shape[3],
                 lambda: f"tessera.ops.flash_attention: q is {tuple(q.shape)} but k is "
                 f"{tuple(k.shape)} (batch and head dim must match)")
    torch._check(q.shape[3] in (64, 128, 256),
                 lambda: f"tessera.ops.flash_attention: head dim {q.shape[3]} has no kernel "
                 "(64, 128 and 256 do)")
    torch._check(k.shape[2] > 0,
                 lambda: "tessera.ops.flash_attention: k and v have no heads")
    torch._check(q.shape[2] % k.shape[2] == 0,
                 lambda: f"tessera.ops.flash_attention: {q.shape[2]} query heads do not share "
                 f"{k.shape[2]} key heads evenly")
    torch._check(q.dtype == k.dtype == v.dtype and q.dtype in _DTYPES,
                 lambda: "tessera.ops.flash_attention: q, k and v must all be float16 or "
                 f"bfloat16, got {q.dtype}, {k.dtype}, {v.dtype}")
    torch._check(q.device == k.device == v.device,
                 lambda: "tessera.ops.flash_attention: q, k and v must be on one device")


@torch.library.custom_op("tessera::flash_attention", mutates_args=())
def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    scale: Optional[float] = None,
                    causal: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    """O = softmax(scale Q K^T + mask) V and the rows' natural log-sum-exp:
    q [B, Sq, H, D], k and v [B, Skv, Hkv, D] (Hkv divides H), D in 64, 128,
    256; scale defaults to 1 / sqrt(D); causal aligns the mask bottom right.
    Returns O [B, Sq, H, D] and LSE [B, H, Sq] (float32)."""
    _check_attention(q, k, v)
    batch, queries, heads, head_dim = q.shape
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((batch, heads, queries), dtype=torch.float32, device=q.device)
    if o.numel() == 0:
        return o, lse
    if k.shape[1] == 0:  # No key for any row: O = 0, LSE = +inf, as the kernels define it.
        return o.zero_(), lse.fill_(math.inf)
    name = f"flash_attention_{_DTYPES[q.dtype]}_d{head_dim}" + ("_causal" if causal else "")
    kernel = kernel_for(q.device, name)
    kernel(q.contiguous(), k.contiguous(), v.contiguous(), o, lse,
           float(1.0 / math.sqrt(head_dim) if scale is None else scale))
    return o, lse


@flash_attention.register_fake
def _flash_attention_fake(q, k, v, scale=None, causal=False):
    _check_attention(q, k, v)
    batch, queries, heads, _ = q.shape
    return (q.new_empty(q.shape),
            q.new_empty((batch, heads, queries), dtype=torch.float32))


def _attention_setup_context(ctx, inputs, output):
    q, k, v, scale, causal = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.scale = 1.0 / math.sqrt(q.shape[3]) if scale is None else scale
    ctx.causal = causal


@torch.library.custom_op("tessera::flash_attention_backward", mutates_args=())
def flash_attention_backward(grad_o: torch.Tensor, grad_lse: torch.Tensor, q: torch.Tensor,
                             k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                             scale: float,
                             causal: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV of flash_attention (deterministic: three kernels, no atomics;
    head dims 64 and 128): D = rowsum(dO * O), then dQ, then dK and dV. A
    gradient reaching the LSE enters through D: dLSE_i / dS_ij = P_ij, so
    dS = P (dP - (D - dLSE))."""
    batch, queries, heads, head_dim = q.shape
    torch._check(head_dim in (64, 128),
                 lambda: f"tessera.ops.flash_attention: no backward for head dim {head_dim} "
                 "(64 and 128 have one)")
    grad_q, grad_k, grad_v = (torch.empty_like(x, memory_format=torch.contiguous_format)
                              for x in (q, k, v))
    if q.numel() == 0 or k.numel() == 0:
        return grad_q.zero_(), grad_k.zero_(), grad_v.zero_()
    base = f"flash_attention_bwd_{_DTYPES[q.dtype]}_d{head_dim}" + ("_causal" if causal else "")
    rows = torch.empty((batch, heads, queries), dtype=torch.float32, device=q.device)
    grad_o, q, k, v = (x.contiguous() for x in (grad_o, q, k, v))
    kernel_for(q.device, base + "_pre")(o.contiguous(), grad_o, rows)
    rows -= grad_lse
    inputs = (q, k, v, grad_o, lse.contiguous(), rows)
    kernel_for(q.device, base + "_dq")(*inputs, grad_q, float(scale))
    kernel_for(q.device, base)(*inputs, grad_k, grad_v, float(scale))
    return grad_q, grad_k, grad_v


@flash_attention_backward.register_fake
def _flash_attention_backward_fake(grad_o, grad_lse, q, k, v, o, lse, scale, causal):
    torch._check(q.shape[3] in (64, 128),
                 lambda: f"tessera.ops.flash_attention: no backward for head dim {q.shape[3]} "
                 "(64 and 128 have one)")
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _attention_backward(ctx, grad_o, grad_lse):
    q, k, v, o, lse = ctx.saved_tensors
    grad_q, grad_k, grad_v = flash_attention_backward(grad_o, grad_lse, q, k, v, o, lse,
                                                      ctx.scale, ctx.causal)
    return grad_q, grad_k, grad_v, None, None


flash_attention.register_autograd(_attention_backward, setup_context=_attention_setup_context)


def _check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k):
    what = "tessera.ops.flash_attention_varlen"
    torch._check(q.dim() == 3 and k.dim() == 3 and v.dim() == 3,
                 lambda: f"{what}: expects q [Tq, H, D] and k, v [Tk, Hkv, D] (sequences packed "
                 f"end to end), got {q.dim()}-D, {k.dim()}-D, {v.dim()}-D")
    torch._check(k.shape == v.shape,
                 lambda: f"{what}: k is {tuple(k.shape)} but v is {tuple(v.shape)}")
    torch._check(q.shape[2] == k.shape[2],
                 lambda: f"{what}: q is {tuple(q.shape)} but k is {tuple(k.shape)} (head dims "
                 "must match)")
    torch._check(q.shape[2] in (64, 128),
                 lambda: f"{what}: head dim {q.shape[2]} has no kernel (64 and 128 do)")
    torch._check(k.shape[1] > 0 and q.shape[1] % k.shape[1] == 0,
                 lambda: f"{what}: {q.shape[1]} query heads do not share {k.shape[1]} key heads "
                 "evenly")
    torch._check(q.dtype == k.dtype == v.dtype and q.dtype in _DTYPES,
                 lambda: f"{what}: q, k and v must all be float16 or bfloat16, got {q.dtype}, "
                 f"{k.dtype}, {v.dtype}")
    torch._check(cu_seqlens_q.dim() == 1 and cu_seqlens_q.shape == cu_seqlens_k.shape and
                 cu_seqlens_q.shape[0] >= 1,
                 lambda: f"{what}: cu_seqlens_q and cu_seqlens_k must be 1-D of batch + 1 "
                 f"entries each, got {tuple(cu_seqlens_q.shape)} and {tuple(cu_seqlens_k.shape)}")
    torch._check(cu_seqlens_q.dtype == cu_seqlens_k.dtype == torch.int32,
                 lambda: f"{what}: cumulative lengths must be int32, got {cu_seqlens_q.dtype} and "
                 f"{cu_seqlens_k.dtype}")
    torch._check(q.device == k.device == v.device == cu_seqlens_q.device == cu_seqlens_k.device,
                 lambda: f"{what}: q, k, v and the cumulative lengths must be on one device")


@torch.library.custom_op("tessera::flash_attention_varlen", mutates_args=())
def flash_attention_varlen(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                           cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                           max_seqlen_q: int, max_seqlen_k: int, scale: Optional[float] = None,
                           causal: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    """FlashAttention's varlen form: sequences of different lengths packed
    end to end, q [Tq, H, D], k and v [Tk, Hkv, D] (D 64 or 128), sequence
    b's queries rows cu_seqlens_q[b]:cu_seqlens_q[b + 1] and its keys
    cu_seqlens_k[b]:cu_seqlens_k[b + 1] (int32, batch + 1 entries);
    max_seqlen_q and max_seqlen_k at least the longest sequence's (rows past
    them are not computed, as in FlashAttention). As in FlashAttention's
    API the last cumulative lengths are q's and k's lengths (Tq, Tk): a key
    tile may read past a sequence's keys, masked (P = 0), so rows there must
    hold finite values. causal aligns the mask bottom right per sequence. Returns O [Tq, H, D] and LSE [H, Tq]
    (float32; +inf for a row that sees no key, whose O is 0)."""
    _check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k)
    total, heads, head_dim = q.shape
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((heads, total), dtype=torch.float32, device=q.device)
    if o.numel() == 0:
        return o, lse
    if k.shape[0] == 0:  # No key for any row: O = 0, LSE = +inf, as the kernels define it.
        return o.zero_(), lse.fill_(math.inf)
    name = f"flash_attention_varlen_{_DTYPES[q.dtype]}_d{head_dim}" + ("_causal" if causal else "")
    kernel_for(q.device, name)(q.contiguous(), k.contiguous(), v.contiguous(), o, lse,
                               cu_seqlens_q.contiguous(), cu_seqlens_k.contiguous(),
                               int(max_seqlen_q),
                               float(1.0 / math.sqrt(head_dim) if scale is None else scale))
    return o, lse


@flash_attention_varlen.register_fake
def _flash_attention_varlen_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                 scale=None, causal=False):
    _check_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k)
    return q.new_empty(q.shape), q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)


def _varlen_setup_context(ctx, inputs, output):
    q, k, v, cu_q, cu_k, max_q, max_k, scale, causal = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k)
    ctx.scale = 1.0 / math.sqrt(q.shape[2]) if scale is None else scale
    ctx.causal, ctx.max_q, ctx.max_k = causal, max_q, max_k


@torch.library.custom_op("tessera::flash_attention_varlen_backward", mutates_args=())
def flash_attention_varlen_backward(
        grad_o: torch.Tensor, grad_lse: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
        v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor, cu_seqlens_q: torch.Tensor,
        cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int, scale: float,
        causal: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV of flash_attention_varlen, deterministic (the three
    kernels of flash_attention_backward in their packed form)."""
    grad_q, grad_k, grad_v = (torch.empty_like(x, memory_format=torch.contiguous_format)
                              for x in (q, k, v))
    if q.numel() == 0 or k.numel() == 0:
        return grad_q.zero_(), grad_k.zero_(), grad_v.zero_()
    base = (f"flash_attention_bwd_varlen_{_DTYPES[q.dtype]}_d{q.shape[2]}" +
            ("_causal" if causal else ""))
    rows = torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)
    grad_o, q, k, v = (x.contiguous() for x in (grad_o, q, k, v))
    kernel_for(q.device, base + "_pre")(o.contiguous(), grad_o, rows)
    rows -= grad_lse
    inputs = (q, k, v, grad_o, lse.contiguous(), rows, cu_seqlens_q.contiguous(),
              cu_seqlens_k.contiguous())
    kernel_for(q.device, base + "_dq")(*inputs, grad_q, int(max_seqlen_q), float(scale))
    kernel_for(q.device, base)(*inputs, grad_k, grad_v, int(max_seqlen_k), float(scale))
    return grad_q, grad_k, grad_v


@flash_attention_varlen_backward.register_fake
def _flash_attention_varlen_backward_fake(grad_o, grad_lse, q, k, v, o, lse, cu_seqlens_q,
                                          cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, causal):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _varlen_backward(ctx, grad_o, grad_lse):
    q, k, v, o, lse, cu_q, cu_k = ctx.saved_tensors
    grad_q, grad_k, grad_v = flash_attention_varlen_backward(
        grad_o, grad_lse, q, k, v, o, lse, cu_q, cu_k, ctx.max_q, ctx.max_k, ctx.scale,
        ctx.causal)
    return grad_q, grad_k, grad_v, None, None, None, None, None, None


flash_attention_varlen.register_autograd(_varlen_backward, setup_context=_varlen_setup_context)
