import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GPT-2 style causal multi-head self-attention: fused QKV projection, explicit masked
    softmax attention, output projection."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, D = x.shape
        H = self.n_heads
        q, k, v = self.c_attn(x).split(D, dim=2)
        q = q.view(B, S, H, D // H).transpose(1, 2)
        k = k.view(B, S, H, D // H).transpose(1, 2)
        v = v.view(B, S, H, D // H).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // H))
        causal = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
        att = F.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, S, D)
        return self.c_proj(y)


batch_size = 8
seq_len = 1024
d_model = 1024
n_heads = 16


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
