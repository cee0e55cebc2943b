# task: row_sum
# Style: torch.library.custom_op + register_fake, numpy shape math,
# lru_cache block helper, persistent grid-stride loop over rows, fp32 accumulation
import functools

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum_persistent(x_ptr, out_ptr, n_rows, n_cols, stride_row,
                        BLOCK: tl.constexpr, NUM_PROGS: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, n_rows, NUM_PROGS):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
            acc += v.to(tl.float32)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))


@functools.lru_cache(maxsize=64)
def _launch_params(n_rows: int, n_cols: int):
    block = int(min(4096, max(64, 1 << int(np.ceil(np.log2(max(n_cols, 1)))))))
    progs = int(min(n_rows, 132 * 4))
    return block, max(progs, 1)


@torch.library.custom_op("rt_honest::row_sum", mutates_args=())
def row_sum(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty((n_rows, 1), device=x.device, dtype=torch.float32)
    block, progs = _launch_params(n_rows, n_cols)
    _row_sum_persistent[(progs,)](x, out, n_rows, n_cols, x.stride(0), BLOCK=block, NUM_PROGS=progs)
    return out.to(x.dtype)


@row_sum.register_fake
def _(x):
    return x.new_empty((x.shape[0], 1))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self.dim in (1, -1), "only the last dim is supported"
        lead = x.shape[:-1]
        rows = int(np.prod(lead)) if len(lead) else 1
        y = torch.ops.rt_honest.row_sum(x.reshape(rows, x.shape[-1]))
        return y.reshape(*lead, 1)
