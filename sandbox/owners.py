"""Who owns a temporary folder, so that the next run can remove one whose owner died without
cleaning up (SIGKILL, a lost Ray node): the owner's pid with its start time, since pids are reused."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def process_identity(pid: int) -> str:
    """'pid start-time' (field 22 of /proc/PID/stat); '' for no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"


def owner_alive(identity: str) -> bool:
    """Whether the process an identity names still runs (the same process, not a reuse of its pid)."""
    try:
        return bool(identity) and process_identity(int(identity.split()[0])) == identity
    except ValueError:
        return False


def owned_tempdir(prefix: str) -> Path:
    """A fresh folder in the temp dir whose name carries this process's identity."""
    pid, start = process_identity(os.getpid()).split()
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{pid}_{start}-"))


def remove_orphaned_tempdirs(prefix: str) -> list[Path]:
    """Removes the folders `owned_tempdir(prefix)` made for processes that are gone."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*_*-*"):
        owner = folder.name[len(prefix):].split("-", 1)[0].replace("_", " ")
        if folder.is_symlink() or owner_alive(owner):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
