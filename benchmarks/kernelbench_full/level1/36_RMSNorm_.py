import torch
import torch.nn as nn


class Model(nn.Module):
    """
    RMS normalisation over the feature dimension (dim 1) of a (batch, features, d1, d2) tensor.
    """

    def __init__(self, num_features: int, eps: float = 1e-5):
        """
        Args:
            num_features (int): size of dim 1 of the input.
            eps (float): added to the mean square before the square root.
        """
        super(Model, self).__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x (torch.Tensor): input of shape (batch_size, num_features, *).

        Returns:
            torch.Tensor: x divided by its root mean square over dim 1.
        """
        rms = torch.sqrt(torch.mean(x * x, dim=1, keepdim=True) + self.eps)
        return x / rms


batch_size = 112
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
