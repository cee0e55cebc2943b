"""Exclusive timing during a sweep: while a judge times on a device, the agent sandboxes of the
sweep that use that device are frozen (the cgroup freezer, what `docker pause` uses), and thawed
when the timed section ends.

The judge runs in an unprivileged scoring sandbox and cannot write a cgroup; the sweep's
orchestrator (root, or the owner of the sandboxes' cgroups) can. So the orchestrator runs a
`FreezeServer`: a unix socket in `<lock dir>/freezers/` beside the GPU lock files, and a
registry `<lock dir>/agents/<sandbox>.json` naming each agent sandbox's freezer cgroup and the
devices it uses. A judge that takes a device's exclusive lock side (`scorer.gpu.lock.hold_gpu`)
asks every live server to freeze what uses that device (`exclusive`) and to thaw it after.

The freeze is bounded three ways, so no crash leaves a sandbox frozen:
- the judge's connection: when it closes (the judge ended, crashed or was SIGKILLed) the
  server thaws at once;
- a lease: each freeze has a deadline (at most `MAX_LEASE_S`), written to `<lock dir>/leases/`;
  the server thaws at the deadline even while the judge keeps the connection open, and any
  server on the host thaws the expired leases of another (or of one that died) within a second;
- the orchestrator: unregistering a sandbox at the trial's end thaws it first.

Each registered sandbox's freezes are appended to `<sandbox>.frozen` (`F t` / `T t`, on the
host-wide monotonic clock), so the agent's wall-time budget leaves frozen time out
(`frozen_seconds`). Only the standard library is used: the scorer imports nothing else.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AGENTS = "agents"
FREEZERS = "freezers"
LEASES = "leases"
ALL_DEVICES = "*"
CPU_DEVICE = "cpu"
MAX_LEASE_S = 600.0
# How long a freeze may take to settle (tasks in uninterruptible sleep freeze late) before the
# server reports it as incomplete; the timing goes on either way, and detection notes the rest.
_SETTLE_S = 1.0
_CONNECT_S = 2.0
_REAP_EVERY_S = 0.5
_STATS = threading.local()


# --- the freezer of one cgroup (v2 cgroup.freeze, v1 freezer.state) ------------------------------
def freezer_file(cgroup_dir: Path) -> Path | None:
    for name in ("cgroup.freeze", "freezer.state"):
        if (cgroup_dir / name).exists():
            return cgroup_dir / name
    return None


def is_frozen(cgroup_dir: Path) -> bool:
    path = freezer_file(Path(cgroup_dir))
    if path is None:
        return False
    try:
        if path.name == "freezer.state":
            return path.read_text().strip() == "FROZEN"
        events = (path.parent / "cgroup.events").read_text().split()
        return "frozen" in events and events[events.index("frozen") + 1] == "1"
    except (OSError, IndexError):
        return False


def set_frozen(cgroup_dir: Path, frozen: bool, settle_s: float = _SETTLE_S) -> bool:
    """Freeze or thaw; True once the group reports that state (a thaw is immediate)."""
    path = freezer_file(Path(cgroup_dir))
    if path is None:
        return False
    if path.name == "freezer.state":
        value = "FROZEN" if frozen else "THAWED"
    else:
        value = "1" if frozen else "0"
    with open(path, "w") as fh:
        fh.write(value)
    deadline = time.monotonic() + settle_s
    while is_frozen(Path(cgroup_dir)) != frozen:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


# --- the registry ---------------------------------------------------------------------------------
def frozen_seconds(log: Path | str, since: float | None = None, until: float | None = None) -> float:
    """Seconds a sandbox was frozen between `since` and `until` (monotonic; now when None), from
    its freeze log (a path, or the log's text); a freeze still in force counts up to `until`."""
    until = time.monotonic() if until is None else until
    total, start = 0.0, None
    try:
        text = log if isinstance(log, str) else Path(log).read_text()
    except OSError:
        return 0.0
    for line in text.splitlines():
        kind, _, stamp = line.partition(" ")
        try:
            t = float(stamp)
        except ValueError:
            continue
        if kind == "F" and start is None:
            start = t
        elif kind == "T" and start is not None:
            total += _overlap(start, t, since, until)
            start = None
    if start is not None:
        total += _overlap(start, until, since, until)
    return total


def _overlap(a: float, b: float, since: float | None, until: float) -> float:
    lo = a if since is None else max(a, since)
    return max(0.0, min(b, until) - lo)


@dataclass
class Registration:
    """One agent sandbox under a server: its freezer cgroup and the devices it uses."""

    sandbox: str
    cgroup: Path
    devices: list[str]
    entry: Path
    log: Path
    trial: str = ""
    final_log: str | None = None  # the log's text once unregistered (the file is gone)

    def frozen_s(self, since: float | None = None, until: float | None = None) -> float:
        return frozen_seconds(self.log if self.final_log is None else self.final_log, since, until)

    def uses(self, device: str) -> bool:
        return ALL_DEVICES in self.devices or device in self.devices


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


# --- the server (the orchestrator's side) ---------------------------------------------------------
class FreezeServer:
    """Freezes this process's registered agent sandboxes for the judges that ask. Threads: one
    accepting, one per judge connection, one reaping expired leases."""

    def __init__(self, lock_dir: Path) -> None:
        self.lock_dir = Path(lock_dir)
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.socket_path = self.lock_dir / FREEZERS / f"{self.id}.sock"
        self._registered: dict[str, Registration] = {}
        self._refs: dict[str, int] = {}
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self.sections = 0  # freezes served (for the benchmark and the log)

    def start(self) -> FreezeServer:
        for sub in (AGENTS, FREEZERS, LEASES):
            (self.lock_dir / sub).mkdir(parents=True, exist_ok=True)
            os.chmod(self.lock_dir / sub, 0o1777)
        reap_leases(self.lock_dir, everyone=True)  # what a crashed server left frozen
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o666)  # judges run as other users (uid 1000 in docker, nobody)
        sock.listen(64)
        sock.settimeout(0.2)
        self._sock = sock
        for target in (self._accept_loop, self._reap_loop):
            thread = threading.Thread(target=target, name=f"freeze-{target.__name__}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        if self._sock is not None:
            self._sock.close()
        self.socket_path.unlink(missing_ok=True)
        for reg in list(self._registered.values()):
            self.unregister(reg)
        reap_leases(self.lock_dir, owner=self.id, everyone=False, force=True)

    def __enter__(self) -> FreezeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # registry
    def register(self, sandbox: str, cgroup: Path, devices: list[str], trial: str = "") -> Registration:
        entry = self.lock_dir / AGENTS / f"{sandbox}.json"
        reg = Registration(sandbox, Path(cgroup), list(devices), entry, entry.with_suffix(".frozen"), trial)
        reg.log.write_text("")
        _write_json(entry, {"sandbox": sandbox, "cgroup": str(cgroup), "devices": reg.devices, "trial": trial,
                            "server": self.id, "pid": os.getpid()})
        with self._mutex:
            self._registered[sandbox] = reg
        return reg

    def unregister(self, reg: Registration) -> float:
        """Thaws the sandbox if it is frozen, forgets it; returns the seconds it spent frozen."""
        with self._mutex:
            self._registered.pop(reg.sandbox, None)
            if self._refs.pop(reg.sandbox, 0):
                self._thaw(reg)
        try:
            reg.final_log = reg.log.read_text()
        except OSError:
            reg.final_log = ""
        frozen = reg.frozen_s()
        reg.entry.unlink(missing_ok=True)
        reg.log.unlink(missing_ok=True)
        return frozen

    # freezing
    def freeze(self, device: str) -> tuple[list[Registration], dict[str, str]]:
        frozen: list[Registration] = []
        failed: dict[str, str] = {}
        with self._mutex:
            for reg in self._registered.values():
                if not reg.uses(device):
                    continue
                if self._refs.get(reg.sandbox, 0) == 0:
                    try:
                        with open(reg.log, "a") as fh:
                            fh.write(f"F {time.monotonic()}\n")
                        if not set_frozen(reg.cgroup, True):
                            failed[reg.sandbox] = "did not settle frozen within 1 s"
                    except OSError as exc:
                        failed[reg.sandbox] = f"cannot freeze {reg.cgroup}: {exc.strerror or exc}"
                        self._thaw(reg)
                        continue
                self._refs[reg.sandbox] = self._refs.get(reg.sandbox, 0) + 1
                frozen.append(reg)
        self.sections += 1
        return frozen, failed

    def thaw(self, regs: list[Registration]) -> None:
        with self._mutex:
            for reg in regs:
                if reg.sandbox not in self._registered:
                    continue  # unregistered meanwhile: thawed then, its log is gone
                refs = self._refs.get(reg.sandbox, 0) - 1
                if refs > 0:
                    self._refs[reg.sandbox] = refs
                    continue
                self._refs.pop(reg.sandbox, None)
                self._thaw(reg)

    def _thaw(self, reg: Registration) -> None:
        try:
            set_frozen(reg.cgroup, False)
        except OSError:
            pass  # a removed cgroup: its sandbox is gone
        try:
            with open(reg.log, "a") as fh:
                fh.write(f"T {time.monotonic()}\n")
        except OSError:
            pass

    # threads
    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="freeze-judge", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(_CONNECT_S)
            try:
                request = json.loads(_read_line(conn))
                device = str(request["device"])
                lease_s = min(float(request.get("lease_s", MAX_LEASE_S)), MAX_LEASE_S)
            except (OSError, ValueError, KeyError, TypeError):
                return
            started = time.monotonic()
            # The lease first: a server that dies mid-freeze leaves it for another to thaw.
            lease = self.lock_dir / LEASES / f"{self.id}-{uuid.uuid4().hex[:8]}.json"
            with self._mutex:
                candidates = [str(r.cgroup) for r in self._registered.values() if r.uses(device)]
            if candidates:
                _write_json(lease, {"server": self.id, "pid": os.getpid(), "device": device,
                                    "deadline": time.time() + lease_s, "cgroups": candidates})
            regs, failed = self.freeze(device)
            try:
                try:
                    _send(conn, {"frozen": [r.sandbox for r in regs], "failed": failed})
                    # Whatever comes next ends the freeze: "thaw", end of file (the judge ended or
                    # died), or the lease's deadline.
                    conn.settimeout(max(0.0, lease_s - (time.monotonic() - started)))
                    conn.recv(64)
                except OSError:
                    pass
            finally:
                self.thaw(regs)
                lease.unlink(missing_ok=True)
            try:
                _send(conn, {"thawed": [r.sandbox for r in regs]})
            except OSError:
                pass

    def _reap_loop(self) -> None:
        while not self._stop.wait(_REAP_EVERY_S):
            reap_leases(self.lock_dir, everyone=True)


def reap_leases(lock_dir: Path, *, owner: str | None = None, everyone: bool = True, force: bool = False) -> int:
    """Thaws the cgroups of leases past their deadline or whose server process is gone (all of
    `owner`'s with `force`); returns how many leases it ended. Any server may do it for another:
    whoever sees a lease expired thaws it."""
    ended = 0
    folder = Path(lock_dir) / LEASES
    try:
        leases = list(folder.glob("*.json"))
    except OSError:
        return 0
    for path in leases:
        try:
            lease = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        mine = owner is not None and lease.get("server") == owner
        expired = time.time() > float(lease.get("deadline", 0)) or not _pid_alive(int(lease.get("pid", 0)))
        if not ((force and mine) or (everyone and expired)):
            continue
        for cgroup in lease.get("cgroups", []):
            try:
                set_frozen(Path(cgroup), False)
            except OSError:
                pass
        path.unlink(missing_ok=True)
        ended += 1
    return ended


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall((json.dumps(message) + "\n").encode())


def _read_line(conn: socket.socket, limit: int = 1 << 16) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            raise ValueError("line too long")
    return data.decode()


# --- the judge's side -----------------------------------------------------------------------------
@dataclass
class FreezeReport:
    """What one timed section froze: sandboxes frozen, those that could not be."""

    frozen: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def stats() -> dict[str, Any]:
    """This thread's freezes so far, summed over timed sections (a scoring reports its share):
    sections that froze something, sandboxes frozen, sandboxes that could not be, seconds."""
    return dict(getattr(_STATS, "totals", None) or {"sections": 0, "sandboxes": 0, "failed": 0, "seconds": 0.0})


def _count(report: FreezeReport, seconds: float) -> None:
    totals = stats()
    totals["sections"] += 1
    totals["sandboxes"] += len(report.frozen)
    totals["failed"] += len(report.failed)
    totals["seconds"] = round(totals["seconds"] + seconds, 4)
    _STATS.totals = totals


@contextmanager
def exclusive(lock_dir: Path, device: str, lease_s: float = 300.0) -> Iterator[FreezeReport]:
    """While the block runs, every live server on this host keeps the agent sandboxes that use
    `device` frozen. Without a server (no sweep, or one that does not freeze) it does nothing."""
    report = FreezeReport()
    conns: list[socket.socket] = []
    try:
        sockets = sorted((Path(lock_dir) / FREEZERS).glob("*.sock"))
    except OSError:
        sockets = []
    held = time.monotonic()
    try:
        for path in sockets:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(_CONNECT_S)
            try:
                conn.connect(str(path))
                _send(conn, {"device": device, "lease_s": lease_s, "pid": os.getpid()})
                reply = json.loads(_read_line(conn))
            except (OSError, ValueError):
                conn.close()  # a server that died left its socket; it freezes nothing
                continue
            conns.append(conn)
            report.frozen += list(reply.get("frozen", []))
            report.failed.update(dict(reply.get("failed", {})))
        held = time.monotonic()
        yield report
    finally:
        for conn in conns:
            try:
                conn.sendall(b"thaw\n")
                conn.settimeout(_CONNECT_S)
                _read_line(conn)  # thawed before the next section's work starts
            except OSError:
                pass
            finally:
                conn.close()
        if report.frozen or report.failed:
            _count(report, time.monotonic() - held)
