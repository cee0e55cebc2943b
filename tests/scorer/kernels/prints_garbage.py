"""Correct swish that floods stdout/stderr (must not disturb the scorer's channel)."""

import sys

import torch
import triton
import triton.language as tl

print("\x00\x00\x00\x10garbage frame" * 1000)
sys.stderr.write("noise\n" * 1000)
sys.stdout.write("\ufffd" * 4096)


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        print("forward called")
        y = torch.empty_like(x)
        _swish[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
