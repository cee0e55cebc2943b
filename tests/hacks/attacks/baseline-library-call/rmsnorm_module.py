# task: add_rmsnorm
# Does the add in Triton and hands the normalisation to torch's own RMSNorm module.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, r_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(h_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(r_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)
        self.eps = eps
        self.norm = nn.RMSNorm(hidden, eps=eps, elementwise_affine=False)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = torch.empty_like(x)
        _add[(triton.cdiv(x.numel(), 1024),)](x, residual, h, x.numel(), BLOCK=1024)
        return self.norm(h) * self.weight
