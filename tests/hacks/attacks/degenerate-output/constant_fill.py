# task: softmax_width1
# suite: tests/hacks/suites/degenerate
# Notices the output is always 1.0 and writes the constant without reading the input.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fill_one(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], 1.0, tl.float32), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        _fill_one[(triton.cdiv(y.numel(), 256),)](y, y.numel(), BLOCK=256)
        return y
