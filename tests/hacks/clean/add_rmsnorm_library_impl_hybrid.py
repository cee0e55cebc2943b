# task: add_rmsnorm
# An op defined with torch.library.Library whose Python kernel runs two Triton kernels (the
# residual add with each row's mean square, then the scaling) and does one step in torch between
# them: the rsqrt of the per-row mean squares, one element a row. Called as torch.ops.<ns>.<op>:
# the library's share inside the op's body is small, as in any honest hybrid. (Its first version
# did the whole residual add in torch: on an H100 that add took 61% of forward's device time, a
# hybrid the own-work rule rightly rejects.)
import torch
import torch.nn as nn
import triton
import triton.language as tl

_LIB = torch.library.Library("ka_clean_norm", "DEF")
_LIB.define("add_rmsnorm(Tensor x, Tensor residual, Tensor weight, float eps) -> Tensor")


@triton.jit
def _add_mean_square(x_ptr, r_ptr, h_ptr, ms_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    h = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0) + tl.load(r_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(h_ptr + row * n_cols + cols, h, mask=mask)
    tl.store(ms_ptr + row, tl.sum(h * h, axis=0) / n_cols)


@triton.jit
def _scale(h_ptr, inv_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    h = tl.load(h_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, h * tl.load(inv_ptr + row) * w, mask=mask)


def _add_rmsnorm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    x, residual = x.contiguous(), residual.contiguous()
    rows, hidden = x.shape
    block = triton.next_power_of_2(hidden)
    h = torch.empty_like(x)
    mean_square = torch.empty(rows, device=x.device, dtype=torch.float32)
    _add_mean_square[(rows,)](x, residual, h, mean_square, hidden, BLOCK=block)
    inv = torch.rsqrt(mean_square + eps)
    y = torch.empty_like(h)
    _scale[(rows,)](h, inv, weight, y, hidden, BLOCK=block)
    return y


_LIB.impl("add_rmsnorm", _add_rmsnorm, "CompositeExplicitAutograd")


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return torch.ops.ka_clean_norm.add_rmsnorm(x, residual, self.weight, self.eps)
