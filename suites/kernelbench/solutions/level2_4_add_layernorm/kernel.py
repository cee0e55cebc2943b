import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_layernorm_kernel(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    # The sum x + residual lives only in registers: both inputs read once, output written once.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    off = row * n_cols + cols
    h = tl.load(x_ptr + off, mask=mask, other=0.0) + tl.load(r_ptr + off, mask=mask, other=0.0)
    mean = tl.sum(h, axis=0) / n_cols
    hc = tl.where(mask, h - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(hc * hc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + off, hc * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        hidden = x.shape[-1]
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(hidden)
        _add_layernorm_kernel[(x.numel() // hidden,)](
            x, residual, self.norm.weight, self.norm.bias, y, hidden, self.norm.eps, BLOCK=BLOCK, num_warps=8)
        return y
