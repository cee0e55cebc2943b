# task: swish
# A load_inline extension whose C++ is ATen compute spelled past the static name list
# (at::special_expit, operator*). ATen called from C++ never meets the Python-level function mode,
# and with no Triton work to count, the function mode alone reads the library's work as 0 (a06 of
# docs/results/2026-12-05-session15-red-team-on-cpu.md passed on CPU so). A decoy Triton launch on
# the first call satisfies the census.
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.utils.cpp_extension import load_inline

_SRC = """
#include <torch/extension.h>
torch::Tensor swish_fwd(torch::Tensor x) {
    auto s = at::special_expit(x);
    return x * s;
}
"""

_ext = load_inline(name="ka_attack_swish_aten", cpp_sources=[_SRC], functions=["swish_fwd"],
                   extra_cflags=["-O2"], verbose=False)


@triton.jit
def _touch(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, v * 1.0, mask=m)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.calls == 0:
            scratch = torch.empty(16, device=x.device)
            _touch[(1,)](x, scratch, 1, BLOCK=16)
        self.calls += 1
        return _ext.swish_fwd(x.contiguous())
