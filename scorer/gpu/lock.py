"""A per-GPU reader-writer lock: timing holds it exclusively, and loading and correctness runs
hold it shared, so concurrent scorers never time on one GPU at once and no other scorer's
kernel runs on that GPU while one is being timed.

Timers go first. A bare flock lets shared holders come and go while an exclusive request waits for
a moment when none holds it: with eight scorers on the H200 that moment rarely came, and the 47
suite solutions spent 744 s (summed) waiting for it, against about 75 s of timing. So a timer
announces itself on a second file (`.timers`, held shared by every timer that waits or holds) before
it asks for the lock, and a shared request first takes that file exclusively, which it gets only
while no timer is announced: shared requests gather while timers run, then go together. A long
shared holder lets a waiting timer in between its pieces of GPU work (`GpuLock.yield_to_timer`), so
a timer waits for a piece, not for a whole correctness run (benchmarks/gpu_lock_policy.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scorer.errors import ScorerUserError
from scorer.gpu import contention, freeze

LOCK_DIR_ENV = "KERNELARENA_GPU_LOCK_DIR"
# A file each holder appends a line to when it lets go (asked, got, freed on the system-wide
# monotonic clock): where a concurrent run's GPU time went (scorer/gpu/lock_trace.py).
TRACE_ENV = "KERNELARENA_GPU_LOCK_TRACE"
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


def lock_dir() -> Path:
    """Where this process's locks live. Workers get the judge's as LOCK_DIR_ENV (scorer.workers.process):
    their own temp dir is private, and a lock taken there excluded nobody."""
    # A folder of their own (not the bare temp folder): a walled kernel worker sees this folder
    # and nothing else of the judge's temp folder (scorer/workers/wall.py).
    return Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "kernelarena-locks")


def made_lock_dir() -> Path:
    """lock_dir(), created where missing (before a walled worker starts: it cannot create it)."""
    base = lock_dir()
    if not base.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        try:
            os.chmod(base, 0o1777)  # shared, like /tmp, by judges of every uid on the host
        except PermissionError:
            pass
    return base


def lock_path(gpu_key: str) -> Path:
    base = made_lock_dir()
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", gpu_key) or "gpu"
    return base / f"kernelarena-{safe}.lock"


def ensure_lock_files(gpu_key: str, kernel_uid: int | None = None) -> None:
    """Creates a device's lock files ahead of a walled kernel worker, which sees the lock folder
    read-only and so cannot create them itself. Where that worker runs under a uid of its own
    (`kernel_uid`), it must also be able to reach them: a folder closed to others (a private
    mkdtemp folder is 0700) failed every GPU scoring with a PermissionError in the kernel's
    correctness stage, read as the kernel's runtime_error."""
    path = lock_path(gpu_key)
    for p in (path, path.with_suffix(".timers")):
        _open_lock(p).close()
    if kernel_uid is None or kernel_uid == os.getuid():
        return
    # The folder's own mode: the wall binds it back over a cover every uid may pass
    # (scorer.workers.wall._hide), so the host's folders above it do not matter there.
    closed = [str(path.parent)] if not os.stat(path.parent).st_mode & 0o001 else []
    closed += [str(p) for p in (path, path.with_suffix(".timers")) if not os.stat(p).st_mode & 0o004]
    if closed:
        raise ScorerUserError(f"the GPU lock folder {path.parent} is closed to the kernel worker's own uid "
                              f"({kernel_uid}): {', '.join(closed)}; chmod 1777 the folder (and a+r its files) "
                              f"or unset {LOCK_DIR_ENV}")


def _open_lock(path: Path) -> Any:
    """A lock file's handle. A walled kernel worker sees the lock folder read-only (and may run
    under a uid of its own): it may take the lock (flock needs only a read handle) but cannot
    write, truncate or replace the judge's file."""
    try:
        return open(path, "a+")
    except OSError:
        return open(path)


class GpuLock:
    """One holder's handle on a GPU's lock (its own open files, so threads and processes each get
    their own). `acquire` and `release` are idempotent: a holder may let go while it does host work
    (scorer.gpu.compile_gap) and take the lock again before its next GPU work. Holders never nest: one
    that holds the lock and asks for it again (here or through a worker it waits for) would wait
    behind a timer that waits for it."""

    def __init__(self, gpu_key: str, *, shared: bool) -> None:
        self.shared = shared
        path = lock_path(gpu_key)
        self._lock = _open_lock(path)
        self._timers = _open_lock(path.with_suffix(".timers"))
        self.held = False
        self._asked = self._got = 0.0

    def acquire(self) -> None:
        if self.held:
            return
        self._asked = time.monotonic()
        if self.shared:
            fcntl.flock(self._timers.fileno(), fcntl.LOCK_EX)  # only while no timer is announced
            try:
                fcntl.flock(self._lock.fileno(), fcntl.LOCK_SH)
            finally:
                fcntl.flock(self._timers.fileno(), fcntl.LOCK_UN)
        else:
            fcntl.flock(self._timers.fileno(), fcntl.LOCK_SH)  # announced until it lets go
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX)
        self.held = True
        self._got = time.monotonic()
        _WAITED.seconds = waited_s() + self._got - self._asked

    def release(self) -> None:
        if self.held:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            if not self.shared:
                fcntl.flock(self._timers.fileno(), fcntl.LOCK_UN)
            self.held = False
            _trace(self.shared, self._asked, self._got, time.monotonic())

    def timer_waiting(self) -> bool:
        """Whether a timer is announced (waiting for the lock, or holding it)."""
        try:
            fcntl.flock(self._timers.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(self._timers.fileno(), fcntl.LOCK_UN)
        return False

    def yield_to_timer(self, sync: Callable[[], None]) -> bool:
        """Between two pieces of a shared holder's GPU work: where a timer waits, `sync` (nothing of
        this holder's may still run on the GPU), let go, and take the shared side again after the
        timers. True when it let go. A device that cannot synchronize (a kernel faulted it) keeps
        the lock: work may still be running, and the holder's next step reports the fault."""
        if not (self.held and self.shared and self.timer_waiting()):
            return False
        try:
            sync()
        except Exception:
            return False
        self.release()
        self.acquire()
        return True

    def close(self) -> None:
        self.release()
        self._lock.close()
        self._timers.close()


def _trace(shared: bool, asked: float, got: float, freed: float) -> None:
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), "shared": shared, "asked": asked, "got": got, "freed": freed}) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())  # one short O_APPEND write: lines from many processes stay whole
        finally:
            os.close(fd)
    except OSError:
        pass  # a diagnostic: never a reason for a scoring to fail


@contextmanager
def hold_gpu(gpu_key: str | None, *, shared: bool = False, lease_s: float = 300.0) -> Iterator[None]:
    """Blocks until the lock for `gpu_key` can be taken (shared or exclusive); None (CPU runs)
    locks nothing. The exclusive side is the timer's: once it holds the lock, the sweep's agent
    sandboxes on the device (the CPU for None) are frozen until it lets go (scorer/gpu/freeze.py),
    for at most `lease_s`, and a contention watch reads foreign load over this section."""
    if gpu_key is None:
        if shared:
            yield
        else:
            with freeze.exclusive(lock_dir(), freeze.CPU_DEVICE, lease_s), contention.timed_section():
                yield
        return
    lock = GpuLock(gpu_key, shared=shared)
    try:
        lock.acquire()
        if shared:
            yield
        else:
            with freeze.exclusive(lock_dir(), gpu_key, lease_s), contention.timed_section():
                yield
    finally:
        lock.close()
