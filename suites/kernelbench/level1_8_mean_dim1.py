import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean over the middle dimension of a (batch, dim1, dim2) tensor (a strided reduction)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=1)


batch_size = 256
dim1 = 2048
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2) + 0.25]


def get_init_inputs():
    return []
