"""The docker backend: one locked-down container per sandbox, commands run with `docker exec`.

The container's main process is a small bash loop (_INIT) that reaps zombies and can reset the
sandbox's processes without forking. The Docker SDK is synchronous: short
calls run through asyncio.to_thread, output streaming on a thread of its own.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import socket as pysocket
import tarfile
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import docker
import docker.errors
import docker.types
from docker.utils.socket import STDERR, STDOUT, SocketError, frames_iter

from kernelarena.logs import get_logger
from sandbox import docker_client as dc
from sandbox.base import (
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
from sandbox.cgroups import docker_freezer_dir, docker_oom_file, read_oom_kills
from sandbox.config import CONTAINER_CODE_ROOT, CONTAINER_WORKDIR, SandboxConfig
from sandbox.output import BoundedCapture
from sandbox.paths import repo_root, solution_dirs
from sandbox.threads import run_on_thread

log = get_logger("kernelarena.sandbox")

USER = "1000:1000"
#: Largest file read_file / copy_out bring back; past it the sandbox is treated as misused.
MAX_TRANSFER_BYTES = 1 << 30

# PID 1 of every sandbox: reaps orphans (so a killed fork bomb's zombies free the pids limit)
# and, on SIGUSR1, SIGKILLs every other process in the container. The reset needs no fork
# inside the container, so it works even when a fork bomb holds every pid.
_INIT = 'trap "kill -9 -1" USR1; trap "exit 0" TERM; while :; do sleep infinity & wait $!; done'
# The file, then a token of the reader's (its second argument): a stream whose end was lost (seen
# once under load: exit 0 and no bytes) is told from an empty file, and tried again.
_READ = 'test -e "$1" || exit 44; test -d "$1" && exit 45; cat -- "$1" && printf %s "$2"'
_LOST_OUTPUT_TRIES = 3
_WRITE = 'mkdir -p -- "$(dirname -- "$1")" && cat >"$1"'
# A sweep's judge freezes an agent's container while it times on the agent's device
# (scorer/gpu/freeze.py), and runc refuses an exec into a frozen container: exit 126 with nothing
# started (the exec's Pid stays 0), saying "cannot exec in a paused container", or with its
# message lost on the hijacked stream. Such an exec is tried again until the thaw. A freeze's
# lease ends within 600 s.
_FROZEN_WAIT_S = 605.0
_T = TypeVar("_T")


def _refused_while_frozen(code: int, pid: int, output: str) -> bool:
    """runc's refusal of an exec into a frozen container. Every command runs under `timeout`,
    so a 126 with no process started is runc's own failure; it is the freeze's when runc says so
    or says nothing (a refusal for another cause, such as a fork bomb's, names it and is not
    waited on)."""
    if code != 126 or pid:
        return False
    return "cannot exec in a paused container" in output[:400] or not output.strip()


async def _until_thawed(attempt: Callable[[], Awaitable[_T]], refused: Callable[[_T], bool]) -> _T:
    """`attempt()` again, after pauses from 20 ms growing to 0.5 s, while a freeze refuses it (for
    at most _FROZEN_WAIT_S); the last result otherwise."""
    pause, waited = 0.02, 0.0
    while True:
        result = await attempt()
        if not refused(result) or waited >= _FROZEN_WAIT_S:
            return result
        await asyncio.sleep(pause)
        waited += pause
        pause = min(0.5, pause * 1.5)


_GPU_RUNTIME_HINTS = ("could not select device driver", "nvidia-container-cli", "unknown or invalid runtime name: nvidia")


class _Exec:
    """One `docker exec`: created, started with a hijacked socket, pumped, inspected."""

    def __init__(self, api: docker.APIClient, container_id: str, argv: list[str], *,
                 env: dict[str, str] | None, workdir: str | None, stdin: bytes | None) -> None:
        self.api = api
        self.stdin = stdin
        self.exec_id = api.exec_create(
            container_id, argv, stdout=True, stderr=True, stdin=stdin is not None,
            environment=env or None, workdir=workdir,
        )["Id"]
        self.sock: Any = None
        self.pid = 0  # the started process's host pid; 0 where none was started

    def start(self) -> None:
        self.sock = self.api.exec_start(self.exec_id, socket=True)
        if self.stdin is not None:
            raw = getattr(self.sock, "_sock", self.sock)
            raw.sendall(self.stdin)
            raw.shutdown(pysocket.SHUT_WR)  # EOF on the command's stdin

    def pump(self, out: BoundedCapture, err: BoundedCapture) -> None:
        try:
            for stream, data in frames_iter(self.sock, tty=False):
                if stream == STDOUT:
                    out.feed(data)
                elif stream == STDERR:
                    err.feed(data)
        finally:
            self.close_socket()

    def abort(self) -> None:
        """Unblock a pump stuck on a silent stream."""
        raw = getattr(self.sock, "_sock", self.sock)
        try:
            raw.shutdown(pysocket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass

    def close_socket(self) -> None:
        try:
            self.sock.close()
        except (OSError, AttributeError):
            pass

    def exit_code(self, wait_s: float = 2.0) -> int | None:
        """None while the process still runs (after `wait_s`)."""
        deadline = time.monotonic() + wait_s
        while True:
            state = self.api.exec_inspect(self.exec_id)
            self.pid = int(state.get("Pid") or 0)
            if not state.get("Running"):
                code = state.get("ExitCode")
                return -1 if code is None else int(code)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)


class DockerSandbox(Sandbox):
    def __init__(self, cfg: SandboxConfig) -> None:
        self.cfg = cfg
        self.workdir = CONTAINER_WORKDIR
        self.code_root = CONTAINER_CODE_ROOT
        self.sandbox_id = uuid.uuid4().hex[:12]
        self.info = SandboxInfo(backend="docker", network_isolated=not cfg.network)
        self._client: docker.DockerClient | None = None
        self._container_id: str | None = None
        self._oom_file: Path | None = None
        self._freezer: Path | None = None
        self._oom_seen = 0
        self._closed = False

    def freezer_cgroup(self) -> Path | None:
        """The container's cgroup folder whose freezer pauses it (as `docker pause` does), or None."""
        return self._freezer

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await asyncio.to_thread(self._start_blocking)
        log.debug("sandbox_started", backend="docker", container=self._container_id, image=self.cfg.image)

    def _start_blocking(self) -> None:
        cfg = self.cfg
        self._client = dc.connect()
        try:
            image = self._client.images.get(cfg.image)
        except docker.errors.ImageNotFound:
            hint = (
                "kernelarena sandbox build-image" if cfg.image.startswith("kernelarena-sandbox") else f"docker pull {cfg.image}"
            )
            raise SandboxSetupError(f"Docker image '{cfg.image}' not found; build or fetch it: {hint}") from None
        for mount in cfg.mounts:
            if not mount.host.exists():
                raise SandboxSetupError(f"mount source {mount.host} does not exist; fix the sandbox mounts")
        kwargs = self._create_kwargs(image.attrs.get("Config") or {})
        try:
            container = self._client.containers.create(cfg.image, ["bash", "-c", _INIT], **kwargs)
        except docker.errors.APIError as exc:
            raise SandboxError(f"cannot create the sandbox container: {dc.short_error(exc)}") from None
        # The create call answers with the inspected container, so its Id and Name are set (the
        # stubs type both as optional because a bare Model may lack them).
        self._container_id = container_id = cast(str, container.id)
        try:
            container.start()
        except docker.errors.APIError as exc:
            text = str(exc)
            if any(h in text for h in _GPU_RUNTIME_HINTS):
                raise SandboxSetupError(
                    "GPUs were requested but the Docker daemon has no NVIDIA GPU runtime; install "
                    "nvidia-container-toolkit and restart dockerd, or use --gpus none / --backend process"
                ) from None
            raise SandboxError(f"cannot start the sandbox container: {dc.short_error(exc)}") from None
        self._oom_file = docker_oom_file(container_id)
        self._freezer = docker_freezer_dir(container_id)
        if self._freezer is None:
            self.info.not_enforced["freeze"] = ("the container's cgroup is not visible from here: a sweep cannot pause "
                                                "it while a judge times on its device; the judge only detects its load")
        self.info.details.update(container=cast(str, container.name), image=cfg.image,
                                 oom_counter=str(self._oom_file or "inside the container"))

    def _create_kwargs(self, image_config: dict[str, Any]) -> dict[str, Any]:
        cfg = self.cfg
        labels = {**cfg.labels, dc.MANAGED: "1", dc.SANDBOX_ID: self.sandbox_id, dc.OWNER: dc.owner_label()}
        kwargs: dict[str, Any] = dict(
            detach=True,
            user=USER,
            working_dir=CONTAINER_WORKDIR,
            environment=self._environment(image_config),
            labels=labels,
            network_mode="bridge" if cfg.network else "none",
            mem_limit=cfg.memory_bytes,
            memswap_limit=cfg.memory_bytes,  # no swap: a hog is OOM-killed, not slowed to a crawl
            nano_cpus=int(cfg.cpus * 1e9),
            pids_limit=cfg.pids,
            read_only=True,
            tmpfs={
                CONTAINER_WORKDIR: f"rw,exec,nosuid,size={cfg.workspace_bytes},uid=1000,gid=1000,mode=0755",
                "/tmp": "rw,exec,nosuid,size=1g,mode=1777",
            },
            security_opt=["no-new-privileges:true"]
            + (["seccomp=unconfined"] if cfg.nested_wall else []),
            cap_drop=["ALL"],
            mounts=self._mounts(),
            hostname="sandbox",
        )
        self.info.limits.update(memory=cfg.memory, cpus=f"{cfg.cpus:g}", pids=str(cfg.pids),
                                workspace=cfg.workspace_size, user=USER, root_fs="read-only")
        if cfg.wants_gpu:
            gpu_kwargs, gpu_env = self._gpu_kwargs()
            kwargs.update(gpu_kwargs)
            kwargs["environment"] = {**gpu_env, **kwargs["environment"]}
        return kwargs

    def _environment(self, image_config: dict[str, Any]) -> dict[str, str]:
        image_env = dict(e.split("=", 1) for e in image_config.get("Env") or [] if "=" in e)
        pythonpath = ":".join(p for p in (CONTAINER_CODE_ROOT, image_env.get("PYTHONPATH", "")) if p)
        return {
            "HOME": CONTAINER_WORKDIR,
            "PYTHONPATH": pythonpath,
            "PYTHONDONTWRITEBYTECODE": "1",  # the code mount is read-only
            # Per-sandbox compile caches, so nothing compiled in one trial is reused by another.
            "TRITON_CACHE_DIR": "/tmp/triton-cache",
            "TORCH_EXTENSIONS_DIR": "/tmp/torch-extensions",
            "XDG_CACHE_HOME": "/tmp/cache",
            "KERNELARENA_SANDBOX": "docker",
            **self.cfg.env,
        }

    def _mounts(self) -> list[docker.types.Mount]:
        root = repo_root()
        mounts = [
            docker.types.Mount(f"{CONTAINER_CODE_ROOT}/{name}", str(root / name), type="bind", read_only=True)
            for name in self.cfg.code_dirs
            if (root / name).exists()
        ]
        if not self.cfg.expose_solutions and "suites" in self.cfg.code_dirs:
            # An empty read-only tmpfs over each solutions folder hides the reference kernels.
            for folder in solution_dirs(root):
                target = f"{CONTAINER_CODE_ROOT}/{folder.relative_to(root).as_posix()}"
                mounts.append(docker.types.Mount(target, "", type="tmpfs", read_only=True, tmpfs_size=4096))
        mounts += [
            docker.types.Mount(m.target, str(m.host.resolve()), type="bind", read_only=m.read_only)
            for m in self.cfg.mounts
        ]
        return mounts

    def _gpu_kwargs(self) -> tuple[dict[str, Any], dict[str, str]]:
        """(container kwargs, environment) for the requested GPUs."""
        gpus = self.cfg.gpus
        ids = gpus if isinstance(gpus, str) else ",".join(map(str, gpus))
        if Path("/dev/kfd").exists():
            # ROCm: the devices themselves, and their groups so uid 1000 may open them.
            paths = ["/dev/kfd"] + (["/dev/dri"] if Path("/dev/dri").exists() else [])
            groups = {os.stat(p).st_gid for p in paths}
            groups |= {os.stat(d).st_gid for d in Path("/dev/dri").glob("renderD*")}
            self.info.limits["gpus"] = f"rocm:{ids}"
            env = {"ROCR_VISIBLE_DEVICES": ids} if isinstance(gpus, list) else {}
            return {"devices": [f"{p}:{p}:rwm" for p in paths], "group_add": [str(g) for g in sorted(groups)]}, env
        if gpus == "all":
            request = docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])
        else:
            request = docker.types.DeviceRequest(device_ids=[str(i) for i in gpus], capabilities=[["gpu"]])
        self.info.limits["gpus"] = f"nvidia:{ids}"
        return {"device_requests": [request]}, {}

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.to_thread(self._remove_blocking)
        except asyncio.CancelledError:
            # A second Ctrl-C must not leak the container: finish the removal here.
            self._remove_blocking()
            raise

    def _remove_blocking(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            if self._container_id is not None:
                client.api.remove_container(self._container_id, force=True)
            else:
                # The create call may have succeeded on the daemon after we stopped waiting.
                for c in client.containers.list(all=True, filters={"label": f"{dc.SANDBOX_ID}={self.sandbox_id}"},
                                                   ignore_removed=True):
                    c.remove(force=True)
        except docker.errors.NotFound:
            pass
        except dc.CONNECT_ERRORS as exc:
            log.error("sandbox_not_removed", container=self._container_id, error=dc.short_error(exc),
                      fix="kernelarena sandbox prune")
        finally:
            client.close()
            self._client = None
        log.debug("sandbox_closed", backend="docker", container=self._container_id)

    # -- commands --------------------------------------------------------------------------

    def _api(self) -> tuple[docker.APIClient, str]:
        """The API client and the running container's id."""
        if self._closed or self._client is None or self._container_id is None:
            raise SandboxError("the sandbox is not running (never started, or already closed)")
        return self._client.api, self._container_id

    def _new_exec(self, argv: list[str], env: dict[str, str] | None, cwd: str | None,
                  stdin: bytes | None = None) -> _Exec:
        api, container_id = self._api()
        try:
            job = _Exec(api, container_id, argv, env=env,
                        workdir=self.resolve(cwd) if cwd else None, stdin=stdin)
            job.start()
        except docker.errors.NotFound:
            raise SandboxError("the sandbox container is gone (removed from outside?)") from None
        except docker.errors.APIError as exc:
            raise SandboxError(f"the sandbox cannot run commands: {dc.short_error(exc)}") from None
        except dc.CONNECT_ERRORS as exc:
            raise SandboxError(f"lost the Docker daemon: {dc.short_error(exc)}") from None
        return job

    async def exec(self, cmd: list[str] | str, *, timeout: float = 60, cwd: str | None = None,
                   env: dict[str, str] | None = None,
                   on_stdout: Callable[[bytes], None] | None = None) -> ExecResult:
        result, _ = await _until_thawed(
            lambda: self._exec_once(cmd, timeout=timeout, cwd=cwd, env=env, on_stdout=on_stdout),
            lambda r: r[1])
        return result

    async def _exec_once(self, cmd: list[str] | str, *, timeout: float, cwd: str | None,
                         env: dict[str, str] | None,
                         on_stdout: Callable[[bytes], None] | None) -> tuple[ExecResult, bool]:
        """The command's result, and whether a freeze refused it (nothing ran)."""
        argv = with_timeout(as_argv(cmd), timeout)
        out = BoundedCapture(self.cfg.output_limit_bytes, on_stdout)
        err = BoundedCapture(self.cfg.output_limit_bytes)
        oom_before = self._host_oom_kills()
        started = time.monotonic()
        job = await asyncio.to_thread(self._new_exec, argv, env, cwd)
        pump = run_on_thread(lambda: job.pump(out, err))
        host_timed_out = False
        try:
            try:
                await asyncio.wait_for(asyncio.shield(pump), timeout + KILL_GRACE_S + HOST_SLACK_S)
            except TimeoutError:
                host_timed_out = True
                log.warning("exec_outlived_timeout", cmd=describe(cmd)[:200], timeout_s=timeout)
                await self._reset_processes()
                try:
                    await asyncio.wait_for(asyncio.shield(pump), 5)
                except TimeoutError:
                    job.abort()
                    await asyncio.wait_for(asyncio.shield(pump), 5)
        except asyncio.CancelledError:
            job.abort()
            raise
        except (OSError, SocketError) as exc:
            raise SandboxError(f"lost the command's output stream: {exc}") from None
        duration = time.monotonic() - started
        code = await self._exit_code(job)
        if code is None:
            code, host_timed_out = 137, True
        if _refused_while_frozen(code, job.pid, out.text() + err.text()):
            return ExecResult(stdout=out.text(), stderr=err.text(), exit_code=code, timed_out=False, oom_killed=False,
                              duration_s=duration, stdout_bytes=out.total, stderr_bytes=err.total), True
        oom = await self._oom_since(oom_before, code)
        timed_out = host_timed_out or timed_out_from(code, duration, timeout, oom)
        if timed_out and not host_timed_out:  # (a host timeout has reset already)
            # `timeout` kills the command's process group; what left the group (setsid,
            # nohup, a fork bomb's stragglers) is killed here, with any other background
            # process of the sandbox. Files are untouched.
            await self._reset_processes()
        return ExecResult(
            stdout=out.text(), stderr=err.text(), exit_code=code, timed_out=timed_out,
            oom_killed=oom, duration_s=duration, stdout_bytes=out.total, stderr_bytes=err.total,
        ), False

    async def _reset_processes(self, wait_s: float = 5) -> None:
        """SIGKILL everything but PID 1 and its keeper; waits until it is done."""
        def reset() -> None:
            api, container_id = self._api()
            api.kill(container_id, signal="SIGUSR1")
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if len(api.top(container_id).get("Processes") or []) <= 2:
                    return
                time.sleep(0.05)
            log.warning("sandbox_reset_incomplete", container=self._container_id)

        try:
            await asyncio.to_thread(reset)
        except dc.CONNECT_ERRORS as exc:
            raise SandboxError(f"cannot reset the sandbox's processes: {dc.short_error(exc)}") from None

    async def _exit_code(self, job: _Exec) -> int | None:
        try:
            return await asyncio.to_thread(job.exit_code)
        except dc.CONNECT_ERRORS as exc:
            raise SandboxError(f"lost the command's state: {dc.short_error(exc)}") from None

    def _host_oom_kills(self) -> int | None:
        return read_oom_kills(self._oom_file) if self._oom_file else None

    async def _oom_since(self, before: int | None, code: int) -> bool:
        after = self._host_oom_kills()
        if before is not None and after is not None:
            return after > before
        if code != 137:
            return False
        # The daemon's cgroups are not visible here: ask the container's own cgroup. A count
        # that grew since the last look means this SIGKILL came from the OOM killer.
        probe = await self._run_plain(
            ["sh", "-c", "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null"],
            timeout=10)
        count = next((int(line.split()[1]) for line in probe.splitlines()
                      if line.startswith("oom_kill ") and line.split()[1].isdigit()), None)
        if count is None:
            return False
        grew, self._oom_seen = count > self._oom_seen, count
        return grew

    async def _run_plain(self, argv: list[str], *, timeout: float, stdin: bytes | None = None,
                         limit: int = MAX_TRANSFER_BYTES) -> str:
        _, out, _ = await self._run_bytes(argv, timeout=timeout, stdin=stdin, limit=limit)
        return out.decode("utf-8", errors="replace")

    async def _run_bytes(self, argv: list[str], *, timeout: float, stdin: bytes | None = None,
                         limit: int = MAX_TRANSFER_BYTES) -> tuple[int, bytes, str]:
        """A helper command of ours (not the user's): full stdout bytes, or SandboxError."""
        code, out, err, _ = await _until_thawed(
            lambda: self._run_bytes_once(argv, timeout=timeout, stdin=stdin, limit=limit),
            lambda r: r[3])
        return code, out, err

    async def _run_bytes_once(self, argv: list[str], *, timeout: float, stdin: bytes | None,
                              limit: int) -> tuple[int, bytes, str, bool]:
        out = BoundedCapture(limit)
        err = BoundedCapture(64 * 1024)
        job = await asyncio.to_thread(self._new_exec, with_timeout(argv, timeout), None, None, stdin)
        pump = run_on_thread(lambda: job.pump(out, err))
        try:
            await asyncio.wait_for(asyncio.shield(pump), timeout + KILL_GRACE_S + HOST_SLACK_S)
        except TimeoutError:
            job.abort()
            raise SandboxError(f"sandbox helper command timed out: {describe(argv)[:100]}") from None
        except asyncio.CancelledError:
            job.abort()
            raise
        except (OSError, SocketError) as exc:
            raise SandboxError(f"lost a helper command's output stream: {exc}") from None
        code = await self._exit_code(job)
        if out.truncated:
            raise SandboxError(f"more than {limit} bytes to transfer; copy smaller files")
        code = -1 if code is None else code
        text = out.bytes()[:400].decode(errors="replace") + err.text()
        return code, out.bytes(), err.text(), _refused_while_frozen(code, job.pid, text)

    # -- files -----------------------------------------------------------------------------

    async def write_file(self, path: str, content: str | bytes) -> None:
        data = content.encode() if isinstance(content, str) else bytes(content)
        target = self.resolve(path)
        code, _, err = await self._run_bytes(["sh", "-c", _WRITE, "sh", target], timeout=60, stdin=data)
        if code != 0:
            raise OSError(f"cannot write {target} in the sandbox: {err.strip() or f'exit {code}'}")

    async def read_file(self, path: str) -> bytes:
        target = self.resolve(path)
        token = uuid.uuid4().hex.encode()
        code, data, err = await self._intact(["sh", "-c", _READ, "sh", target, token.decode()], 60,
                                             lambda data: data.endswith(token))
        if code == 44:
            raise FileNotFoundError(f"{target} does not exist in the sandbox")
        if code == 45:
            raise IsADirectoryError(f"{target} is a folder; use copy_out")
        if code != 0:
            raise OSError(f"cannot read {target} in the sandbox: {err.strip() or f'exit {code}'}")
        return data.removesuffix(token)

    async def copy_out(self, path: str, dest: Path) -> None:
        target = Path(self.resolve(path))
        # A whole tar stream is a non-empty run of 512-byte blocks.
        code, data, err = await self._intact(
            ["sh", "-c", 'test -e "$1" || exit 44; exec tar -C "$2" -cf - -- "$3"', "sh",
             str(target), str(target.parent), target.name], 120, lambda data: bool(data) and len(data) % 512 == 0)
        if code == 44:
            raise FileNotFoundError(f"{target} does not exist in the sandbox")
        if code != 0:
            raise OSError(f"cannot copy {target} out of the sandbox: {err.strip() or f'exit {code}'}")
        await asyncio.to_thread(_extract_single, data, target.name, Path(dest))

    async def _intact(self, argv: list[str], timeout: float, whole: Callable[[bytes], bool]) -> tuple[int, bytes, str]:
        """A helper command whose successful output must pass `whole`: tried again where it did
        not (the stream lost its end), and an OSError after _LOST_OUTPUT_TRIES."""
        for _ in range(_LOST_OUTPUT_TRIES):
            code, data, err = await self._run_bytes(argv, timeout=timeout)
            if code != 0 or whole(data):
                return code, data, err
            log.warning("sandbox.helper_output_lost", container=self._container_id, bytes=len(data),
                        command=describe(argv)[:100])
        raise OSError(f"the output of a helper command came back incomplete {_LOST_OUTPUT_TRIES} times "
                      f"({len(data)} bytes): {describe(argv)[:100]}")


def _extract_single(tar_bytes: bytes, name: str, dest: Path) -> None:
    """Unpack the one entry `name` of a tar stream to `dest` (a file or a folder)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".copy_out-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as archive:
            # The 'data' filter refuses links and paths that would escape the folder.
            archive.extractall(tmp, filter="data")
        src = Path(tmp) / name
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            os.replace(src, dest)
