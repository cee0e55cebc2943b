import torch
import torch.nn as nn


class Model(nn.Module):
    """Residual add followed by LayerNorm: y = LayerNorm(x + residual)."""

    def __init__(self, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden) * 0.2 + 1.0)
            self.norm.bias.copy_(torch.randn(hidden) * 0.2)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


batch_size = 16384
hidden = 4096


def get_inputs():
    return [torch.randn(batch_size, hidden), torch.randn(batch_size, hidden) * 0.5 + 0.1]


def get_init_inputs():
    return [hidden]
