"""The operating system's wall around the kernel worker (scorer/workers/wall.py), on real processes.

The unit half enters the wall in a forked child and tries from inside what a kernel would; the
scoring half scores kernels that try it through the whole scorer. Each attack kernel returns a
wrong result where it reached anything, so `passed` means the wall held, not that nothing looked.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest

from scorer.errors import ScorerUserError
from scorer.judge.scoring import score_kernel
from scorer.options import ScoreOptions
from scorer.tasks.suites import load_suite
from scorer.workers import wall
from tests.shared.waiting import wait_until

ATTACKS = Path(__file__).parent / "wall_attacks"
REPO = Path(__file__).resolve().parents[2]
CLEAN = REPO / "suites" / "demo" / "solutions" / "swish" / "kernel.py"


def _in_wall(tmp_path: Path, probe, workdir: Path | None = None, env: dict[str, str] | None = None) -> dict:
    """Runs probe() in a forked child behind the wall, with tmp_path as the judge's temp folder;
    returns what it reported (or skips where the host refuses namespaces)."""
    read_fd, write_fd = os.pipe()
    workdir = workdir or tmp_path / "worker"
    workdir.mkdir(parents=True, exist_ok=True)
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        code = 0
        try:
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            os.environ[wall.HIDE_ENV] = str(tmp_path)
            os.chdir(workdir)
            notes = wall.enter(workdir, [str(REPO)])
            result = {"notes": notes, **probe()}
        except BaseException as exc:  # reported, so the test shows it
            result, code = {"error": f"{type(exc).__name__}: {exc}"}, 1
        os.write(write_fd, json.dumps(result).encode())
        os._exit(code)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 1 << 16):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    result = json.loads(b"".join(chunks) or b"{}")
    if any("unshare" in p for p in result.get("notes", {}).get("problems", [])):
        pytest.skip(f"this host refuses namespaces: {result['notes']['problems']}")
    assert "error" not in result, result
    return result


def test_inside_the_wall_nothing_else_is_reachable(tmp_path: Path) -> None:
    judge = os.getpid()
    (tmp_path / "judge-secret").write_text("seeds")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def probe() -> dict:
        import ctypes

        out: dict = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "uid": os.getuid()}
        try:
            os.kill(judge, 0)
            out["signal_judge"] = "delivered"
        except OSError as exc:
            out["signal_judge"] = exc.strerror
        libc = ctypes.CDLL(None, use_errno=True)
        out["ptrace"] = libc.ptrace(16, 1, 0, 0)
        out["secret_visible"] = os.path.exists(str(tmp_path / "judge-secret"))
        for name, path in (("repo", REPO / "planted.py"), ("sysctl", Path("/proc/sys/kernel/core_pattern"))):
            try:
                # The sysctl's own value, so that a wall that failed changes nothing on the host.
                data = path.read_text() if path.exists() else ""
                path.write_text(data)
                out[name] = "written"
            except OSError as exc:
                out[name] = exc.strerror
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            out["network"] = "connected"
        except OSError as exc:
            out["network"] = str(exc.strerror or exc)
        out["own_folder_writable"] = bool(Path("scratch").write_text("ok"))
        out["devices"] = sorted(os.listdir("/dev"))
        return out

    try:
        seen = _in_wall(tmp_path, probe)
    finally:
        server.close()
        (REPO / "planted.py").unlink(missing_ok=True)
    assert seen["pids"] == [1], seen  # its own process only, as PID 1 of its namespace
    assert seen["signal_judge"] != "delivered"
    assert seen["ptrace"] == -1
    assert seen["secret_visible"] is False  # the judge's temp folder is covered
    assert seen["repo"] == "Read-only file system"
    assert seen["sysctl"] == "Read-only file system"
    assert seen["network"] != "connected"
    assert seen["own_folder_writable"] is True
    assert not any(d.startswith(("sd", "vd", "nvme", "mem", "kmsg")) for d in seen["devices"]), seen["devices"]
    assert seen["notes"]["seccomp"] == "loaded"


def test_clone_gets_no_namespace_and_threads_and_processes_still_start(tmp_path: Path) -> None:
    """clone with a namespace flag is refused (EPERM), clone3 answers ENOSYS, and what falls back
    to clone still works behind the wall: threads, os.fork, subprocess, torch's thread pool."""
    def probe() -> dict:
        import ctypes
        import subprocess
        import threading

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        out: dict = {}
        for name, flags in (("newuser", 0x10000000 | 0x00020000 | 17), ("newnet", 0x40000000 | 17)):
            pid = libc.syscall(56, ctypes.c_ulong(flags), 0, 0, 0, 0)
            if pid == 0:
                os._exit(0)
            out[name] = os.strerror(ctypes.get_errno()) if pid < 0 else "made"
            if pid > 0:
                os.waitpid(pid, 0)
        args = (ctypes.c_uint64 * 11)(0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0)
        pid = libc.syscall(435, ctypes.byref(args), ctypes.c_size_t(88))
        if pid == 0:
            os._exit(0)
        out["clone3"] = os.strerror(ctypes.get_errno()) if pid < 0 else "made"
        box: list = []
        t = threading.Thread(target=lambda: box.append(1))
        t.start()
        t.join()
        out["thread"] = box == [1]
        child = os.fork()
        if child == 0:
            os._exit(7)
        out["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        out["subprocess"] = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True,
                                           text=True, check=True).stdout.strip()
        # A fresh interpreter: OpenMP's pool, once the test process has used it, hangs in any forked
        # child (walled or not), and a worker is never a fork of a process that used it.
        pool = "import torch; torch.set_num_threads(2); a = torch.ones(256, 256); print(float((a @ a).sum()))"
        out["torch"] = float(subprocess.run([sys.executable, "-c", pool], capture_output=True, text=True,
                                            check=True).stdout)
        return out

    if platform.machine() != "x86_64":
        pytest.skip("the probe calls clone and clone3 by their x86_64 numbers")
    seen = _in_wall(tmp_path, probe)
    assert seen["newuser"] == "Operation not permitted" and seen["newnet"] == "Operation not permitted", seen
    assert seen["clone3"] == "Function not implemented", seen
    assert seen["thread"] is True and seen["fork"] == 7 and seen["subprocess"] == "42", seen
    assert seen["torch"] == 256.0 ** 3


def _listener(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    os.chmod(path, 0o777)
    sock.settimeout(0.2)
    return sock


@pytest.mark.skipif(os.geteuid() != 0, reason="makes a socket in /run")
def test_the_hosts_unix_sockets_are_out_of_reach(tmp_path: Path) -> None:
    """A socket file is connectable through a read-only mount: /run (a session bus, docker's, a
    database's) and the judge's freeze servers (0666, in the lock folder bound into the wall) are
    covered; socketpair still works."""
    run = Path(tempfile.mkdtemp(prefix="kernelarena-wall-socket-", dir="/run"))
    os.chmod(run, 0o755)
    # A short folder of its own: a socket's path must fit sun_path (108 bytes), and pytest-xdist's
    # tmp_path does not always.
    locks = Path(tempfile.mkdtemp(prefix="ka-locks-"))
    os.chmod(locks, 0o755)
    (locks / wall.FREEZERS).mkdir(parents=True)
    (locks / "kernelarena-gpu.lock").write_text("")
    targets = {"run": run / "daemon.sock", "freezer": locks / wall.FREEZERS / "judge.sock"}
    listeners = {name: _listener(path) for name, path in targets.items()}

    def probe() -> dict:
        out: dict = {}
        for name, path in targets.items():
            try:
                socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"from behind the wall", str(path))
                out[name] = "sent"
            except OSError as exc:
                out[name] = exc.strerror
        a, b = socket.socketpair()
        a.sendall(b"ok")
        out["pair"] = b.recv(2).decode()
        out["lock_file"] = (locks / "kernelarena-gpu.lock").exists()
        return out

    try:
        seen = _in_wall(tmp_path, probe, env={**os.environ, "KERNELARENA_GPU_LOCK_DIR": str(locks)})
        got = {}
        for name, sock in listeners.items():
            try:
                got[name] = sock.recv(100)
            except TimeoutError:
                got[name] = b""
    finally:
        for sock in listeners.values():
            sock.close()
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(locks, ignore_errors=True)
    assert seen["run"] != "sent" and seen["freezer"] != "sent", seen
    assert got == {"run": b"", "freezer": b""}, got
    assert seen["pair"] == "ok" and seen["lock_file"] is True, seen
    assert "/run" in seen["notes"]["sockets_covered"]


def test_nothing_the_kernel_started_outlives_it(tmp_path: Path) -> None:
    beat = tmp_path / "worker" / "beat"  # its own folder: the one place behind the wall the host sees

    def probe() -> dict:
        import signal

        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                for _ in range(400):
                    beat.write_text(str(time.time()))
                    time.sleep(0.05)
            os._exit(0)
        wait_until(beat.exists, 30, "the daemon to beat")
        return {"returned": time.time()}  # the kernel ends right after

    try:
        ended = _in_wall(tmp_path, probe)["returned"]
        # It beats every 50 ms for 20 s: once its beat has been still for 0.5 s, its last beat must
        # be from before the kernel ended (and the moment a kill takes to land).
        wait_until(lambda: time.time() - beat.stat().st_mtime >= 0.5, 30, "the daemon's beat to stop")
        assert beat.stat().st_mtime <= ended + 0.3, "a process the kernel started outlived it"
    finally:
        beat.unlink(missing_ok=True)


def test_dev_shm_is_the_kernels_own_capped_and_gone_with_it(tmp_path: Path) -> None:
    """A file a kernel leaves in /dev/shm reaches neither the host nor the next walled process."""
    name = f"kernelarena-shm-test-{os.getpid()}"

    def leave() -> dict:
        Path("/dev/shm", name).write_text("left for the next kernel")
        vfs = os.statvfs("/dev/shm")
        return {"size": vfs.f_blocks * vfs.f_frsize, "mode": oct(os.stat("/dev/shm").st_mode & 0o7777)}

    def look() -> dict:
        return {"seen": os.path.exists(f"/dev/shm/{name}"), "listing": os.listdir("/dev/shm")}

    try:
        first = _in_wall(tmp_path, leave)
        assert not Path("/dev/shm", name).exists(), "the kernel's /dev/shm file reached the host's"
        second = _in_wall(tmp_path, look)
    finally:
        Path("/dev/shm", name).unlink(missing_ok=True)
    assert 0 < first["size"] <= wall.SHM_CAP_BYTES and first["mode"] == "0o1777", first
    assert second["seen"] is False and second["listing"] == [], second


def _score(kernel: Path, tmp_path: Path, **options):
    return score_kernel(load_suite("demo"), "swish", kernel, device="cpu",
                        options=ScoreOptions(device="cpu", seeds=2, repetitions=5, warmup=1, alt_shapes=False,
                                             **options))


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["reach_other_processes", "plant_files"])
def test_attacks_through_the_scorer_reach_nothing(attack: str, tmp_path: Path) -> None:
    score = _score(ATTACKS / f"{attack}.py", tmp_path)
    if not score.isolation.get("complete"):
        pytest.skip(f"the wall is incomplete on this host: {score.isolation}")
    # A kernel that reached anything returns its input: `incorrect`. Behind the wall it cannot,
    # and is either honest (passed) or caught for how it tried.
    assert score.verdict in ("passed", "hack_detected"), (score.verdict, score.error, score.hacks)
    assert not list(REPO.glob("kernelarena_planted_scorer")) and not Path("/tmp/kernelarena_planted_scorer").exists()


def _named(mark: str) -> list[str]:
    """Threads of the host's process table whose comm is `mark`."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/task/*/comm"):
        try:
            if comm.read_text().strip() == mark:
                found.append(str(comm.parent))
        except OSError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["survivor", "leaves_its_group"])
def test_a_surviving_daemon_dies_with_its_scoring(attack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = f"kas{os.getpid() % 100000}{attack[:4]}"
    monkeypatch.setenv("SURVIVOR_MARK", mark)
    score = _score(ATTACKS / f"{attack}.py", tmp_path)
    if not score.isolation.get("complete"):
        pytest.skip(f"the wall is incomplete on this host: {score.isolation}")
    # Correct only where the daemon beat: it ran during the scoring.
    assert score.correctness is not None and score.correctness.passed == score.correctness.trials > 0, score.error
    deadline = time.monotonic() + 10
    while _named(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _named(mark) == [], "the kernel's daemon outlived its scoring"


@pytest.mark.slow
def test_scoring_records_the_wall_and_requires_it_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    score = _score(CLEAN, tmp_path, require_isolation=True)
    assert score.verdict == "passed", (score.error, score.hacks)
    assert score.isolation["complete"] is True and score.isolation["missing"] == []
    assert set(score.isolation["walls"]) == set(wall.WALLS)
    monkeypatch.setenv(wall.ENV_SWITCH, "0")
    with pytest.raises(ScorerUserError, match="accept-weak-isolation"):
        _score(CLEAN, tmp_path, require_isolation=True)
    weak = _score(CLEAN, tmp_path)
    assert weak.verdict == "passed" and weak.isolation["complete"] is False


def test_the_walled_worker_holds_only_its_channel_and_its_own_folder(tmp_path: Path) -> None:
    """Read from outside: every descriptor of the walled worker, its cwd and root, are the channel,
    its stdio, a device node or something inside its own folder opened through its own mounts."""
    from scorer.workers.process import WorkerDirs, WorkerProcess

    worker = WorkerProcess("kernel", WorkerDirs.create(tmp_path / "w", "kernel"))
    worker.start()
    try:
        assert worker.wait_started(120), worker.log_tail()
        assert worker.proc is not None
        walled = wall.walled_pid(worker.proc.pid)
        if walled == worker.proc.pid:
            pytest.skip("the wall forked no walled process on this host")
        links = [os.readlink(f"/proc/{walled}/fd/{fd}") for fd in os.listdir(f"/proc/{walled}/fd")]
        channel = {f"pipe:[{os.fstat(fd).st_ino}]" for fd in (worker.to_child, worker.from_child)}
        assert channel <= set(links), links
        assert wall.fd_report(walled, worker.fd_allowance()) == [], links
        seen = wall.inspect(walled, str(tmp_path), worker.fd_allowance())
        assert seen["walls"]["descriptors"] is True and "descriptors" not in seen["missing"]
        # Without the channel's inodes the same pipes read as foreign: the check can fail.
        stranger = wall.FdAllowance(frozenset(), worker.fd_allowance().files, worker.fd_allowance().workdir)
        assert any("not the judge's channel" in p for p in wall.fd_report(walled, stranger))
    finally:
        worker.close()


def test_a_folder_opened_before_the_wall_is_found_from_outside(tmp_path: Path) -> None:
    """A descriptor of the judge's folder kept through the wall (what the fork server's spool
    descriptor was): from it `..` leads past the covers. The judge names it, before and after load."""
    workdir = tmp_path / "worker"
    workdir.mkdir()
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(done_w)
        try:
            os.environ[wall.HIDE_ENV] = str(tmp_path)
            os.chdir(workdir)
            leaked = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
            host_socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # of the host's namespace
            wall.enter(workdir, [str(REPO)], keep=(leaked, ready_w, done_r, host_socket.fileno()))
            own = os.pipe()  # both ends its own, as the CUDA driver's
            made = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # as the CUDA driver makes one
            os.write(ready_w, f"{os.fstat(own[0]).st_ino} {os.fstat(made.fileno()).st_ino}".encode())
            os.read(done_r, 1)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(done_r)
    try:
        pipe_ino, socket_ino = os.read(ready_r, 64).split()
        own_pipe, own_socket = f"pipe:[{int(pipe_ino)}]", f"socket:[{int(socket_ino)}]"
        walled = wall.walled_pid(pid)
        if walled == pid:
            pytest.skip("the wall forked no walled process on this host")
        allowed = wall.FdAllowance(frozenset(), frozenset(), os.path.realpath(workdir))
        for loaded in (False, True):
            problems = wall.fd_report(walled, allowed, loaded=loaded)
            assert any("folder opened outside the wall" in p and str(tmp_path) in p for p in problems), problems
            assert not any(own_pipe in p or own_socket in p for p in problems), problems
        # Before load, the pipes kept from outside (one end each here) are named; its own is not.
        before = wall.fd_report(walled, allowed)
        assert sum("not the judge's channel" in p for p in before) == 2, before
        assert sum("socket:[" in p and "before the kernel ran" in p for p in before) == 1, before
    finally:
        os.close(done_w)
        os.close(ready_r)
        os.waitpid(pid, 0)


def test_a_walled_kernel_killed_by_sigkill_reads_as_sigkill(tmp_path: Path) -> None:
    # The out-of-memory killer picks the process that holds the memory: the walled kernel, not its
    # waiting parent. The parent must end as the kernel did, or an OOM reads as "exited with code 1".
    from scorer.workers.process import WorkerDirs, WorkerProcess, describe_exit

    worker = WorkerProcess("kernel", WorkerDirs.create(tmp_path / "w", "kernel"))
    worker.start()
    try:
        assert worker.wait_started(120), worker.log_tail()
        assert worker.proc is not None
        walled = wall.walled_pid(worker.proc.pid)
        if walled == worker.proc.pid:
            pytest.skip("the wall forked no walled process on this host")
        os.kill(walled, signal.SIGKILL)
        code = worker.proc.wait(timeout=30)
        assert code == -signal.SIGKILL, code
        assert describe_exit(code, False)[1] == "killed by SIGKILL (out of memory)"
    finally:
        worker.close()


def _closed_home_of_the_interpreter() -> str | None:
    return next((c for p in (sys.base_prefix, sys.prefix) if (c := wall._closed_ancestor(p))), None)


@pytest.mark.skipif(os.geteuid() != 0 or _closed_home_of_the_interpreter() is None,
                    reason="needs root and an interpreter below a folder closed to other users (pyenv under /root)")
def test_an_interpreter_in_a_closed_folder_still_gets_the_kernel_a_uid_of_its_own(tmp_path: Path) -> None:
    """The kernel runs as its own uid, imports the standard library and builds against the
    interpreter's headers, and sees nothing else of the closed folder the interpreter lies in."""
    closed = _closed_home_of_the_interpreter()
    assert closed is not None
    marker = Path(closed) / f"kernelarena-wall-secret-{os.getpid()}"
    marker.write_text("root's own file")

    def probe() -> dict:
        import importlib
        import sysconfig

        importlib.import_module("wave")  # a standard library module not imported yet: read from disk
        return {"uid": os.getuid(), "marker_visible": os.path.exists(str(marker)),
                "headers": os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")),
                "listing": sorted(os.listdir(closed))}

    try:
        seen = _in_wall(tmp_path, probe)
    finally:
        marker.unlink()
    assert seen["uid"] != 0, seen["notes"]
    assert closed in seen["notes"]["opened"]
    assert seen["marker_visible"] is False and seen["headers"] is True
    assert all(not name.startswith("kernelarena-wall-secret") for name in seen["listing"])


@pytest.mark.skipif(os.geteuid() != 0, reason="a uid of the kernel's own needs a root judge")
def test_a_worker_folder_below_a_closed_folder_is_reached_by_the_kernels_own_uid(tmp_path: Path) -> None:
    """A process sandbox keeps its judge's temp folder in a 0700 folder of its own: the kernel, as a
    uid of its own, still reaches its folder by path, and sees nothing else of the closed folder."""
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir(mode=0o700)
    (sandbox / "agent-notes.txt").write_text("the agent's own files")
    judge_tmp = sandbox / ".cache" / "tmp"
    workdir = judge_tmp / "kernelarena-score-x" / "kernel"

    def probe() -> dict:
        (workdir / "by-path.txt").write_text("ok")  # by its absolute path, not through the cwd
        return {"uid": os.getuid(), "listing": sorted(os.listdir(sandbox)),
                "by_path": (workdir / "by-path.txt").read_text(), "cwd": os.getcwd()}

    seen = _in_wall(judge_tmp, probe, workdir=workdir)
    assert seen["uid"] != 0, seen["notes"]
    assert str(sandbox) in seen["notes"]["opened"] or any(str(sandbox).startswith(o) for o in seen["notes"]["opened"])
    assert seen["by_path"] == "ok" and seen["cwd"] == str(workdir)
    assert "agent-notes.txt" not in seen["listing"]
    assert (workdir / "by-path.txt").read_text() == "ok"  # written into the real folder


def test_torch_profilers_inductor_import_works_behind_the_wall(tmp_path: Path) -> None:
    """The correctness stage's device-time profiler imports torch._inductor, which makes a cache
    folder on import, named after the user: with the worker's own environment (no USER, /tmp
    read-only behind the wall, a uid without a passwd entry) the import must still work. On the
    H200 it failed every scoring before the worker got TORCHINDUCTOR_CACHE_DIR and USER."""
    from scorer.workers.process import WorkerDirs, child_environment

    dirs = WorkerDirs.create(tmp_path, "kernel")
    env = {k: v for k, v in child_environment(dirs).items() if k not in ("USER", "LOGNAME", "TMPDIR")}

    def probe() -> dict:
        import torch

        return {"inductor": hasattr(torch, "_inductor"), "uid": os.getuid()}

    seen = _in_wall(tmp_path, probe, workdir=dirs.workdir, env=env)
    assert seen["inductor"] is True


def _thread_state(tid: int | None) -> str:
    """The state letter of one of this process's threads ('S' while it waits)."""
    return Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_behind_the_wall_the_worker_reads_its_own_threads_stacks(tmp_path: Path) -> None:
    """The uid change made the worker non-dumpable, its /proc files root's: every native thread's
    origin read as unknown (thread-injection on runtime pools). Its own threads stay readable."""
    import threading

    from scorer.checks.threads import native_origin

    def probe() -> dict:
        stop = threading.Event()
        t = threading.Thread(target=stop.wait, daemon=True)
        t.start()
        wait_until(lambda: _thread_state(t.native_id) == "S", 10, "the thread to wait")
        origin = native_origin(str(t.native_id), ())
        with open(f"/proc/self/task/{t.native_id}/syscall", encoding="ascii") as fh:
            fh.read()  # while the thread still lives
        stop.set()
        t.join()
        return {"uid": os.getuid(), "kind": origin.kind, "detail": origin.detail}

    result = _in_wall(tmp_path, probe)
    assert result["kind"] != "unknown", result
