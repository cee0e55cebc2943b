import torch
import torch.nn as nn


class Model(nn.Module):
    """Argmax over the middle dimension of a (batch, dim1, dim2) tensor; int64 indices."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


batch_size = 128
dim1 = 4096
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return []
