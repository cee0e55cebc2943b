import torch
import torch.nn as nn


class Model(nn.Module):
    """Pre-norm projection: y = Linear(LayerNorm(x))."""

    def __init__(self, in_features: int, out_features: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(in_features, eps=eps)
        self.linear = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(in_features) * 0.2 + 1.0)
            self.norm.bias.copy_(torch.randn(in_features) * 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.norm(x))


batch_size = 4096
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.randn(batch_size, in_features) * 2.0 + 0.3]


def get_init_inputs():
    return [in_features, out_features]
