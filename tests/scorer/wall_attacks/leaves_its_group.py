# The kernel's own worker leaves the process group the judge kills (setsid), clears the signal
# that ends it with its waiting parent (prctl PR_SET_PDEATHSIG 0), and makes the worker's exit
# (os._exit, once its channel closes) wait forever, while a thread named SURVIVOR_MARK (its comm,
# which the test looks for in the host's process table) beats on a file in its own folder. A
# correct swish once the thread has beaten (so a correct result says it ran), the input before.
import ctypes
import os
import threading
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


BEAT = os.path.abspath("survivor-beat")
MARK = os.environ.get("SURVIVOR_MARK", "ka-survivor")[:15]
try:
    os.setsid()
except OSError:
    pass
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)


def _beat() -> None:
    ctypes.CDLL(None).prctl(15, MARK.encode(), 0, 0, 0)  # PR_SET_NAME, this thread's comm
    for _ in range(1200):
        with open(BEAT, "w") as f:
            f.write(str(time.time()))
        time.sleep(0.05)


threading.Thread(target=_beat, daemon=True).start()
for _ in range(200):
    if os.path.exists(BEAT):
        break
    time.sleep(0.05)
os._exit = lambda code: time.sleep(3600)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not os.path.exists(BEAT):
            return x.clone()
        x = x.contiguous()
        y = torch.empty_like(x)
        _swish_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
