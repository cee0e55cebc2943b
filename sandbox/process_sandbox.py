"""The process backend, for hosts without a Docker daemon (such as a bare GPU machine).

Each sandbox is a temporary folder and each command a subprocess in its own session with a
scrubbed environment, resource limits, a cgroup when one can be made, a network namespace of
its own when the kernel allows, and an unprivileged uid when run as root and the interpreter
allows. It is weaker than a container (the host filesystem stays visible); `info` lists what
is and is not enforced. See docs/SANDBOX.md.
"""

from __future__ import annotations

import asyncio
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from kernelarena.logs import get_logger
from sandbox import cgroups, isolation
from sandbox.base import (
    EXEC_TAG,
    HOST_SLACK_S,
    KILL_GRACE_S,
    ExecResult,
    Sandbox,
    SandboxError,
    SandboxInfo,
    SandboxSetupError,
    as_argv,
    describe,
    timed_out_from,
    with_timeout,
)
from sandbox.config import Mount, SandboxConfig
from sandbox.output import BoundedCapture
from sandbox.owners import owner_alive, process_identity
from sandbox.paths import repo_root

log = get_logger("kernelarena.sandbox")

_CHUNK = 64 * 1024
SANDBOX_TAG = "KERNELARENA_SANDBOX_ID"


WORKDIR_PREFIX = "kernelarena-sb-"
# Who made each workdir (pid and start time), outside the workdir so the sandboxed code cannot
# forge it: a workdir whose owner died without closing (SIGKILL) is removed by the next sandbox.
WORKDIR_OWNERS = os.path.join(tempfile.gettempdir(), "kernelarena-sb-owners")


def _owner_record(owner: str, tag: str, cgroup: cgroups.Cgroup | None) -> str:
    """Line 1: the owner's identity; line 2: the tag in its commands' environment; then the
    sandbox's cgroup folders: what a dead owner's strays are found by."""
    folders = sorted({f"cgroup{cgroup.version} {d}" for d in cgroup.dirs.values()}) if cgroup else []
    return "\n".join([owner, f"{SANDBOX_TAG}={tag}", *folders]) + "\n"


def _write_record(record: Path, text: str) -> None:
    """Whole or not at all: another sandbox's orphan sweep may read it at any moment (a rewrite in
    place left it empty for an instant, and a live sandbox's workdir was removed in a CI sweep)."""
    part = record.with_name(record.name + ".part")
    part.write_text(text)
    os.replace(part, record)


def _end_strays(lines: list[str]) -> None:
    """Kill what a dead owner's commands left running: a command that outlived its SIGKILLed
    owner wrote into the workdir again after it was removed (CI's /tmp kept such remains)."""
    if len(lines) > 1 and lines[1].startswith(f"{SANDBOX_TAG}="):
        _kill_tagged(lines[1])
    groups = [line.split(" ", 1) for line in lines[2:] if line.startswith(("cgroup1 /", "cgroup2 /"))]
    if groups:
        cgroups.Cgroup(version=int(groups[0][0][-1]), dirs={path: Path(path) for _, path in groups}).remove()


def remove_orphaned_workdirs() -> list[str]:
    """Removes the workdirs of process sandboxes whose owner is gone, after killing what their
    commands left running; returns them."""
    owners = Path(WORKDIR_OWNERS)
    removed = []
    for record in owners.glob(f"{WORKDIR_PREFIX}*") if owners.is_dir() else []:
        if record.name.endswith(".part"):
            continue
        try:
            lines = record.read_text().splitlines()
        except OSError:
            continue
        owner = lines[0].strip() if lines else ""
        if not owner or owner_alive(owner):
            continue  # empty: a record being written (never treat a live sandbox's as an orphan's)
        _end_strays(lines)
        workdir = Path(tempfile.gettempdir()) / record.name
        shutil.rmtree(workdir, ignore_errors=True)
        record.unlink(missing_ok=True)
        removed.append(str(workdir))
    if removed:
        log.info("sandbox_orphans_removed", workdirs=removed)
    return removed


class ProcessSandbox(Sandbox):
    def __init__(self, cfg: SandboxConfig) -> None:
        self.cfg = cfg
        self.code_root = str(repo_root())
        self.workdir = ""
        self.info = SandboxInfo(backend="process", network_isolated=False)
        self._cgroup: cgroups.Cgroup | None = None
        self._netns: str | None = None
        self._uid: int | None = None
        self._running: set[int] = set()  # session ids (= leader pids) of live commands
        self._closed = False
        self._started = False
        self._tag = uuid.uuid4().hex  # in every command's environment, to find strays at close

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await asyncio.to_thread(self._start_blocking)
        self._started = True
        log.debug("sandbox_started", backend="process", workdir=self.workdir, info=self.info.to_dict())

    def _start_blocking(self) -> None:
        cfg = self.cfg
        info = self.info
        remove_orphaned_workdirs()
        self.workdir = tempfile.mkdtemp(prefix=WORKDIR_PREFIX)
        self._record = Path(WORKDIR_OWNERS) / Path(self.workdir).name
        self._record.parent.mkdir(exist_ok=True)
        _write_record(self._record, _owner_record(process_identity(os.getpid()), self._tag, None))
        (Path(self.workdir) / ".tmp").mkdir()
        for mount in cfg.mounts:
            if not mount.host.exists():
                raise SandboxSetupError(f"mount source {mount.host} does not exist; fix the sandbox mounts")

        if cfg.network:
            info.network_isolated = False
            info.details["network"] = "allowed by the config"
        else:
            self._netns, why = isolation.network_isolation()
            info.network_isolated = self._netns is not None
            if why:
                info.not_enforced["network"] = why

        self._cgroup, why = cgroups.create(None, pids=cfg.pids, memory_bytes=cfg.memory_bytes, cpus=cfg.cpus)
        if self._cgroup is not None:
            _write_record(self._record, _owner_record(process_identity(os.getpid()), self._tag, self._cgroup))
        cg_limits = self._cgroup.limits if self._cgroup else {}
        info.details["cgroup"] = f"v{self._cgroup.version}" if self._cgroup else why

        if cfg.nested_wall and os.geteuid() == 0:
            # The scorer's own wall puts each kernel worker in a uid, namespaces and seccomp filter
            # of its own, which it can build only as root: uid 65534 would leave the kernel less
            # walled than root does (no user namespaces where the host refuses unprivileged ones).
            self._uid, why = None, ""
            info.details["user"] = ("root kept for the scorer: it walls each kernel worker in a uid, namespaces "
                                    "and a seccomp filter of its own (scorer/workers/wall.py)")
        else:
            self._uid, why = isolation.unprivileged_user()
        if self._uid is not None:
            os.chown(self.workdir, self._uid, self._uid)
            os.chown(Path(self.workdir) / ".tmp", self._uid, self._uid)
            info.limits["user"] = str(self._uid)
        elif why:
            info.not_enforced["user"] = why
        self._describe_limits(cg_limits)

    def _describe_limits(self, cg_limits: dict[str, str]) -> None:
        cfg, info = self.cfg, self.info
        if "pids" in cg_limits:
            info.limits["pids"] = f"{cfg.pids} (cgroup)"
        elif self._pids_enforced_by_rlimit():
            info.limits["pids"] = f"{cfg.pids} (RLIMIT_NPROC, on top of the uid's other tasks)"
        else:
            info.not_enforced["pids"] = (
                f"running as root without a writable cgroup ({info.details['cgroup']}): "
                "RLIMIT_NPROC does not apply to root, so a fork bomb is not contained")
        if "memory" in cg_limits:
            info.limits["memory"] = f"{cfg.memory} (cgroup, OOM kills reported)"
        elif self._memory_rlimit() is not None:
            info.limits["memory"] = f"{cfg.memory} (RLIMIT_AS: allocations fail, no OOM kill)"
        else:
            info.not_enforced["memory"] = "GPU requested and no memory cgroup: RLIMIT_AS would break the GPU runtime"
        if self.freezer_cgroup() is not None:
            info.details["freezer"] = "cgroup (a sweep freezes it while a judge times on its device)"
        else:
            info.not_enforced["freeze"] = ("no freezer cgroup: a sweep cannot pause this sandbox while a judge times "
                                           "on its device; the judge only detects its load")
        if "cpus" in cg_limits:
            info.limits["cpus"] = f"{cfg.cpus:g} (cgroup)"
        else:
            info.not_enforced["cpus"] = "no cgroup: CPU share not limited (RLIMIT_CPU caps CPU seconds per command)"
        info.limits.update(
            file_size=f"{cfg.workspace_size} (RLIMIT_FSIZE)", cpu_time="(timeout + 2 s) x cpus + 5 s per command (RLIMIT_CPU)"
        )
        info.not_enforced["filesystem"] = (
            "the host filesystem stays visible (no mount namespace); only file calls are confined to the workdir"
        )
        if cfg.mounts:
            info.details["mounts"] = "host paths are used as they are (see mount_path)"

    def freezer_cgroup(self) -> Path | None:
        """The cgroup that freezes every process of this sandbox, or None (no cgroup here)."""
        return self._cgroup.freezer_dir if self._cgroup else None

    def _pids_enforced_by_rlimit(self) -> bool:
        uid = self._uid if self._uid is not None else os.geteuid()
        return uid != 0

    def _memory_rlimit(self) -> int | None:
        """RLIMIT_AS where nothing better exists: a memory cgroup OOM-kills on resident memory
        (and so reports oom_killed), while RLIMIT_AS counts address space, which GPU runtimes
        reserve by the terabyte."""
        if self.cfg.wants_gpu or (self._cgroup and "memory" in self._cgroup.limits):
            return None
        return self.cfg.memory_bytes

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.to_thread(self._close_blocking)
        except asyncio.CancelledError:
            self._close_blocking()
            raise

    def _close_blocking(self) -> None:
        for sid in list(self._running):
            _kill_session(sid, signal.SIGKILL)
        _kill_tagged(f"{SANDBOX_TAG}={self._tag}")
        if self._cgroup is not None:
            self._cgroup.remove()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            (Path(WORKDIR_OWNERS) / Path(self.workdir).name).unlink(missing_ok=True)
        log.debug("sandbox_closed", backend="process", workdir=self.workdir)

    # -- commands --------------------------------------------------------------------------

    def _environment(self, extra: dict[str, str] | None) -> dict[str, str]:
        work = self.workdir
        env = {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": work,
            "LANG": "C.UTF-8",
            # The host's own additions after the code: packages installed beside the interpreter
            # (a --target folder) are the same Python the sandbox's commands need.
            "PYTHONPATH": os.pathsep.join([self.code_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                             if p and p != self.code_root]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "TMPDIR": f"{work}/.tmp",
            "TRITON_CACHE_DIR": f"{work}/.tmp/triton-cache",
            "TORCH_EXTENSIONS_DIR": f"{work}/.tmp/torch-extensions",
            "XDG_CACHE_HOME": f"{work}/.tmp/cache",
            "KERNELARENA_SANDBOX": "process",
            SANDBOX_TAG: self._tag,
        }
        gpus = self.cfg.gpus
        if gpus == "none":
            # Not a hard barrier here (the device files stay open to the user), but CUDA and
            # ROCm honour it, so an accidental GPU use fails instead of skewing a measurement.
            env["CUDA_VISIBLE_DEVICES"] = ""
            env["HIP_VISIBLE_DEVICES"] = ""
        elif isinstance(gpus, list):
            env["CUDA_VISIBLE_DEVICES"] = env["HIP_VISIBLE_DEVICES"] = ",".join(map(str, gpus))
        return {**env, **self.cfg.env, **(extra or {})}

    def _child_setup(self, timeout: float) -> isolation.ChildSetup:
        cfg = self.cfg
        limits = {
            resource.RLIMIT_CPU: math.ceil((timeout + KILL_GRACE_S) * max(cfg.cpus, 1)) + 5,
            resource.RLIMIT_FSIZE: cfg.workspace_bytes,
            resource.RLIMIT_CORE: 0,
        }
        memory = self._memory_rlimit()
        if memory is not None:
            limits[resource.RLIMIT_AS] = memory
        uid = self._uid if self._uid is not None else os.geteuid()
        if uid != 0:
            # Counts every thread of the uid on the host, so the sandbox gets `pids` on top.
            limits[resource.RLIMIT_NPROC] = isolation.user_task_count(uid) + cfg.pids
        return isolation.ChildSetup(
            cgroup_procs=self._cgroup.procs_files if self._cgroup else [],
            netns=self._netns,
            rlimits=limits,
            uid=self._uid,
            gid=self._uid,
        )

    def _require_running(self) -> None:
        if self._closed or not self._started:
            raise SandboxError("the sandbox is not running (never started, or already closed)")

    async def exec(self, cmd: list[str] | str, *, timeout: float = 60, cwd: str | None = None,
                   env: dict[str, str] | None = None,
                   on_stdout: Callable[[bytes], None] | None = None) -> ExecResult:
        self._require_running()
        argv = with_timeout(as_argv(cmd), timeout)
        tag = f"{EXEC_TAG}={uuid.uuid4().hex}"
        workdir = self.resolve(cwd) if cwd else self.workdir
        out = BoundedCapture(self.cfg.output_limit_bytes, on_stdout)
        err = BoundedCapture(self.cfg.output_limit_bytes)
        oom_before = self._cgroup.oom_kills() if self._cgroup else None
        setup = await asyncio.to_thread(self._child_setup, timeout)
        started = time.monotonic()
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=workdir, env={**self._environment(env), **dict([tag.split("=", 1)])},
            start_new_session=True, preexec_fn=setup, close_fds=True,
        ))
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            # Cancelled while asyncio was still wiring the pipes. Left to itself, asyncio kills only
            # the direct child and then waits for the pipes to close, which the command's own
            # children hold until they end (a cancelled `sleep 79` took 79 s): kill them all by
            # their tag, let the spawn finish, and end its session too.
            _kill_tagged(tag)
            await asyncio.wait([spawn])
            if not spawn.cancelled() and spawn.exception() is None:
                _kill_session(spawn.result().pid, signal.SIGKILL)
                _kill_tagged(tag)
                await spawn.result().wait()
            raise
        except FileNotFoundError as exc:
            if not Path(workdir).is_dir():
                return self._spawn_failure(f"cwd {cwd} does not exist in the sandbox", started, out, err)
            raise SandboxError(f"cannot start commands: {exc}") from None
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            # The pids limit refusing a fork shows up here; the sandbox itself still works.
            return self._spawn_failure(f"cannot start the command: {exc}", started, out, err)
        self._running.add(proc.pid)
        readers = [asyncio.create_task(_pump(proc.stdout, out)), asyncio.create_task(_pump(proc.stderr, err))]
        host_timed_out = False
        try:
            try:
                await asyncio.wait_for(proc.wait(), timeout + KILL_GRACE_S + HOST_SLACK_S)
            except TimeoutError:
                host_timed_out = True
                log.warning("exec_outlived_timeout", cmd=describe(cmd)[:200], timeout_s=timeout)
                await asyncio.to_thread(self._kill_everything, proc.pid, tag)
                await proc.wait()
            # Processes that left the session may still hold the pipes: give them a moment,
            # then take the output we have.
            done, pending = await asyncio.wait(readers, timeout=2)
            if pending:
                await asyncio.to_thread(self._kill_everything, proc.pid, tag)
                done, pending = await asyncio.wait(readers, timeout=2)
                for task in pending:
                    task.cancel()
        except asyncio.CancelledError:
            self._kill_everything(proc.pid, tag)
            raise
        finally:
            self._running.discard(proc.pid)
            # Background children of the command die with it, as they would in a container exec
            # of `timeout`, and nothing outlives the call to eat the next command's limits.
            _kill_session(proc.pid, signal.SIGKILL)
        duration = time.monotonic() - started
        code = proc.returncode if proc.returncode is not None else -1
        if code < 0:
            code = 128 - code  # killed by signal N: report as the shell does, 128 + N
        oom_after = self._cgroup.oom_kills() if self._cgroup else None
        oom = oom_before is not None and oom_after is not None and oom_after > oom_before
        timed_out = host_timed_out or timed_out_from(code, duration, timeout, oom)
        if timed_out:
            await asyncio.to_thread(self._kill_everything, proc.pid, tag)
        return ExecResult(
            stdout=out.text(), stderr=err.text(), exit_code=code, timed_out=timed_out,
            oom_killed=oom, duration_s=duration, stdout_bytes=out.total, stderr_bytes=err.total,
        )

    def _spawn_failure(self, message: str, started: float, out: BoundedCapture, err: BoundedCapture) -> ExecResult:
        err.feed(message.encode() + b"\n")
        return ExecResult(stdout="", stderr=err.text(), exit_code=126, timed_out=False, oom_killed=False,
                          duration_s=time.monotonic() - started, stdout_bytes=0, stderr_bytes=err.total)

    def _kill_everything(self, sid: int, tag: str) -> None:
        """The command's session, its processes that left it (found by their tag), and, as
        the docker backend does after a timeout, everything else of the sandbox's cgroup."""
        _kill_session(sid, signal.SIGKILL)
        _kill_tagged(tag)
        if self._cgroup is not None:
            self._cgroup.kill_all()
            self._cgroup.wait_released()

    # -- files -----------------------------------------------------------------------------

    def _host_path(self, path: str) -> Path:
        """A path inside the workdir, symlinks resolved: the sandboxed code may plant a link
        to a host file and wait for the host to write through it."""
        self._require_running()
        root = Path(self.workdir).resolve()
        real = Path(os.path.realpath(self.resolve(path)))
        if real != root and root not in real.parents:
            raise PermissionError(f"{path} is outside the sandbox workdir {self.workdir}")
        return real

    async def write_file(self, path: str, content: str | bytes) -> None:
        target = self._host_path(path)
        data = content.encode() if isinstance(content, str) else bytes(content)

        def write() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if self._uid is not None:
                for p in [target, *target.parents]:
                    if p == Path(self.workdir).resolve():
                        break
                    os.chown(p, self._uid, self._uid)

        await asyncio.to_thread(write)

    async def read_file(self, path: str) -> bytes:
        target = self._host_path(path)
        if target.is_dir():
            raise IsADirectoryError(f"{path} is a folder; use copy_out")
        if not target.exists():
            raise FileNotFoundError(f"{path} does not exist in the sandbox")
        return await asyncio.to_thread(target.read_bytes)

    async def copy_out(self, path: str, dest: Path) -> None:
        source = self._host_path(path)
        if not source.exists():
            raise FileNotFoundError(f"{path} does not exist in the sandbox")
        dest = Path(dest)

        def copy() -> None:
            dest.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copyfile(source, dest)

        await asyncio.to_thread(copy)

    def mount_path(self, mount: Mount) -> str:
        return str(mount.host.resolve())


async def _pump(stream: asyncio.StreamReader | None, capture: BoundedCapture) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        capture.feed(chunk)


def _kill_tagged(tag: str) -> None:
    """SIGKILL every process whose environment holds `tag` (NAME=value): what a command
    started with setsid or nohup, out of reach of its process group."""
    needle = tag.encode() + b"\0"
    for _ in range(20):  # a fork bomb adds processes while we scan: repeat until none is left
        killed = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            try:
                environ = (proc / "environ").read_bytes()
            except OSError:
                continue
            if environ.startswith(needle) or b"\0" + needle in environ:
                try:
                    os.kill(int(proc.name), signal.SIGKILL)
                    killed += 1
                except (ProcessLookupError, PermissionError):
                    pass
        if not killed:
            return


def _kill_session(sid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(sid, sig)
    except (ProcessLookupError, PermissionError):
        pass
