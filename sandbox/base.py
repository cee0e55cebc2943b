"""The sandbox interface both backends implement, its result type and its errors.

A command that fails (non-zero exit, timeout, OOM) is an `ExecResult`; a sandbox that cannot
run commands any more raises `SandboxError`.
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from kernelarena.errors import UserError
from sandbox.config import Mount

#: Grace between SIGTERM and SIGKILL of `timeout -k`, and the extra wait on the host side.
KILL_GRACE_S = 2.0
HOST_SLACK_S = 3.0
#: Environment variable holding a per-command id: a command's processes that left its process
#: group are found (and killed after a timeout) by it.
EXEC_TAG = "KERNELARENA_EXEC"


class SandboxError(Exception):
    """The sandbox itself is broken (cannot start, died, lost its daemon); not a failed
    command."""


class SandboxSetupError(SandboxError, UserError):
    """A sandbox cannot start because of something the user must fix (no daemon, missing
    image, no GPU runtime). It is both: callers catching SandboxError see it, and the CLI
    prints it as a one-line user error with exit code 2."""


@dataclass
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    oom_killed: bool
    duration_s: float
    stdout_bytes: int
    stderr_bytes: int

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def ended_by(self) -> str:
        """Why the command ended: exit, timeout, oom, killed (SIGKILL, not OOM), terminated
        (SIGTERM), or signal."""
        if self.oom_killed:
            return "oom"
        if self.timed_out:
            return "timeout"
        if self.exit_code == 137:
            return "killed"
        if self.exit_code == 143:
            return "terminated"
        if self.exit_code > 128:
            return "signal"
        return "exit"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ended_by": self.ended_by}


@dataclass
class SandboxInfo:
    """What a sandbox really enforces; the process backend cannot always give everything, and
    says so here instead of pretending."""

    backend: str
    network_isolated: bool
    limits: dict[str, str] = field(default_factory=dict)
    not_enforced: dict[str, str] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Sandbox(ABC):
    """Use as `async with open_sandbox(cfg) as sb:`; `close()` runs on every exit path."""

    workdir: str
    code_root: str
    info: SandboxInfo

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def exec(
        self,
        cmd: list[str] | str,
        *,
        timeout: float = 60,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        on_stdout: Callable[[bytes], None] | None = None,
    ) -> ExecResult:
        """Run a command (a string runs with `bash -c`); never raises for the command's own
        failure, only when the sandbox is broken. `on_stdout` gets the output as it comes
        (the docker backend calls it from a thread of its own)."""

    @abstractmethod
    async def write_file(self, path: str, content: str | bytes) -> None:
        """Write (binary-safe) a file; a relative path is relative to `workdir`; parent
        folders are created."""

    @abstractmethod
    async def read_file(self, path: str) -> bytes:
        """Raises FileNotFoundError when the file does not exist."""

    @abstractmethod
    async def copy_out(self, path: str, dest: Path) -> None:
        """Copy a file or folder out of the sandbox to `dest` on the host."""

    @abstractmethod
    async def close(self) -> None:
        """Idempotent; safe after a half-finished start."""

    def mount_path(self, mount: Mount) -> str:
        """Where a configured mount is seen by commands in this sandbox."""
        return mount.target

    def resolve(self, path: str) -> str:
        """Sandbox path of `path` (relative paths are under `workdir`)."""
        p = PurePosixPath(path)
        return str(p if p.is_absolute() else PurePosixPath(self.workdir) / p)


def as_argv(cmd: list[str] | str) -> list[str]:
    if isinstance(cmd, str):
        # Not a login shell: bash -l would source /etc/profile, which resets PATH and hides
        # e.g. /opt/conda/bin of the PyTorch images.
        return ["bash", "-c", cmd]
    if not cmd:
        raise ValueError("empty command")
    return list(cmd)


def with_timeout(argv: list[str], timeout: float) -> list[str]:
    """`timeout -k` puts the command in its own process group and kills the whole group, so
    background children die with it."""
    return ["timeout", "-k", f"{KILL_GRACE_S:g}", f"{max(timeout, 0.1):g}", *argv]


def timed_out_from(exit_code: int, duration_s: float, timeout: float, oom_killed: bool) -> bool:
    """124 is `timeout`'s own verdict; 137 after the deadline is `timeout -k` having to
    SIGKILL a command that ignored SIGTERM."""
    if oom_killed:
        return False
    if exit_code == 124:
        return True
    return exit_code in (137, 143) and duration_s >= timeout


def describe(cmd: list[str] | str) -> str:
    return cmd if isinstance(cmd, str) else shlex.join(cmd)
