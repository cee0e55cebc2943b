# A correct swish that is fast for the calls it expects to be timed and slow after them: its own
# timer's reps see the fast calls, the judge's back-to-back batch sees the slow ones. Its reported
# times are then far below what the judge's own clock measures, which is what a forged clock
# looks like from outside (the native attacks need a compiler; this needs none).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls > 9:  # past correctness (5 calls) and timing (1 warm-up, 3 reps) at the test options
            spin = 0
            for i in range(10_000_000):  # far past the CPU threshold (bound / 4) even on a loaded box
                spin += i
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
