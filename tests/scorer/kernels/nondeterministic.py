"""Correct to tolerance but adds call-dependent noise below atol: not bit-reproducible."""
import torch
import triton
import triton.language as tl


@triton.jit
def _swish(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x) + eps, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = torch.empty_like(x)
        _swish[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), self.calls * 1e-6, BLOCK=1024)
        return y
