import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched half-precision matmul: C[b] = A[b] @ B[b], A (batch, M, K), B (batch, K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 64
M = 1024
K = 1024
N = 1024


def get_inputs():
    # Scaled so |C| ~ 1: fp16's spacing is then ~1e-3 where most outputs lie, instead of
    # ~0.03 at the |C| ~ sqrt(K) that unit entries give.
    scale = K ** -0.25
    A = (torch.randn(batch_size, M, K) * scale).to(torch.float16)
    B = (torch.randn(batch_size, K, N) * scale).to(torch.float16)
    return [A, B]


def get_init_inputs():
    return []
