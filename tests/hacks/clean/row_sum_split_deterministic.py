# task: row_sum
# Split-K in a fixed order: partial sums into a scratch buffer, then one combine kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _partials(x_ptr, p_ptr, n_cols, stride, chunk, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    lo = part * chunk
    for start in range(0, chunk, BLOCK):
        cols = lo + start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=(cols < n_cols) & (start + tl.arange(0, BLOCK) < chunk), other=0.0)
    tl.store(p_ptr + row * tl.num_programs(1) + part, tl.sum(acc, axis=0))


@triton.jit
def _combine(p_ptr, y_ptr, parts, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    vals = tl.load(p_ptr + row * parts + offs, mask=offs < parts, other=0.0)
    tl.store(y_ptr + row, tl.sum(vals, axis=0))


class ModelNew(nn.Module):
    SPLITS = 4

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        chunk = triton.cdiv(cols, self.SPLITS)
        scratch = torch.empty(rows, self.SPLITS, device=x.device, dtype=torch.float32)
        _partials[(rows, self.SPLITS)](x, scratch, cols, x.stride(0), chunk, BLOCK=128)
        y = torch.empty(rows, 1, device=x.device, dtype=x.dtype)
        _combine[(rows,)](scratch, y, self.SPLITS, BLOCK=triton.next_power_of_2(self.SPLITS))
        return y
