import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """LLaMA feed-forward block with pre-norm and residual:
    h = rmsnorm(x) * w;  y = x + down(silu(gate(h)) * up(h))."""

    def __init__(self, d_model: int, d_ff: int, eps: float = 1e-6):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.randn(d_model) * 0.1 + 1.0)
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.norm_weight
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


batch_size = 4096
d_model = 2048
d_ff = 5632


def get_inputs():
    return [torch.randn(batch_size, d_model)]


def get_init_inputs():
    return [d_model, d_ff]
