# task: add_rmsnorm
# Module-level dict cache of block sizes keyed by (hidden, dtype), inference_mode context,
# the kernel held in a class attribute and launched through a staticmethod.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_BLOCKS: dict = {}


def _block(hidden: int, dtype: torch.dtype) -> int:
    key = (hidden, dtype)
    if key not in _BLOCKS:
        _BLOCKS[key] = max(64, triton.next_power_of_2(hidden))
    return _BLOCKS[key]


@triton.jit
def add_rmsnorm_fwd(x_ptr, r_ptr, w_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    h = tl.load(x_ptr + row * stride + offs, mask=m, other=0.0) + tl.load(r_ptr + row * stride + offs, mask=m, other=0.0)
    var = tl.sum(h * h, axis=0) / n_cols
    y = h * (1.0 / tl.sqrt(var + eps)) * tl.load(w_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * stride + offs, y, mask=m)


class ModelNew(nn.Module):
    kernel = add_rmsnorm_fwd

    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    @staticmethod
    def _launch(kernel, x, r, w, eps):
        y = torch.empty_like(x)
        kernel[(x.shape[0],)](x, r, w, y, x.stride(0), x.shape[1], eps, BLOCK=_block(x.shape[1], x.dtype))
        return y

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return self._launch(self.kernel, x.contiguous(), residual.contiguous(), self.weight, self.eps)
