"""FlashAttention and a GEMM from PyTorch through Tessera, checked against
torch, then a kernel compiled from tile IR text at run time.

    bazel build //python:bridge //tools:tessera-compile
    bazel run //python:ops_bundles -- $PWD/python/tessera/ops
    PYTHONPATH=python python3 python/examples/attention.py
"""

import math

import torch

import tessera
import tessera.ops

device = torch.device("cuda")
torch.manual_seed(0)

# Grouped-query attention: 16 query heads over 4 key/value heads, causal.
q = torch.randn(2, 1000, 16, 128, device=device, dtype=torch.bfloat16)
k = torch.randn(2, 1000, 4, 128, device=device, dtype=torch.bfloat16)
v = torch.randn(2, 1000, 4, 128, device=device, dtype=torch.bfloat16)
o, lse = tessera.ops.flash_attention(q, k, v, causal=True)
want = torch.nn.functional.scaled_dot_product_attention(
    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
    enable_gqa=True).transpose(1, 2)
print(f"flash_attention: max |O - torch| = {(o.float() - want.float()).abs().max().item():.2e}")

# A GEMM inside a compiled function, with gradients.
a = torch.randn(1024, 512, device=device, dtype=torch.float16, requires_grad=True)
b = torch.randn(512, 768, device=device, dtype=torch.float16, requires_grad=True)
step = torch.compile(lambda x, y: torch.nn.functional.gelu(tessera.ops.gemm(x, y)).sum())
step(a, b).backward()
print(f"gemm: |dA| = {a.grad.float().norm().item():.1f}, |dB| = {b.grad.float().norm().item():.1f}")

# Any kernel file's kernels are callable: here one compiled from tile IR now
# (cached on disk by IR, target, options and compiler).
AXPY = """
#grid = affine_map<()[s0, s1] -> (s0 ceildiv 1024)>
module {
  tile.kernel @axpy(%x: !tile.tensor<?xf32>, %y: !tile.tensor<?xf32>, %alpha: f32) grid(#grid)
      threads(256) blocks(%bx) attributes {arg_names = ["X", "Y", "alpha"],
      dim_groups = {N = array<i64: 0, 1>}} {
    %a = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>,
        name = "a"} : <1024xf32, fragment>
    %b = tile.alloc_fragment {distribution = #tile.distribution<threads = 256, vector = 4>,
        name = "b"} : <1024xf32, fragment>
    %c1024 = arith.constant 1024 : index
    %base = arith.muli %bx, %c1024 : index
    tile.copy %x[%base] to %a : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.copy %y[%base] to %b : !tile.tensor<?xf32> to !tile.buffer<1024xf32, fragment>
    tile.parallel (%i) in [1024] attributes {distribution = #tile.distribution<threads = 256,
        vector = 4>} {
      %u = tile.load %a[%i] : <1024xf32, fragment>
      %w = tile.load %b[%i] : <1024xf32, fragment>
      %m = arith.mulf %alpha, %u : f32
      %s = arith.addf %m, %w : f32
      tile.store %s, %b[%i] : <1024xf32, fragment>
    }
    tile.copy %b to %y[%base] : !tile.buffer<1024xf32, fragment> to !tile.tensor<?xf32>
  }
}
"""
axpy = tessera.compile(AXPY)["axpy"]
print(axpy.signature)
x, y = torch.randn(3000, device=device), torch.randn(3000, device=device)
want = 2.0 * x + y
axpy(x, y, 2.0)
print(f"axpy: max |Y - torch| = {(y - want).abs().max().item():.2e}")
assert math.isfinite(y.sum().item())
