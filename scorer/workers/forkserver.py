"""Scorer workers forked from a process that has already imported torch and triton.

A worker's start is mostly its imports (torch, triton and the scorer's roles: seconds of CPU), so
each judge process keeps one fork server: a child that imports everything once and never runs
anything of a task or a kernel, and forks a fresh process per worker on request. Each kernel still
gets a process of its own that no other kernel ever used; what it inherits is the state of a
process that only imported modules. The clock the timer uses is captured in the server before
anything else is imported (scorer.workers.entry), as in a worker started with exec.

The server is not dumpable (a kernel running under the same uid cannot attach to it and reach the
workers forked after it), nor is a reference worker; a kernel worker becomes dumpable again and
names the judge as its tracer,
so the judge's audit of the kernel's process (scorer/checks/native_audit.py) reads it as before. The
server reaps its children and keeps their exit status for the judge, which asks for it by pid
(`ForkedProcess`, in place of a Popen). When the judge is gone (its end of the socket closed), the
server kills the workers it forked that still run, and exits. Where the server cannot start or answer, workers start
with exec as before; KERNELARENA_FORKSERVER=0 turns it off.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorer.checks.native_audit import alive, mapped_objects

ENV_SWITCH = "KERNELARENA_FORKSERVER"
_PR_SET_DUMPABLE = 4
_PR_SET_PTRACER = 0x59616D61
_MAX_MESSAGE = 1 << 20
_START_S = 300.0  # its imports, on a loaded machine
_REPLY_S = 10.0  # it answers in milliseconds
_POLL_S = 0.01


class ForkServerError(Exception):
    """The server did not start or answer: the worker starts with exec instead."""


# The exit status of a worker whose fork server is gone (killed or stopped): the server reaped it,
# or it was reparented and reaped elsewhere, so its real status cannot be known. No exit code or
# signal reads as this value.
STATUS_LOST = 256


class ForkedProcess:
    """The few parts of subprocess.Popen a WorkerProcess uses, for a child of the fork server."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            status = self.server.status(self.pid)
            if status is not None:
                self.returncode = status
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(_POLL_S)
        assert self.returncode is not None
        return self.returncode


class ForkServer:
    """The judge's end: one per judge process, shared by its threads (requests are serialized)."""

    def __init__(self, env: dict[str, str], log_path: str) -> None:
        self._lock = threading.Lock()
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with open(log_path, "ab") as log:
                self.proc = subprocess.Popen(
                    _command() + ["--fd", str(theirs.fileno())],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                    pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self._ready = False
        self.broken = False

    def _ask(self, request: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        """One request and its reply. A server that failed once (gone, stopped, or mute: a kernel
        under the same uid can signal it) is not asked again, so nothing waits on it twice."""
        with self._lock:
            if self.broken:
                raise ForkServerError("the fork server failed earlier")
            try:
                if not self._ready:
                    self._wait_ready()
                socket.send_fds(self._sock, [json.dumps(request).encode()], list(fds))
                readable, _, _ = select.select([self._sock], [], [], _REPLY_S)
                data = self._sock.recv(_MAX_MESSAGE) if readable else b""
                if not data:
                    raise ForkServerError("the fork server did not answer")
                return json.loads(data)
            except (OSError, ValueError, ForkServerError) as exc:
                self.broken = True
                raise ForkServerError(f"fork server: {exc}") from None

    def _wait_ready(self) -> None:
        readable, _, _ = select.select([self._sock], [], [], _START_S)
        hello = self._sock.recv(_MAX_MESSAGE) if readable else b""
        answer = json.loads(hello or b"{}")
        if answer.get("ready") is not True:
            raise ForkServerError(f"the fork server did not start: {answer.get('why') or 'no answer'}")
        self._ready = True

    def spawn(self, role: str, in_fd: int, out_fd: int, spool: str, warm_device: str, env: dict[str, str],
              cwd: str, log_path: str, memory_limit_bytes: int | None) -> ForkedProcess:
        reply = self._ask({"op": "spawn", "role": role, "spool": spool, "warm_device": warm_device, "env": env,
                           "cwd": cwd, "log": log_path, "memory_limit": memory_limit_bytes, "tracer": os.getpid()},
                          (in_fd, out_fd))
        if not isinstance(reply.get("pid"), int):
            raise ForkServerError(f"fork server: {reply.get('error', 'no pid')}")
        return ForkedProcess(self, reply["pid"])

    def status(self, pid: int) -> int | None:
        """The worker's exit code as Popen gives it (negative: killed by that signal), None while
        it runs. A server that is gone cannot tell: the worker counts as ended once it is."""
        try:
            reply = self._ask({"op": "status", "pid": pid})
        except ForkServerError:
            return None if alive(pid) else STATUS_LOST
        return reply.get("returncode")

    def close(self) -> None:
        if self.broken:
            # Killed before its end closes: a server that sees the judge gone ends its workers,
            # and those of this judge's other scorings are still in use.
            self.proc.kill()
        self._sock.close()  # a working server exits when its end closes, and ends its workers
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_SERVER: ForkServer | None = None
_SERVER_LOCK = threading.Lock()
_FAILURES = 0
_LAST_FAILURE = ""
_MAX_FAILURES = 3  # servers that did not start or answer before workers start with exec for good


def server(start_with: Callable[[], tuple[dict[str, str], str]]) -> ForkServer | None:
    """This process's fork server, started on first use with the environment and log file that
    `start_with` gives (a worker's environment), and again where it died or failed (a kernel can
    kill or stop it); None where it is turned off or kept failing."""
    global _SERVER, _FAILURES
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    with _SERVER_LOCK:
        if _SERVER is not None and _SERVER.broken:
            _retire(_SERVER)
        if _FAILURES >= _MAX_FAILURES:
            return None
        if _SERVER is None or _SERVER.proc.poll() is not None:
            try:
                _SERVER = ForkServer(*start_with())
            except OSError as exc:
                _FAILURES += 1
                _note_failure(f"the fork server could not be started: {exc}")
                return None
        return _SERVER


def drop(broken: ForkServer, why: str = "") -> None:
    """Stops using a server that did not start or answer; the next worker starts another."""
    broken.broken = True
    _note_failure(why or "the fork server failed")
    with _SERVER_LOCK:
        _retire(broken)


def last_failure() -> str:
    """Why this process's last fork server failed ("" if none did): workers then start with exec,
    slower, and the judge's log says why."""
    return _LAST_FAILURE


def _note_failure(why: str) -> None:
    global _LAST_FAILURE
    _LAST_FAILURE = why
    print(f"kernelarena: workers start with exec for now: {why}", file=sys.stderr)


def _retire(broken: ForkServer) -> None:
    """Under _SERVER_LOCK: counts a failed server and stops it (once, whichever thread saw it fail)."""
    global _SERVER, _FAILURES
    if _SERVER is not broken:
        return
    _FAILURES += 1
    _SERVER = None
    try:
        broken.close()
    except OSError:
        pass


# `-P` (safe path): the working directory is not put first on sys.path. The judge's working
# directory is whatever the user's shell had, writable by a kernel under the same uid; a
# `scorer/__init__.py` planted there would otherwise be imported by the next server instead of ours
# (the scorer is found through PYTHONPATH, which names its checkout).
SAFE_PATH = "-P"


def _command() -> list[str]:
    return [sys.executable, SAFE_PATH, "-m", "scorer.workers.forkserver"]


def worker_arguments(role: str, in_fd: int, out_fd: int, spool: str, warm_device: str) -> list[str]:
    """`python -m scorer.workers.entry`'s arguments: the exec'd worker's command line, and a forked one's
    `sys.argv` (so both see the same)."""
    return (["--role", role, "--in-fd", str(in_fd), "--out-fd", str(out_fd), "--spool", spool]
            + (["--warm-device", warm_device] if warm_device else []))


# ---------------------------------------------------------------- the server process

def limit_address_space(limit_bytes: int) -> None:
    """A worker's address-space cap (CPU workers). Only the soft limit, and never above the hard
    one: inside a sandbox that already caps memory lower, raising the hard limit fails and the
    worker would not start at all."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux, or no Yama (PR_SET_PTRACER): nothing to set


def _become_worker(request: dict[str, Any], fds: list[int], control: socket.socket) -> int:
    """In the forked child: the worker's loop, once it is set up as one started with exec."""
    from scorer.workers.entry import serve

    _set_up_child(request, fds, control)
    # The spool is opened by the worker (behind its wall, for a kernel), not here.
    return serve(str(request["role"]), fds[0], fds[1], Path(request["spool"]), str(request.get("warm_device", "")))


def _set_up_child(request: dict[str, Any], fds: list[int], control: socket.socket) -> None:
    """The session, files, environment, limits and command line a worker started with exec gets
    (scorer.workers.process)."""
    control.close()
    os.setsid()
    # Only the kernel worker is dumpable (the judge audits its memory); the reference worker, like
    # this server, is not, so nothing under the same uid can attach to it or read it.
    if request["role"] == "kernel":
        _prctl(_PR_SET_DUMPABLE, 1)
        _prctl(_PR_SET_PTRACER, int(request["tracer"]))
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    in_fd, out_fd = fds
    keep = {0, 1, 2, in_fd, out_fd}
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:
                pass
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in request["env"].items()})
    import random
    import tempfile

    tempfile.tempdir = None  # computed again from the worker's TMPDIR
    random.seed()
    if request.get("memory_limit"):
        limit_address_space(int(request["memory_limit"]))
    import scorer.workers.entry

    sys.argv = [scorer.workers.entry.__file__] + worker_arguments(str(request["role"]), in_fd, out_fd, str(request["spool"]),
                                                           str(request.get("warm_device", "")))


def _cuda_touched() -> str | None:
    """Why this process must not fork workers: a child of a process that has started the CUDA
    driver cannot use CUDA. Importing torch and triton does not start it, though on a CUDA build
    they may map the driver's library; what forbids a fork is a driver that cuInit has started,
    and an unstarted one answers any call with CUDA_ERROR_NOT_INITIALIZED (the test PyTorch uses
    for its own lazy initialisation, pytorch/pytorch#117043)."""
    try:
        import torch

        if torch.cuda.is_initialized():
            return "CUDA was initialized in the fork server"
    except Exception:
        pass
    return "the CUDA driver was started in the fork server" if _driver_started() else None


_CUDA_ERROR_NOT_INITIALIZED = 3


def _driver_started() -> bool:
    """Whether a CUDA driver mapped in this process answers a call: a library that is not mapped
    is not loaded here (RTLD_NOLOAD), and a mapped one that cannot be asked counts as started."""
    paths = sorted(p for p in mapped_objects(os.getpid()) if "/libcuda.so" in p)
    for path in paths:
        try:
            driver = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            count = ctypes.c_int(0)
            if driver.cuDeviceGetCount(ctypes.byref(count)) != _CUDA_ERROR_NOT_INITIALIZED:
                return True
        except (OSError, AttributeError):
            return True
    return False


def _end_workers(live: set[int]) -> None:
    """The judge is gone (killed mid-scoring, say): its workers end with this server. A worker
    waits for its channel, which closed with the judge, except one busy in forward; a walled
    kernel is killed by its pid as the judge would (scorer.workers.wall.kill_worker)."""
    from scorer.workers.wall import kill_worker

    for pid in live:
        kill_worker(pid, walled=True)


def _serve(control: socket.socket) -> int:
    exited: dict[int, int] = {}
    live: set[int] = set()
    unfit = _cuda_touched()
    control.send(json.dumps({"ready": unfit is None, "why": unfit}).encode())
    if unfit is not None:
        return 1
    while True:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            exited[pid] = os.waitstatus_to_exitcode(status)
            live.discard(pid)
        readable, _, _ = select.select([control], [], [], 0.05)
        if not readable:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, _MAX_MESSAGE, 4)
        except OSError:
            data = b""
        if not data:  # the judge is gone
            _end_workers(live)
            return 0
        request = json.loads(data)
        if request.get("op") == "status":
            for fd in fds:
                os.close(fd)
            code = exited.pop(int(request["pid"]), None)
            control.send(json.dumps({"returncode": code}).encode())
            continue
        if request.get("op") != "spawn" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"error": "bad request"}).encode())
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _become_worker(request, fds, control)
            except BaseException:  # the worker's log holds the reason
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        live.add(pid)
        for fd in fds:
            os.close(fd)
        control.send(json.dumps({"pid": pid}).encode())


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m scorer.workers.forkserver")
    parser.add_argument("--fd", type=int, required=True)
    args = parser.parse_args(argv)
    control = socket.socket(fileno=args.fd)
    _prctl(_PR_SET_DUMPABLE, 0)
    # Everything a worker imports, once: the clock first (scorer.workers.entry captures it at import).
    import scorer.workers.entry  # noqa: F401
    import scorer.workers.kernel_role  # noqa: F401
    import scorer.workers.reference_role  # noqa: F401

    return _serve(control)


if __name__ == "__main__":
    sys.exit(main())
