import torch


class Model(torch.nn.Module):  # mentions ModelNew only in this comment
    def forward(self, x):
        return x
