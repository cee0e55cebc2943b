import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """3x3 convolution (no bias), BatchNorm in inference form (running statistics), ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        # Running statistics and affine terms as a trained network would have them; the
        # defaults (0, 1, 1, 0) would make the normalisation an identity.
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(out_channels) * 0.3)
            self.bn.running_var.copy_(torch.rand(out_channels) + 0.5)
            self.bn.weight.copy_(torch.rand(out_channels) + 0.5)
            self.bn.bias.copy_(torch.randn(out_channels) * 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        # training=False always: the task is the inference fusion, whatever the module mode.
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                         training=False, eps=self.bn.eps)
        return torch.relu(y)


batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
