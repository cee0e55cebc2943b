import torch
import torch.nn as nn


class Model(nn.Module):
    """Attention-score post-processing: scale, causal mask, softmax over keys.

    scores: (batch, heads, seq_len, seq_len); key j > query i is masked out (probability 0).
    """

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        seq = scores.shape[-1]
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=scores.device), diagonal=1)
        masked = (scores * self.scale).masked_fill(future, float("-inf"))
        return torch.softmax(masked, dim=-1)


batch_size = 4
heads = 16
seq_len = 1024
scale = 0.125


def get_inputs():
    return [torch.randn(batch_size, heads, seq_len, seq_len) * 8.0]


def get_init_inputs():
    return [scale]
