import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Attention probabilities: softmax(Q @ K^T / sqrt(head_dim)) per batch and head.

    Q, K: (batch, heads, seq_len, head_dim); output (batch, heads, seq_len, seq_len).
    """

    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(Q.shape[-1])
        return torch.softmax(scores, dim=-1)


batch_size = 2
heads = 16
seq_len = 2048
head_dim = 64


def get_inputs():
    Q = torch.randn(batch_size, heads, seq_len, head_dim)
    K = torch.randn(batch_size, heads, seq_len, head_dim)
    return [Q, K]


def get_init_inputs():
    return []
