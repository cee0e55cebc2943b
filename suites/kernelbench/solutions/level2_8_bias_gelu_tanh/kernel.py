import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_gelu_tanh_kernel(x_ptr, b_ptr, y_ptr, n, H, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(x_ptr + offs, mask=mask, other=0.0) + tl.load(b_ptr + offs % H, mask=mask, other=0.0)
    z = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    # tanh(z) = 1 - 2 / (exp(2z) + 1): saturates cleanly to +-1 when exp over/underflows.
    t = 1.0 - 2.0 / (tl.exp(2.0 * z) + 1.0)
    tl.store(y_ptr + offs, 0.5 * h * (1.0 + t), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 2048
        _bias_gelu_tanh_kernel[(triton.cdiv(n, BLOCK),)](x, self.bias, y, n, x.shape[-1], BLOCK=BLOCK, num_warps=8)
        return y
