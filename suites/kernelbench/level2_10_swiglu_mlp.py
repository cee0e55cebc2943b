import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Gated MLP input half (LLaMA style): y = silu(x W_gate^T) * (x W_up^T)."""

    def __init__(self, in_features: int, inter_features: int):
        super().__init__()
        self.gate = nn.Linear(in_features, inter_features, bias=False)
        self.up = nn.Linear(in_features, inter_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.gate(x)) * self.up(x)


batch_size = 4096
in_features = 4096
inter_features = 2048


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, inter_features]
