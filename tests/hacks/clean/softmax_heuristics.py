# task: softmax
# Block size and an EVEN flag chosen by @triton.heuristics from the launch arguments.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK": lambda args: triton.next_power_of_2(args["n_cols"]),
    "EVEN": lambda args: args["n_cols"] == triton.next_power_of_2(args["n_cols"]),
})
@triton.jit
def softmax_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + row * stride + cols)
    else:
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    if EVEN:
        tl.store(y_ptr + row * stride + cols, e / s)
    else:
        tl.store(y_ptr + row * stride + cols, e / s, mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        softmax_kernel[(x2.shape[0],)](x2, y, x2.stride(0), x2.shape[1])
        return y.view(x.shape)
