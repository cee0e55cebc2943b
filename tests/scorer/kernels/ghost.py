"""Defines a Triton kernel but computes with torch ops: a ghost kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def _unused(x_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)
