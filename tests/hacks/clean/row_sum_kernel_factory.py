# task: row_sum
# Kernels built by a factory (one specialisation per accumulator dtype) and kept in a dict of
# launchers; nothing Triton lives directly in module globals under its own name.
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _make_row_sum():
    @triton.jit
    def kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(y_ptr + row, tl.sum(acc, axis=0))

    return kernel


_KERNELS = {torch.float32: _make_row_sum()}


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = x.new_empty((rows, 1))
        _KERNELS[x.dtype][(rows,)](x, y, cols, BLOCK=256)
        return y
