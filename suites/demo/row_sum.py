import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over the last dimension, keeping it: (B, D) -> (B, 1)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 16384
dim = 8192
reduce_dim = 1


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [reduce_dim]
