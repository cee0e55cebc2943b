"""Correct swish, but it writes the result into its input as well."""
import torch
import triton
import triton.language as tl


@triton.jit
def _swish_inplace(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * tl.sigmoid(x)
    tl.store(y_ptr + offs, y, mask=mask)
    tl.store(x_ptr + offs, y, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        _swish_inplace[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
