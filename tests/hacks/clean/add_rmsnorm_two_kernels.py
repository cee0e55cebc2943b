# task: add_rmsnorm
# Unfused: an add kernel into an fp32 scratch, then a norm kernel with a column loop.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=m) + tl.load(b_ptr + offs, mask=m), mask=m)


@triton.jit
def _rmsnorm(h_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        h = tl.load(h_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        sq += h * h
    inv = tl.rsqrt(tl.sum(sq, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(h_ptr + row * n_cols + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * n_cols + cols, h * inv * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        rows, hidden = x.shape
        h = torch.empty_like(x)
        _add[(triton.cdiv(x.numel(), 1024),)](x, residual, h, x.numel(), BLOCK=1024)
        y = torch.empty_like(x)
        _rmsnorm[(rows,)](h, self.weight, y, hidden, self.eps, BLOCK=256)
        return y
