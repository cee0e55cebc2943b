# task: softmax
# On a GPU, splits the rows over two streams and joins both back before returning (a legitimate
# use of streams inside its own synchronised work). On CPU the same code runs on one "stream".
import contextlib

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, y_ptr, n_cols, row0, BLOCK: tl.constexpr):
    row = row0 + tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.streams = None

    def _streams(self, x: torch.Tensor):
        if not x.is_cuda:
            return [contextlib.nullcontext(), contextlib.nullcontext()]
        if self.streams is None:
            self.streams = [torch.cuda.Stream(), torch.cuda.Stream()]
        return [torch.cuda.stream(s) for s in self.streams]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        half = rows // 2
        block = triton.next_power_of_2(cols)
        contexts = self._streams(x)
        if x.is_cuda:
            caller = torch.cuda.current_stream()
            for s in self.streams:
                s.wait_stream(caller)
        for ctx, (lo, hi) in zip(contexts, ((0, half), (half, rows))):
            with ctx:
                if hi > lo:
                    _softmax[(hi - lo,)](x, y, cols, lo, BLOCK=block)
        if x.is_cuda:
            for s in self.streams:
                torch.cuda.current_stream().wait_stream(s)
        return y
