import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Per-feature bias add followed by tanh-approximated GELU (as in GPT-2 MLPs)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x + self.bias, approximate="tanh")


batch_size = 16384
hidden = 4096


def get_inputs():
    return [torch.randn(batch_size, hidden) * 2.0]


def get_init_inputs():
    return [hidden]
