import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_swiglu_kernel(x_ptr, w_ptr, y_ptr, H, eps, BLOCK: tl.constexpr):
    # Both halves of the row stay in registers: the normalised activation is never written.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < H
    x_row = x_ptr + row * 2 * H
    a = tl.load(x_row + cols, mask=mask, other=0.0)
    b = tl.load(x_row + H + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt((tl.sum(a * a, axis=0) + tl.sum(b * b, axis=0)) / (2 * H) + eps)
    gate = a * rstd * tl.load(w_ptr + cols, mask=mask, other=0.0)
    up = b * rstd * tl.load(w_ptr + H + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * H + cols, gate * tl.sigmoid(gate) * up, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2 * hidden) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        two_h = x.shape[-1]
        hidden = two_h // 2
        rows = x.numel() // two_h
        y = torch.empty(x.shape[:-1] + (hidden,), device=x.device, dtype=x.dtype)
        BLOCK = triton.next_power_of_2(hidden)
        _rmsnorm_swiglu_kernel[(rows,)](x, self.weight, y, hidden, self.eps, BLOCK=BLOCK, num_warps=8)
        return y
