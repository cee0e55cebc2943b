"""Correct swish, cached by the input's data pointer (a caching hack).

Only the first buffer it meets is cached: a fresh trial's inputs can land where an earlier trial's
freed inputs were (when depends on the collector freeing the Triton interpreter's reference
cycles), and a cache of every pointer would then fail that trial as plainly incorrect instead of
reaching the refill trial this kernel is here for. The first input set stays alive through the
refill, so no fresh input shares its pointer."""
import torch
import triton
import triton.language as tl


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        key = x.data_ptr()
        if key in self.cache:
            return self.cache[key]
        y = torch.empty_like(x)
        _swish[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        if not self.cache:
            self.cache[key] = y
        return y
