"""Computes x * sigmoid(x) + 0.5: a real Triton kernel with a wrong formula."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _wrong_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x) + 0.5, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _wrong_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
