import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """RMSNorm over a (batch, 2*hidden) activation, then SwiGLU gating of its two halves:
    y = silu(n[:, :hidden]) * n[:, hidden:] with n = rmsnorm(x) * weight."""

    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2 * hidden) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
        gate, up = n.chunk(2, dim=-1)
        return F.silu(gate) * up


batch_size = 16384
hidden = 4096


def get_inputs():
    return [torch.randn(batch_size, 2 * hidden)]


def get_init_inputs():
    return [hidden]
