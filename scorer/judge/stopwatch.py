"""Watches a trusted worker while the judge waits on it: one stopped (SIGSTOP, or a tracer's stop)
is ended at once and named, instead of being waited on for the request's whole time limit.

Something outside the scorer (a process an earlier kernel left behind, say) can stop the
reference worker: its baseline then reads slower, which would inflate the kernel's speedup, and a
worker left stopped would hold the judge for `reference_s` per request with no word of why.
Short stops are counted by the worker itself (a SIGCONT handler, scorer/workers/reference_role.py);
this catches the stop that does not end.
"""

from __future__ import annotations

import os
import signal
import threading
import time

# A worker stopped this long inside one request is ended; the scoring fails as broken.
STOPPED_S = 2.0
_POLL_S = 0.1


def process_state(pid: int) -> str:
    """The state letter of /proc/<pid>/stat ('R', 'S', 'T' stopped, 't' traced, 'Z'...), '' if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return ""
    fields = text.rsplit(")", 1)[-1].split()
    return fields[0] if fields else ""


class StopWatch:
    """Polls the worker's state while armed; after STOPPED_S in a stopped state it kills the
    worker's process group, so the judge's read ends at once, and `fired` says why."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fired = False
        self._armed = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kernelarena-stopwatch", daemon=True)
        self._thread.start()

    def __enter__(self) -> StopWatch:
        self._armed.set()
        return self

    def __exit__(self, *exc: object) -> None:
        self._armed.clear()

    def close(self) -> None:
        self._closed.set()
        self._armed.set()  # wakes the thread so it sees the close
        self._thread.join(timeout=1.0)

    def _run(self) -> None:
        while not self._closed.is_set():
            self._armed.wait()
            stopped_since: float | None = None
            while self._armed.is_set() and not self._closed.is_set():
                if process_state(self.pid) in ("T", "t"):
                    stopped_since = stopped_since or time.monotonic()
                    if time.monotonic() - stopped_since >= STOPPED_S:
                        self._end()
                        return
                else:
                    stopped_since = None
                self._closed.wait(_POLL_S)

    def _end(self) -> None:
        self.fired = True
        for kill in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                kill()
                return
            except (ProcessLookupError, PermissionError):
                continue
