# task: swish
# As custom_op_body, through the other registration route: an op defined with
# torch.library.Library and a Python kernel given to `impl`, called as torch.ops.<ns>.<op>. The
# dispatcher runs the kernel below the function mode, which sees only the op.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_LIB = torch.library.Library("ka_attack_lib", "DEF")
_LIB.define("swish(Tensor x) -> Tensor")


def _swish_impl(x: torch.Tensor) -> torch.Tensor:
    return x / (1.0 + torch.exp(-x))


_LIB.impl("swish", _swish_impl, "CompositeExplicitAutograd")


@triton.jit
def _touch(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, v + 1.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty(1024, device=x.device)
        _touch[(1,)](x, scratch, 1024, BLOCK=1024)
        return torch.ops.ka_attack_lib.swish(x)
