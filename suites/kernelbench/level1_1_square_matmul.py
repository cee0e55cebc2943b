import torch
import torch.nn as nn


class Model(nn.Module):
    """Square matrix multiplication: C = A @ B with A, B of shape (N, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    # Scaled so |C| ~ 1, as for activations and weights in a normalised network. With unit
    # entries |C| ~ sqrt(N) = 64 and float32's own rounding-order noise, let alone TF32's,
    # breaks any 1e-2 absolute rule on the small outputs.
    scale = N ** -0.25
    return [torch.randn(N, N) * scale, torch.randn(N, N) * scale]


def get_init_inputs():
    return []
