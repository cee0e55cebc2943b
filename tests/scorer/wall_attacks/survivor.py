# Starts a daemon (double fork, setsid, SIGTERM ignored) that would slow later scorings; it beats
# on a file in /dev/shm (the one folder the kernel shares) so a test can tell whether it survives.
import os
import signal
import time

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


def swish(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y

BEAT = os.environ.get("SURVIVOR_BEAT", "/dev/shm/kernelarena-survivor")
spawn = getattr(os, "fo" + "rk")
if spawn() == 0:
    os.setsid()
    if spawn() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in range(1200):
            with open(BEAT, "w") as f:
                f.write(str(time.time()))
            time.sleep(0.05)
    os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return swish(x)
