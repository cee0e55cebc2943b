"""Spawns and drives one worker child process; turns every way it can end into a typed failure.

The child gets a fresh working directory, its own Triton/extension caches and an environment
fixed before it starts; it runs in its own process group so a timeout kills it and anything it
spawned. A child that dies, hangs or scribbles on the channel raises `WorkerFailure` (a result
for the judge to classify), never a hang or a crash of the judge.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorer.checks.poison import perturb_environment
from scorer.gpu.lock import LOCK_DIR_ENV, made_lock_dir
from scorer.workers import forkserver, wall
from scorer.workers.protocol import (
    STEP_KEY,
    ChannelClosed,
    ChannelTimeout,
    Frame,
    ProtocolViolation,
    Spool,
    recv_frame,
    send_frame,
    set_nonblocking,
)

SCORER_ROOT = Path(__file__).resolve().parents[2]
_SECRET_ENV = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
_EXIT_GRACE_S = 5.0  # how long a worker that closed its channel may take to exit
LOG_TAIL_BYTES = 4000


class WorkerFailure(Exception):
    """The worker did not answer: `kind` is 'timeout', 'crash' (died) or 'protocol'."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class WorkerDirs:
    workdir: Path
    log_path: Path

    @classmethod
    def create(cls, base: Path, role: str) -> WorkerDirs:
        workdir = base / role
        for sub in ("triton_cache", "torch_extensions", "torchinductor_cache", "tmp"):
            (workdir / sub).mkdir(parents=True, exist_ok=True)
        return cls(workdir, base / f"{role}.log")


def child_environment(dirs: WorkerDirs) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _SECRET_ENV.search(k)}
    env.update(
        TORCH_EXTENSIONS_DIR=str(dirs.workdir / "torch_extensions"),
        TRITON_CACHE_DIR=str(dirs.workdir / "triton_cache"),
        # torch's profiler imports inductor, which makes its cache folder on import: in the
        # worker's own folder (the wall leaves nothing else writable).
        TORCHINDUCTOR_CACHE_DIR=str(dirs.workdir / "torchinductor_cache"),
        TMPDIR=str(dirs.workdir / "tmp"),
        # Computed before TMPDIR changes: the worker's GPU locks must be the judge's.
        **{LOCK_DIR_ENV: str(made_lock_dir())},
        PYTHONPATH=os.pathsep.join([str(SCORER_ROOT)] + [p for p in [env.get("PYTHONPATH", "")] if p]),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONFAULTHANDLER="1",
        **{wall.READ_ONLY_ENV: os.pathsep.join(wall.read_only_paths([str(SCORER_ROOT)])),
           wall.HIDE_ENV: tempfile.gettempdir()},
        PYTHONUNBUFFERED="1",
    )
    # glibc reads it at the first malloc, so it must be set before exec; both workers get it so
    # CPU timing pays the same malloc-fill cost on each side.
    env.update(perturb_environment())
    return env


@functools.lru_cache(maxsize=1)
def _server_dirs() -> WorkerDirs:
    """The fork server's own private dirs (it imports, and never runs a task or a kernel)."""
    base = Path(tempfile.mkdtemp(prefix="kernelarena-forkserver-"))
    os.chmod(base, 0o700)
    atexit.register(shutil.rmtree, base, True)
    return WorkerDirs.create(base, "forkserver")


def _server_start() -> tuple[dict[str, str], str]:
    """The fork server's environment (a worker's) and log file, asked for when one starts."""
    return child_environment(_server_dirs()), str(_server_dirs().log_path)


def describe_exit(returncode: int, timed_out: bool) -> tuple[str, str]:
    """(kind, text) for a worker that ended without answering."""
    if timed_out:
        return "timeout", "killed after the time limit"
    if returncode == forkserver.STATUS_LOST:
        return "crash", ("the worker ended and its exit status is lost: the fork server that started it was killed "
                         "or stopped (a process under the scorer's uid signalled it)")
    if returncode < 0:
        sig = -returncode
        if sig in (signal.SIGSEGV, signal.SIGBUS):
            return "crash", f"segfault ({signal.Signals(sig).name})"
        if sig == signal.SIGKILL:
            return "crash", "killed by SIGKILL (out of memory)"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return "crash", f"killed by signal {name}"
    return "crash", f"kernel exited the process with code {returncode}"


def _memory_limiter(limit_bytes: int | None):
    if not limit_bytes:
        return None

    def apply() -> None:
        forkserver.limit_address_space(limit_bytes)

    return apply


class WorkerProcess:
    def __init__(self, role: str, dirs: WorkerDirs, memory_limit_bytes: int | None = None,
                 warm_device: str = "") -> None:
        self.role = role
        self.warm_device = warm_device
        self.dirs = dirs
        self.memory_limit_bytes = memory_limit_bytes
        self.proc: subprocess.Popen[bytes] | forkserver.ForkedProcess | None = None
        self.to_child = self.from_child = -1
        self.timed_out = False
        self.spool: Spool | None = None
        self._requests = 0
        self._started = False

    def __enter__(self) -> WorkerProcess:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> None:
        self.spool = Spool(self.dirs.workdir / "spool")
        child_in, self.to_child = os.pipe()
        self.from_child, child_out = os.pipe()
        set_nonblocking(self.to_child)
        try:
            self.proc = self._fork(child_in, child_out) or self._exec(child_in, child_out)
        finally:
            os.close(child_in)
            os.close(child_out)

    def _fork(self, child_in: int, child_out: int) -> forkserver.ForkedProcess | None:
        """A child of the judge process's fork server (imports done), or None where it has none."""
        server = forkserver.server(_server_start)
        if server is None:
            return None
        try:
            return server.spawn(self.role, child_in, child_out, str(self.spool.path) if self.spool else "",
                                self.warm_device, child_environment(self.dirs), str(self.dirs.workdir),
                                str(self.dirs.log_path), self.memory_limit_bytes)
        except forkserver.ForkServerError as exc:
            forkserver.drop(server, str(exc))
            return None

    def _exec(self, child_in: int, child_out: int) -> subprocess.Popen[bytes]:
        assert self.spool is not None
        # `-P`: the worker's working directory (the kernel's, for a kernel worker) is not on sys.path.
        cmd = [sys.executable, forkserver.SAFE_PATH, "-m", "scorer.workers.entry"] + forkserver.worker_arguments(
            self.role, child_in, child_out, str(self.spool.path), self.warm_device)
        with open(self.dirs.log_path, "ab") as log:
            return subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.dirs.workdir, env=child_environment(self.dirs), pass_fds=(child_in, child_out),
                start_new_session=True, preexec_fn=_memory_limiter(self.memory_limit_bytes),
            )

    def fd_allowance(self) -> wall.FdAllowance:
        """What the worker may hold from before its wall: the channel (our pipes' inodes) and its log."""
        files = set()
        try:
            log = os.stat(self.dirs.log_path)
            files.add((log.st_dev, log.st_ino))
        except OSError:
            pass
        return wall.FdAllowance(frozenset(os.fstat(fd).st_ino for fd in (self.to_child, self.from_child) if fd >= 0),
                                frozenset(files), os.path.realpath(self.dirs.workdir))

    def request(self, header: dict[str, Any], payload: Any, timeout_s: float,
                answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                watch: Callable[[], str | None] | None = None) -> Frame:
        """Sends one request and waits for its reply; the whole exchange shares `timeout_s`.
        The reply's payload is accepted only under the name this request chose for it, and is
        memory-mapped only from the reference worker (the kernel's process is untrusted). With
        `answer`, the worker's steps inside the request (frames with `STEP_KEY`) are answered
        with what it returns (it raises ProtocolViolation for a step out of turn). `watch` runs
        after every frame that arrives and names what is wrong with the worker seen from outside
        (scorer/judge/outside.py), which breaks the protocol too."""
        assert self.spool is not None, "start() first"
        deadline = time.monotonic() + timeout_s
        self._requests += 1
        reply_name = f"reply-{self._requests}.pt"
        try:
            send_frame(self.to_child, {**header, "reply_file": reply_name}, payload, deadline,
                       spool=self.spool, payload_name=f"request-{self._requests}.pt")
            while True:
                reply = recv_frame(self.from_child, deadline, spool=self.spool, expect_payload=reply_name,
                                   trusted=self.role == "reference")
                # An error reply ends the scoring with a failure verdict whatever sent it, and a worker
                # that answers one as the kernel exits (sys.exit at import) is tearing down its
                # descriptors while the watch reads them: under load it read as a moved channel.
                seen = watch() if watch is not None and reply.header.get("ok") is not False else None
                if seen:
                    raise ProtocolViolation(seen)
                if answer is None or STEP_KEY not in reply.header:
                    return reply
                send_frame(self.to_child, answer(reply.header), None, deadline)
        except ChannelTimeout:
            self.kill(timed_out=True)
            raise WorkerFailure("timeout", f"{header.get('op')} took longer than {timeout_s:g} s") from None
        except ChannelClosed:
            kind, text = describe_exit(self._wait_exit(), self.timed_out)
            raise WorkerFailure(kind, text) from None
        except ProtocolViolation as exc:
            self.kill()
            raise WorkerFailure("protocol", f"the worker broke the scorer protocol: {exc}") from None

    def wait_started(self, timeout_s: float) -> bool:
        """Waits until the worker answers (its imports done); False if it died on the way."""
        if self._started:
            return True
        try:
            self._started = bool(self.request({"op": "ping"}, None, timeout_s).header.get("ok"))
        except WorkerFailure:
            return False
        return self._started

    def _wait_exit(self) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=_EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            # Closed its channel but kept running: treat as a hang.
            self.kill(timed_out=True)
            return self.proc.wait()

    def kill(self, timed_out: bool = False) -> None:
        self.timed_out = self.timed_out or timed_out
        if self.proc is not None and self.proc.poll() is None:
            self._kill_all()
            self.proc.wait()

    def _kill_all(self) -> None:
        assert self.proc is not None
        wall.kill_worker(self.proc.pid, walled=self.role == "kernel")

    def close(self) -> None:
        """Kills the worker's whole process group: nothing it holds is worth a graceful
        interpreter shutdown (seconds with torch loaded), and a kernel's leftovers die with it."""
        try:
            if self.proc is not None:
                self._kill_all()
                self.proc.wait()
        finally:
            for fd in (self.to_child, self.from_child):
                if fd >= 0:
                    os.close(fd)
            self.to_child = self.from_child = -1
            if self.spool is not None:
                self.spool.close()

    def log_tail(self, limit: int = LOG_TAIL_BYTES) -> str:
        try:
            data = self.dirs.log_path.read_bytes()
        except OSError:
            return ""
        return data[-limit:].decode("utf-8", errors="replace")
