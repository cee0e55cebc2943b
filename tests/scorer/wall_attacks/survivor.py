# Starts a daemon (double fork, setsid, SIGTERM ignored) that would slow later scorings; it names
# itself SURVIVOR_MARK (its comm, which the test looks for in the host's process table) and beats
# on a file in its own folder. Its forward is correct only once the daemon has beaten, so a
# correct result says the daemon ran.
import ctypes
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

BEAT = os.path.abspath("survivor-beat")
MARK = os.environ.get("SURVIVOR_MARK", "ka-survivor")[:15]
spawn = getattr(os, "fo" + "rk")
if spawn() == 0:
    os.closerange(3, 4096)  # as a daemon does (the judge would see its channel held twice)
    os.setsid()
    if spawn() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        ctypes.CDLL(None).prctl(15, MARK.encode(), 0, 0, 0)  # PR_SET_NAME
        for _ in range(1200):
            with open(BEAT, "w") as f:
                f.write(str(time.time()))
            time.sleep(0.05)
    os._exit(0)
for _ in range(200):
    if os.path.exists(BEAT):
        break
    time.sleep(0.05)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return swish(x) if os.path.exists(BEAT) else x.clone()
