# task: add_rmsnorm
# An op defined with torch.library.Library whose Python kernel does the residual add in torch (one
# operation an element) and launches a Triton kernel for the norm (about five), called as
# torch.ops.<ns>.<op>: the library's share inside the op's body is small, as in any honest hybrid.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_LIB = torch.library.Library("ka_clean_norm", "DEF")
_LIB.define("add_rmsnorm(Tensor x, Tensor residual, Tensor weight, float eps) -> Tensor")


@triton.jit
def _rmsnorm(h_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    h = tl.load(h_ptr + row * n_cols + cols, mask=mask, other=0.0)
    inv = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, h * inv * w, mask=mask)


def _add_rmsnorm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    h = (x + residual).contiguous()
    rows, hidden = h.shape
    y = torch.empty_like(h)
    _rmsnorm[(rows,)](h, weight, y, hidden, eps, BLOCK=triton.next_power_of_2(hidden))
    return y


_LIB.impl("add_rmsnorm", _add_rmsnorm, "CompositeExplicitAutograd")


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return torch.ops.ka_clean_norm.add_rmsnorm(x, residual, self.weight, self.eps)
