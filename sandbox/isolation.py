"""What the process backend does in the child between fork and exec: join the cgroup, leave
the host's network namespace, set resource limits, drop root. Plus the one-time probes that
find out which of these this host allows, so the sandbox can say plainly what it enforces.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
#: Unprivileged uid/gid the process backend drops to when it runs as root.
NOBODY = 65534

# Looked up before any fork: resolving a symbol in the child could take the loader's lock.
_libc = ctypes.CDLL(None, use_errno=True)
_unshare = _libc.unshare


def _unshare_or_raise(flags: int) -> None:
    if _unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


@dataclass
class ChildSetup:
    """Runs in the forked child (preexec_fn); keeps to system calls, no locks or logging."""

    cgroup_procs: list[str] = field(default_factory=list)
    netns: str | None = None  # None, "root" (plain CLONE_NEWNET) or "userns" (unprivileged)
    rlimits: dict[int, int] = field(default_factory=dict)
    uid: int | None = None
    gid: int | None = None

    def __call__(self) -> None:
        pid = str(os.getpid())
        for procs in self.cgroup_procs:
            _write(procs, pid)
        if self.netns == "root":
            _unshare_or_raise(CLONE_NEWNET)
        elif self.netns == "userns":
            uid, gid = os.getuid(), os.getgid()
            _unshare_or_raise(CLONE_NEWUSER | CLONE_NEWNET)
            # Map ourselves to ourselves, or files we create would belong to nobody.
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
        for res, value in self.rlimits.items():
            resource.setrlimit(res, (value, value))
        if self.uid is not None:
            os.setgroups([])
            os.setgid(self.gid if self.gid is not None else self.uid)
            os.setuid(self.uid)


def _probe(setup: ChildSetup, argv: list[str]) -> str:
    """'' when `argv` runs under `setup`, else why not."""
    try:
        proc = subprocess.run(argv, preexec_fn=setup, capture_output=True, timeout=30, cwd="/")
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()
        return f"exit {proc.returncode}: {tail[-1] if tail else ''}".strip()
    return ""


@lru_cache(maxsize=1)
def network_isolation() -> tuple[str | None, str]:
    """(netns mode that works here, reason when none does)."""
    if os.geteuid() == 0:
        why = _probe(ChildSetup(netns="root"), ["true"])
        if not why:
            return "root", ""
    else:
        why = ""
    why_user = _probe(ChildSetup(netns="userns"), ["true"])
    if not why_user:
        return "userns", ""
    reasons = "; ".join(r for r in (why and f"unshare(CLONE_NEWNET): {why}", f"user namespace: {why_user}") if r)
    return None, f"the kernel refused a new network namespace ({reasons})"


@lru_cache(maxsize=1)
def unprivileged_user() -> tuple[int | None, str]:
    """(uid to drop to, reason when root must be kept). Only asked when running as root: the
    interpreter must be usable by that uid (it is not when it lives under a 0700 /root)."""
    if os.geteuid() != 0:
        return None, ""
    why = _probe(ChildSetup(uid=NOBODY, gid=NOBODY), [sys.executable, "-c", "import sys"])
    if not why:
        return NOBODY, ""
    return None, f"uid {NOBODY} cannot run {sys.executable} ({why}); commands run as root"


def user_task_count(uid: int) -> int:
    """Threads of `uid` alive now: RLIMIT_NPROC counts them all, not only the sandbox's."""
    count = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid == uid:
                count += sum(1 for _ in (proc / "task").iterdir())
        except OSError:
            continue
    return count
