import sys

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        sys.exit(3)
