"""Workers forked from the judge process's fork server (scorer/workers/forkserver.py): set up as a worker
started with exec would be, their exit status reported through the server, and exec again where
the server is off or gone (a kernel can kill it: it runs under the same uid). CPU, real processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from scorer.workers import forkserver
from scorer.workers.process import WorkerDirs, WorkerProcess, child_environment


def _worker(base: Path, name: str, role: str = "kernel") -> WorkerProcess:
    worker = WorkerProcess(role, WorkerDirs.create(base / name, role))
    worker.start()
    assert worker.wait_started(120), worker.log_tail()
    return worker


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.fixture
def fresh_server(monkeypatch: pytest.MonkeyPatch):
    """This test's own server (another test may have left one running or dropped it)."""
    monkeypatch.setattr(forkserver, "_SERVER", None)
    monkeypatch.setattr(forkserver, "_FAILURES", 0)
    monkeypatch.setattr(forkserver, "_LAST_FAILURE", "")
    monkeypatch.delenv(forkserver.ENV_SWITCH, raising=False)
    yield
    if forkserver._SERVER is not None:
        forkserver._SERVER.close()


def test_workers_are_forked_by_one_server_and_end_with_their_status(tmp_path: Path, fresh_server: None) -> None:
    first, second = _worker(tmp_path, "a"), _worker(tmp_path, "b")
    try:
        assert isinstance(first.proc, forkserver.ForkedProcess) and isinstance(second.proc, forkserver.ForkedProcess)
        server = forkserver._SERVER
        assert server is not None
        assert _parent_of(first.proc.pid) == _parent_of(second.proc.pid) == server.proc.pid
        assert os.getpgid(first.proc.pid) == first.proc.pid  # its own session, as with exec
        assert first.proc.poll() is None
        os.kill(first.proc.pid, signal.SIGSEGV)
        assert first.proc.wait(timeout=30) == -signal.SIGSEGV
        assert first.proc.poll() == -signal.SIGSEGV
    finally:
        first.close()
        second.close()
    assert second.proc.returncode == -signal.SIGKILL  # close() kills the process group


def test_a_forked_worker_is_set_up_as_one_started_with_exec(tmp_path: Path) -> None:
    """The server's child set-up, run in a child of this test: its session, directory, standard
    files, environment, temp dir, address-space cap and command line are the worker's own, and no
    descriptor but its channel is left open (the server's control socket least of all)."""
    dirs = WorkerDirs.create(tmp_path, "kernel")
    env = child_environment(dirs)
    control, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    channel_in, report_w = os.pipe()
    report_r, channel_out = os.pipe()
    stray = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(stray, True)
    request = {"role": "kernel", "spool": str(dirs.workdir / "spool"), "warm_device": "", "env": env,
               "cwd": str(dirs.workdir), "log": str(dirs.log_path), "memory_limit": 8 << 30, "tracer": os.getpid()}
    pid = os.fork()
    if pid == 0:
        try:
            forkserver._set_up_child(request, [channel_in, channel_out], control)
            import resource

            seen = {"sid": os.getsid(0) == os.getpid(), "cwd": os.getcwd(), "tmp": tempfile.gettempdir(),
                    "triton": os.environ.get("TRITON_CACHE_DIR"), "argv": sys.argv[1:],
                    "limit": resource.getrlimit(resource.RLIMIT_AS)[0],
                    "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
                    "channel": [channel_in, channel_out]}
            os.write(1, b"to the log\n")
            os.write(channel_out, json.dumps(seen).encode())
        except BaseException as exc:
            os.write(2, repr(exc).encode())
        finally:
            os._exit(0)
    for fd in (channel_in, channel_out, stray, other.fileno()):
        os.close(fd) if fd != other.fileno() else other.close()
    os.close(report_w)
    data = os.read(report_r, 1 << 16)
    assert data, dirs.log_path.read_text()
    seen = json.loads(data)
    os.waitpid(pid, 0)
    control.close()
    assert seen["sid"] and seen["cwd"] == str(dirs.workdir)
    assert seen["tmp"] == str(dirs.workdir / "tmp") and seen["triton"] == str(dirs.workdir / "triton_cache")
    assert seen["argv"][:2] == ["--role", "kernel"] and "--out-fd" in seen["argv"]
    assert seen["limit"] == 8 << 30
    # 0-2, the channel, and the descriptor listing /proc/self/fd itself
    assert len(set(seen["fds"]) - {0, 1, 2, *seen["channel"]}) <= 1
    assert "to the log" in dirs.log_path.read_text()


def test_a_killed_server_is_replaced_and_workers_it_forked_still_end(tmp_path: Path, fresh_server: None) -> None:
    forked = _worker(tmp_path, "forked")
    server = forkserver._SERVER
    assert isinstance(forked.proc, forkserver.ForkedProcess) and server is not None
    server.proc.kill()  # what a kernel under the same uid could do
    server.proc.wait()
    after = _worker(tmp_path, "after")
    try:
        assert isinstance(after.proc, forkserver.ForkedProcess)
        assert forkserver._SERVER is not None and forkserver._SERVER.proc.pid != server.proc.pid
        assert forked.proc.poll() is None  # its server is gone, the worker is not
    finally:
        forked.close()
        after.close()
    assert forked.proc.returncode is not None and after.proc.returncode == -signal.SIGKILL


def test_a_stopped_server_is_asked_once_then_replaced(tmp_path: Path, fresh_server: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel can stop the server (SIGSTOP, same uid): the judge waits for its answer once, then
    tells its workers' ends by /proc and starts a new server for the next worker."""
    monkeypatch.setattr(forkserver, "_REPLY_S", 1.0)
    forked = _worker(tmp_path, "forked")
    server = forkserver._SERVER
    assert server is not None and isinstance(forked.proc, forkserver.ForkedProcess)
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        assert forked.proc.poll() is None and server.broken  # no answer: running, by /proc
        forked.close()
        assert forked.proc.returncode is not None
        after = _worker(tmp_path, "after")
        after.close()
        assert isinstance(after.proc, forkserver.ForkedProcess) and forkserver._SERVER is not server
    finally:
        if server.proc.poll() is None:
            os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()


def test_workers_start_with_exec_when_the_server_is_off_or_cannot_start(tmp_path: Path, fresh_server: None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forkserver.ENV_SWITCH, "0")
    plain = _worker(tmp_path, "off")
    plain.close()
    assert isinstance(plain.proc, subprocess.Popen)
    monkeypatch.delenv(forkserver.ENV_SWITCH)
    monkeypatch.setattr(forkserver, "_command", lambda: [sys.executable, "-c", "import sys; sys.exit(3)"])
    for i in range(forkserver._MAX_FAILURES + 1):
        worker = _worker(tmp_path, f"broken-{i}")
        worker.close()
        assert isinstance(worker.proc, subprocess.Popen)
    assert forkserver._FAILURES == forkserver._MAX_FAILURES and forkserver._SERVER is None
    assert "the fork server did not start" in forkserver.last_failure()  # said, not silent


_DRIVER_STAND_IN = """
#include <stdlib.h>
int cuDeviceGetCount(int *count) {
    if (getenv("STAND_IN_STARTED")) { *count = 1; return 0; }   /* CUDA_SUCCESS */
    return 3;                                                   /* CUDA_ERROR_NOT_INITIALIZED */
}
"""


@pytest.mark.parametrize("started", [False, True])
def test_a_mapped_driver_forbids_forks_only_once_it_is_started(tmp_path: Path, started: bool) -> None:
    """On a CUDA build, importing torch and triton may map libcuda without starting it: the server
    forks then, and refuses once the driver answers calls. A compiled stand-in for the driver
    library, mapped into a fresh process as an import would map it."""
    source = tmp_path / "driver.c"
    source.write_text(_DRIVER_STAND_IN)
    library = tmp_path / "libcuda.so.1"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    probe = ("import ctypes, sys; ctypes.CDLL(sys.argv[1]);"
             "from scorer.workers import forkserver; print(forkserver._cuda_touched())")
    env = dict(os.environ, **({"STAND_IN_STARTED": "1"} if started else {}))
    out = subprocess.run([sys.executable, "-c", probe, str(library)], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == ("the CUDA driver was started in the fork server" if started else "None")


def test_an_error_reply_is_not_held_against_a_watch_that_reads_a_worker_tearing_down(tmp_path: Path) -> None:
    """A worker whose kernel calls sys.exit at import answers an error reply and exits; the watch
    that reads its descriptors after the reply raced that exit on a loaded CI box and read the
    channel as moved (hack_detected for a runtime error). An error reply is a failure verdict
    whoever sent it, so the watch is not read for one; any other reply still breaks the protocol
    where the watch names a fault."""
    from scorer.workers.process import WorkerFailure

    def always() -> str:
        return "the channel is not the judge's"

    worker = _worker(tmp_path, "w", "reference")
    try:
        reply = worker.request({"op": "no-such-op"}, None, 60, watch=always)
        assert reply.header.get("ok") is False and reply.header.get("kind") == "protocol", reply.header
        with pytest.raises(WorkerFailure) as failure:
            worker.request({"op": "ping"}, None, 60, watch=always)
        assert failure.value.kind == "protocol" and "the channel is not the judge's" in str(failure.value)
    finally:
        worker.close()
