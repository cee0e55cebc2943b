"""Linux control groups: the process backend's pids/memory/cpu limits and freezer, the OOM-kill
counters both backends read to tell an OOM kill from any other SIGKILL, and where a container's
freezer is (a sweep freezes agent sandboxes while a judge times on their device:
scorer/gpu/freeze.py).

Works with cgroup v2 (one hierarchy with controllers) and v1 (one mount per controller). Where
no hierarchy is writable (not root, or /sys/fs/cgroup read-only inside a container) `create`
returns None and a reason, and the caller reports the limit as not enforced.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kernelarena.logs import get_logger

log = get_logger("kernelarena.sandbox")

CONTROLLERS = ("pids", "memory", "cpu", "freezer")  # freezer: a v1 controller, core in v2
PARENT = "kernelarena"


def read_oom_kills(path: Path) -> int | None:
    """The `oom_kill` counter of a memory.events (v2) or memory.oom_control (v1) file."""
    try:
        text = path.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return None


def docker_oom_file(container_id: str) -> Path | None:
    """Where the host sees a container's OOM counter, for the cgroupfs and systemd drivers
    on v1 and v2; None when the daemon's cgroups are not visible from this process."""
    root = Path("/sys/fs/cgroup")
    for candidate in (
        root / "memory" / "docker" / container_id / "memory.oom_control",
        root / "memory" / "system.slice" / f"docker-{container_id}.scope" / "memory.oom_control",
        root / "system.slice" / f"docker-{container_id}.scope" / "memory.events",
        root / "docker" / container_id / "memory.events",
    ):
        if read_oom_kills(candidate) is not None:
            return candidate
    return None


def docker_freezer_dir(container_id: str) -> Path | None:
    """The folder whose freezer (v2 cgroup.freeze, v1 freezer.state) stops a container, for the
    cgroupfs and systemd drivers; None when the daemon's cgroups are not visible from here."""
    root = Path("/sys/fs/cgroup")
    for candidate, name in (
        (root / "freezer" / "docker" / container_id, "freezer.state"),
        (root / "freezer" / "system.slice" / f"docker-{container_id}.scope", "freezer.state"),
        (root / "system.slice" / f"docker-{container_id}.scope", "cgroup.freeze"),
        (root / "docker" / container_id, "cgroup.freeze"),
    ):
        if (candidate / name).exists():
            return candidate
    return None


def _cgroup_mounts() -> tuple[Path | None, dict[str, Path]]:
    """(v2 mount with controllers, {controller: v1 mount})."""
    v2: Path | None = None
    v1: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None, {}
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        mountpoint, fstype, options = Path(parts[1]), parts[2], set(parts[3].split(","))
        if fstype == "cgroup2":
            try:
                # A hybrid host mounts a v2 tree holding few or no controllers; only one that
                # can limit pids is worth using.
                if "pids" in (mountpoint / "cgroup.controllers").read_text().split():
                    v2 = mountpoint
            except OSError:
                continue
        elif fstype == "cgroup":
            for ctrl in CONTROLLERS:
                if ctrl in options:
                    v1.setdefault(ctrl, mountpoint)
    return v2, v1


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


@dataclass
class Cgroup:
    """One sandbox's groups (one per v1 controller, or a single v2 group)."""

    version: int
    dirs: dict[str, Path]  # controller -> group folder (all the same folder on v2)
    limits: dict[str, str] = field(default_factory=dict)

    @property
    def procs_files(self) -> list[str]:
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    @property
    def freezer_dir(self) -> Path | None:
        """Where this group is frozen: the v2 group itself, or the v1 freezer group."""
        if self.version == 2:
            return next(iter(self.dirs.values()), None)
        return self.dirs.get("freezer")

    def join_self(self) -> None:
        """Move the calling process in; called in the child before exec."""
        pid = str(os.getpid())
        for procs in self.procs_files:
            _write(Path(procs), pid)

    def oom_kills(self) -> int | None:
        folder = self.dirs.get("memory")
        if folder is None:
            return None
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        return read_oom_kills(folder / name)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            try:
                found.update(int(p) for p in Path(procs).read_text().split())
            except OSError:
                continue
        return found

    def kill_all(self, attempts: int = 50) -> None:
        """SIGKILL everything inside, including processes that left the process group."""
        if self.version == 2:
            kill_file = next(iter(self.dirs.values())) / "cgroup.kill"
            if kill_file.exists():
                try:
                    _write(kill_file, "1")
                    return
                except OSError:
                    pass
        # A fork bomb can add processes while we kill; the pids limit bounds how many.
        for _ in range(attempts):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def wait_released(self, timeout_s: float = 3.0) -> bool:
        """Wait until the killed processes are reaped: until then they still count against
        pids.max, and the next command could not fork."""
        current = self.dirs["pids"] / "pids.current" if "pids" in self.dirs else None
        deadline = time.monotonic() + timeout_s
        while current is not None and time.monotonic() < deadline:
            try:
                if int(current.read_text().strip() or 0) == 0:
                    return True
            except (OSError, ValueError):
                return False
            time.sleep(0.01)
        return current is None

    def remove(self) -> None:
        self.kill_all()
        for folder in set(self.dirs.values()):
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    # Killed processes leave the group only once reaped.
                    time.sleep(0.02)
            else:
                log.warning("cgroup_not_removed", path=str(folder))


def create(name: str | None, *, pids: int, memory_bytes: int | None, cpus: float) -> tuple[Cgroup | None, str]:
    """A fresh group with the limits applied, or (None, why not)."""
    if os.geteuid() != 0:
        return None, "not root, so no cgroup can be created"
    name = name or f"sb-{uuid.uuid4().hex[:12]}"
    v2, v1 = _cgroup_mounts()
    try:
        if v2 is not None:
            return _create_v2(v2, name, pids, memory_bytes, cpus), ""
        if "pids" in v1:
            return _create_v1(v1, name, pids, memory_bytes, cpus), ""
    except OSError as exc:
        return None, f"cgroup not writable ({exc.strerror or exc})"
    return None, "no cgroup hierarchy with a pids controller is mounted"


def _create_v2(root: Path, name: str, pids: int, memory_bytes: int | None, cpus: float) -> Cgroup:
    parent = root / PARENT
    wanted = " ".join(f"+{c}" for c in CONTROLLERS if c in (root / "cgroup.controllers").read_text().split())
    _write(root / "cgroup.subtree_control", wanted)
    parent.mkdir(exist_ok=True)
    _write(parent / "cgroup.subtree_control", wanted)
    folder = parent / name
    folder.mkdir()
    group = Cgroup(2, {c: folder for c in CONTROLLERS if f"+{c}" in wanted.split()})
    try:
        _limit_v2(group, folder, pids, memory_bytes, cpus)
    except OSError:
        group.remove()
        raise
    return group


def _limit_v2(group: Cgroup, folder: Path, pids: int, memory_bytes: int | None, cpus: float) -> None:
    _write(folder / "pids.max", str(pids))
    group.limits["pids"] = str(pids)
    if memory_bytes and "memory" in group.dirs:
        _write(folder / "memory.max", str(memory_bytes))
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")
        group.limits["memory"] = str(memory_bytes)
    if "cpu" in group.dirs:
        period = 100_000
        _write(folder / "cpu.max", f"{int(cpus * period)} {period}")
        group.limits["cpus"] = f"{cpus:g}"


def _create_v1(mounts: dict[str, Path], name: str, pids: int, memory_bytes: int | None, cpus: float) -> Cgroup:
    dirs: dict[str, Path] = {}
    group = Cgroup(1, dirs)
    try:
        for ctrl, mount in mounts.items():
            if ctrl == "memory" and not memory_bytes:
                continue
            folder = mount / PARENT / name
            folder.mkdir(parents=True)
            dirs[ctrl] = folder
        _write(dirs["pids"] / "pids.max", str(pids))
        group.limits["pids"] = str(pids)
        if "memory" in dirs:
            _write(dirs["memory"] / "memory.limit_in_bytes", str(memory_bytes))
            memsw = dirs["memory"] / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                _write(memsw, str(memory_bytes))
            group.limits["memory"] = str(memory_bytes)
        if "cpu" in dirs:
            period = 100_000
            _write(dirs["cpu"] / "cpu.cfs_period_us", str(period))
            _write(dirs["cpu"] / "cpu.cfs_quota_us", str(int(cpus * period)))
            group.limits["cpus"] = f"{cpus:g}"
    except OSError:
        group.remove()
        raise
    return group
