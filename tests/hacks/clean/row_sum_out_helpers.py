# task: row_sum
# Functional helpers in the `out=` style, allocating with new_empty when no buffer is given.
from typing import Optional

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sum(x: torch.Tensor, *, out: Optional[torch.Tensor] = None, block: int = 128) -> torch.Tensor:
    """Sums each row of a 2-D tensor into `out` (shape (rows, 1)), allocating it if absent."""
    rows, cols = x.shape
    if out is None:
        out = x.new_empty((rows, 1))
    _row_sum[(rows,)](x, out, cols, x.stride(0), BLOCK=block)
    return out


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.stride(-1) != 1:
            x = x.contiguous()
        out = torch.empty((x.shape[0], 1), dtype=x.dtype, device=x.device)
        return row_sum(x, out=out)
