"""Opens the device-timed batch's gate once: when the kernel's worker says its calls are enqueued,
or after a delay, whichever comes first (scorer/gpu/release_gate.py).

A forward that waits for the device (a value read on the host, a synchronize) blocks its worker
behind the gate until it opens, so waiting for the worker's reply alone would never open it; the
delay is a few times what enqueueing the calls took the honest way in the judge-clocked batch. The
release runs in a timer thread while the judge waits on the kernel's worker, and the judge's own
thread runs it where the reply came first; a lock makes it one release, and an error in the timer's
release is raised in the judge's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType


class ReleaseOnce:
    def __init__(self, release: Callable[[], object], after_s: float) -> None:
        self._release = release
        self._lock = threading.Lock()
        self._done = False
        self._error: BaseException | None = None
        self.by_timer = False  # the delay ran out before the kernel's worker replied
        self.released_at: float | None = None  # perf_counter once the release returned: the batch's clock starts
        self._timer = threading.Timer(after_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self.by_timer = threading.current_thread() is self._timer
            try:
                self._release()
                self.released_at = time.perf_counter()
            except BaseException as exc:  # raised again in the judge's thread
                self._error = exc

    def __enter__(self) -> ReleaseOnce:
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._timer.cancel()
        self._fire()
        self._timer.join()
        if self._error is not None and exc is None:
            raise self._error
