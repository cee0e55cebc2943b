# task: add_rmsnorm
# A small nn.Module hierarchy: an abstract fused-op base with the launch plumbing, a norm
# subclass that owns the weight, and ModelNew on top; properties and a classmethod.
import abc
import math
from typing import Tuple

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fused_add_rms(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n_cols
        h = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0) + tl.load(r_ptr + row * n_cols + cols, mask=m, other=0.0)
        acc += h * h
    inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n_cols
        h = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0) + tl.load(r_ptr + row * n_cols + cols, mask=m, other=0.0)
        w = tl.load(w_ptr + cols, mask=m, other=0.0)
        tl.store(y_ptr + row * n_cols + cols, h * inv * w, mask=m)


class FusedOp(nn.Module, abc.ABC):
    block: int = 128

    @abc.abstractmethod
    def launch(self, *tensors: torch.Tensor) -> torch.Tensor: ...

    @staticmethod
    def rows_cols(x: torch.Tensor) -> Tuple[int, int]:
        return x.shape[0], math.prod(x.shape[1:])

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        return self.launch(*(t.contiguous() for t in tensors))


class AddRMSNorm(FusedOp):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    @property
    def hidden(self) -> int:
        return self.weight.numel()

    @classmethod
    def for_hidden(cls, hidden: int, eps: float = 1e-6) -> "AddRMSNorm":
        return cls(hidden, eps)

    def launch(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        rows, cols = self.rows_cols(x)
        y = torch.empty_like(x)
        _fused_add_rms[(rows,)](x, residual, self.weight, y, cols, self.eps, BLOCK=self.block)
        return y


class ModelNew(AddRMSNorm):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__(hidden, eps)
