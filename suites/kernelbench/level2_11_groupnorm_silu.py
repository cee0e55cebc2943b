import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GroupNorm followed by SiLU, as in diffusion-model ResNet blocks (NCHW)."""

    def __init__(self, num_groups: int, channels: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(channels) * 0.2 + 1.0)
            self.norm.bias.copy_(torch.randn(channels) * 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.norm(x))


batch_size = 64
channels = 256
num_groups = 32
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 1.5 + 0.2]


def get_init_inputs():
    return [num_groups, channels]
