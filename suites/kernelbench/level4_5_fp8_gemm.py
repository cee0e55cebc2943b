import torch
import torch.nn as nn


class Model(nn.Module):
    """FP8 (E4M3) GEMM as Hopper runs it: fp8 activations with one scale per row, fp8 weights
    with one scale per output channel, products accumulated in fp32, then dequantised:
    y = (a_q @ w_q^T) * a_scale * w_scale. The reference upcasts to fp32 and multiplies there
    (runs on CPU too)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # Drawn transposed: the scorer reseeds before get_inputs(), and a (batch, in) draw would
        # otherwise repeat these weights row for row.
        w = torch.randn(in_features, out_features).T.contiguous()
        w_scale = w.abs().amax(dim=1) / 448.0
        self.weight = nn.Parameter((w / w_scale[:, None]).to(torch.float8_e4m3fn), requires_grad=False)
        self.weight_scale = nn.Parameter(w_scale, requires_grad=False)

    def forward(self, a_q: torch.Tensor, a_scale: torch.Tensor) -> torch.Tensor:
        y = a_q.to(torch.float32) @ self.weight.to(torch.float32).T
        return y * a_scale * self.weight_scale


batch_size = 4096
in_features = 8192
out_features = 4096


def get_inputs():
    a = torch.randn(batch_size, in_features)
    a_scale = a.abs().amax(dim=1, keepdim=True) / 448.0
    return [(a / a_scale).to(torch.float8_e4m3fn), a_scale]


def get_init_inputs():
    return [in_features, out_features]
