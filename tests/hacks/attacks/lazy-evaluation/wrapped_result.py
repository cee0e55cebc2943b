# task: softmax
# Computes correctly but returns the result wrapped in a Tensor subclass whose later accesses
# could be intercepted; the scorer accepts only plain tensors.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ResultTensor(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        _softmax[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
        return y.as_subclass(ResultTensor)
