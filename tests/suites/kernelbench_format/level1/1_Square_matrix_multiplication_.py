import torch
import torch.nn as nn


class Model(nn.Module):
    """
    C = A @ B for two square N x N matrices.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Args:
            A (torch.Tensor): left matrix, (N, N).
            B (torch.Tensor): right matrix, (N, N).

        Returns:
            torch.Tensor: the product, (N, N).
        """
        return torch.matmul(A, B)


N = 96


def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]


def get_init_inputs():
    return []  # no parameters
