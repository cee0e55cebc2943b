import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over a last axis of size 1: every output is exactly 1.0."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


batch_size = 4096


def get_inputs():
    return [torch.randn(batch_size, 1)]


def get_init_inputs():
    return []
