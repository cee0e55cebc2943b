# task: row_sum
# Several rows per program with a 2-D tile; handles any row stride without copying.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rows(x_ptr, y_ptr, n_rows, n_cols, stride, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    acc = tl.zeros([BR, BC], dtype=tl.float32)
    for start in range(0, n_cols, BC):
        c = start + tl.arange(0, BC)
        m = (r[:, None] < n_rows) & (c[None, :] < n_cols)
        acc += tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=m, other=0.0)
    tl.store(y_ptr + r, tl.sum(acc, axis=1), mask=r < n_rows)


class ModelNew(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.stride(-1) != 1:
            x = x.contiguous()
        n_rows, n_cols = x.shape
        y = x.new_empty((n_rows, 1))
        _rows[(triton.cdiv(n_rows, 8),)](x, y, n_rows, n_cols, x.stride(0), BR=8, BC=128)
        return y
