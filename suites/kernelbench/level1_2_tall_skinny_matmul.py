import torch
import torch.nn as nn


class Model(nn.Module):
    """Outer-product-like matmul of a tall-skinny pair: C (M, M) = A (M, K) @ B (K, M), K small.

    Almost all the time goes into writing the large output, so it is memory-bound.
    """

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 16384
K = 32


def get_inputs():
    # Scaled so |C| ~ 1: with unit entries a few of the 2.7e8 outputs miss a 1e-2 rule under
    # TF32 rounding (seen on an H200: 14 elements, max error 3.4e-2).
    scale = K ** -0.25
    return [torch.randn(M, K) * scale, torch.randn(K, M) * scale]


def get_init_inputs():
    return []
