# task: swish
# Host-side glue in many shapes: numpy/math for the grid, functools.partial over the launcher,
# typing.cast, warnings, a non-persistent buffer, builtins max/min/sum/abs on Python ints.
import functools
import math
import warnings
from typing import cast

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=m)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.tensor(1.0), persistent=False)
        self.max_block = 1024

    def extra_repr(self) -> str:
        return f"max_block={self.max_block}"

    def _grid(self, n: int, block: int):
        return (int(np.ceil(n / block)),)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32:
            warnings.warn("casting to float32")
        x = torch.Tensor.contiguous(x)
        n = x.shape.numel()
        rows = math.prod(x.shape[:-1]) if x.dim() > 1 else 1
        block = min(self.max_block, max(16, triton.next_power_of_2(n // max(rows, 1))))
        block = int(min(block, 2 ** math.ceil(math.log2(max(n, 1)))))
        y = cast(torch.Tensor, x.new_empty(x.shape))
        launch = functools.partial(_k[self._grid(n, block)], BLOCK=block, num_warps=4)
        launch(x, y, n)
        sizes = [t.numel() for t in (x, y)]
        assert sum(sizes) == 2 * n and abs(sizes[0] - sizes[1]) == 0
        return y.view(torch.Size(list(x.shape)))
