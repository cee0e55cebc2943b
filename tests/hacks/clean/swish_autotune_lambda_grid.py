# task: swish
# Autotuned over block sizes and warps (pruned to one config where there is nothing to tune:
# Triton's interpreter cannot benchmark), launched through a meta-dependent lambda grid.
import torch
import torch.nn as nn
import triton
import triton.language as tl


CONFIGS = [
    triton.Config({"BLOCK": 128}, num_warps=2),
    triton.Config({"BLOCK": 512}, num_warps=4),
    triton.Config({"BLOCK": 1024}, num_warps=8),
]


def _prune(configs, named_args, **kwargs):
    return configs if torch.cuda.is_available() else configs[-1:]


@triton.autotune(configs=CONFIGS, key=["n"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        swish_kernel[grid](x, y, n)
        return y
