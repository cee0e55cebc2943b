# task: row_sum
# "Adaptive split-K": the number of column splits grows with each call as a home-made autotuner
# warms up. Each tiling is accurate, but the summation order (so the bits of the result)
# changes from call to call, like a race or an atomic reduction would.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _partial(x_ptr, p_ptr, n_cols, chunk, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(part * chunk, tl.minimum((part + 1) * chunk, n_cols), BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=(cols < n_cols) & (cols < (part + 1) * chunk), other=0.0)
    tl.store(p_ptr + row * tl.num_programs(1) + part, tl.sum(acc, axis=0))


@triton.jit
def _combine(p_ptr, y_ptr, parts, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + row, tl.sum(tl.load(p_ptr + row * parts + offs, mask=offs < parts, other=0.0), axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        x = x.contiguous()
        rows, cols = x.shape
        parts = min(self.calls, 6) + 1
        chunk = triton.cdiv(triton.cdiv(cols, parts), 16) * 16
        partial = torch.empty(rows, parts, device=x.device, dtype=torch.float32)
        _partial[(rows, parts)](x, partial, cols, chunk, BLOCK=16)
        y = torch.empty(rows, 1, device=x.device, dtype=x.dtype)
        _combine[(rows,)](partial, y, parts, BLOCK=8)
        return y
