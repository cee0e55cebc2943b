"""A worker's GPU work under the lock's shared side, let go while Triton compiles.

A kernel's first call compiles its Triton kernels: host work of 0.3-3 s each, and autotuned
kernels compile every config. Under the shared side that blocks every other scorer's timing (and,
as the lock prefers writers, every shared request queued behind that timing). Triton calls
`jit_cache_hook` before it compiles and `jit_post_compile_hook` after: the lock is let go between
the two, and taken again before the compiled kernel first runs. The kernel's own code can undo the
hooks; that only costs other scorers time (nothing it measures), as a kernel could cost them anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from scorer.gpu.lock import GpuLock

try:
    from triton import knobs
except Exception:  # no Triton, or one older than its knobs (3.4): the lock is simply held throughout
    knobs = None


def _runtime_knobs() -> Any:
    runtime = getattr(knobs, "runtime", None)
    return runtime if runtime is not None and hasattr(runtime, "jit_post_compile_hook") else None


@contextmanager
def shared_gpu_work(gpu_key: str | None) -> Iterator[GpuLock | None]:
    if gpu_key is None:
        yield None
        return
    lock = GpuLock(gpu_key, shared=True)
    runtime = _runtime_knobs()
    before, after = (runtime.jit_cache_hook, runtime.jit_post_compile_hook) if runtime is not None else (None, None)

    def compiling(**kwargs: Any) -> Any:
        lock.release()
        # A true answer from a hook tells Triton to skip the compile: only an earlier hook's counts.
        return before(**kwargs) if before is not None else None

    def compiled(**kwargs: Any) -> Any:
        lock.acquire()
        return after(**kwargs) if after is not None else None

    try:
        lock.acquire()
        if runtime is not None:
            runtime.jit_cache_hook, runtime.jit_post_compile_hook = compiling, compiled
        yield lock
    finally:
        if runtime is not None:
            runtime.jit_cache_hook, runtime.jit_post_compile_hook = before, after
        lock.close()


def open_context(device: Any) -> None:
    """Creates this process's CUDA context before the lock is taken: with eight scorings starting
    at once, context creation is host and driver work of seconds, which under the shared side kept
    every queued timer waiting (H200, 2026-12-05). It launches nothing on the device."""
    if torch.device(device).type == "cuda":
        torch.cuda.mem_get_info(device)


def no_pause() -> None:
    """Between two pieces of GPU work where no lock is held (a CPU run): nothing to do."""


def between_pieces(lock: GpuLock | None, sync: Callable[[], None]) -> Callable[[], object]:
    """What a shared holder calls between two pieces of its GPU work (trials, input sets): a timer
    that waits goes first, after `sync`, instead of waiting for the whole run."""
    if lock is None:
        return no_pause
    return lambda: lock.yield_to_timer(sync)
