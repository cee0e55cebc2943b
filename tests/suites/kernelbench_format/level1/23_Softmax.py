import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Applies a softmax along the feature dimension of a (batch_size, dim) tensor.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): input of shape (batch_size, dim).

        Returns:
            torch.Tensor: softmax of x over dim 1, same shape as x.
        """
        return torch.softmax(x, dim=1)


batch_size = 12
dim = 2500


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # no parameters
