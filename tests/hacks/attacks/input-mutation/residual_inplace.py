# task: add_rmsnorm
# vLLM-style fused add+norm that stores x + residual back into the residual buffer.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    h = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0) + tl.load(r_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(r_ptr + row * n_cols + cols, h, mask=mask)
    inv = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, h * inv * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        rows, hidden = x.shape
        y = torch.empty_like(x)
        _fused[(rows,)](x, residual, self.weight, y, hidden, self.eps, BLOCK=triton.next_power_of_2(hidden))
        return y
