import torch
import torch.nn as nn


class Model(nn.Module):
    """Single-layer LSTM over a short sequence (batch_first); returns every step's hidden state."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x, (h0, c0))
        return out


batch_size = 64
seq_len = 128
input_size = 512
hidden_size = 1024


def get_inputs():
    return [
        torch.randn(batch_size, seq_len, input_size),
        torch.randn(1, batch_size, hidden_size),
        torch.randn(1, batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size]
