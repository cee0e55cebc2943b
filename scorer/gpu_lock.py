"""A per-GPU reader-writer lock: timing holds it exclusively, and loading and correctness runs
hold it shared, so concurrent scorers never time on one GPU at once and no other scorer's
kernel runs on that GPU while one is being timed."""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

LOCK_DIR_ENV = "KERNELARENA_GPU_LOCK_DIR"
_WAITED = threading.local()


def waited_s() -> float:
    """Seconds this thread has spent waiting for GPU locks (a scoring reports its share)."""
    return getattr(_WAITED, "seconds", 0.0)


def device_lock_key(device: Any) -> str | None:
    """A CUDA device's lock key as a worker sees it: its UUID, the key the judge takes from the
    reference worker's environment; None on a CPU."""
    import torch

    if torch.device(device).type != "cuda":
        return None
    return str(getattr(torch.cuda.get_device_properties(device), "uuid", "")) or None


def lock_path(gpu_key: str) -> Path:
    base = Path(os.environ.get(LOCK_DIR_ENV) or tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", gpu_key) or "gpu"
    return base / f"kernelarena-{safe}.lock"


@contextmanager
def hold_gpu(gpu_key: str | None, *, shared: bool = False) -> Iterator[None]:
    """Blocks until the lock for `gpu_key` can be taken (shared or exclusive); None (CPU runs)
    locks nothing."""
    if gpu_key is None:
        yield
        return
    with open(lock_path(gpu_key), "a+") as fh:
        start = time.perf_counter()
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        _WAITED.seconds = waited_s() + time.perf_counter() - start
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
