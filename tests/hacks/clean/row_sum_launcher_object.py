# task: row_sum
# A callable launcher object holding a per-width block cache and call statistics; the output
# starts as zeros and every row is written.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rs(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n_cols, BLOCK):
        c = s + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class Launcher:
    """Remembers the best block per width (a config cache)."""

    def __init__(self):
        self.blocks = {}
        self.calls = 0

    def block(self, width):
        return self.blocks.setdefault(width, max(32, min(512, triton.next_power_of_2(width))))

    def __call__(self, x, y):
        self.calls += 1
        rows, cols = x.shape
        _rs[(rows,)](x, y, cols, BLOCK=self.block(cols))
        return y


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.launch = Launcher()
        self.stats = {"max": 0, "min": 1 << 30}

    def forward(self, x):
        x = x.contiguous()
        self.stats["max"] = max(self.stats["max"], x.shape[1])
        widths = sorted({x.shape[1], 1})
        y = torch.zeros((x.shape[0], 1), dtype=x.dtype, device=x.device)
        out = self.launch(x, y)
        assert out.shape == (x.shape[0], 1), widths
        return out
