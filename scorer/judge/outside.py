"""Facts about the kernel's process read from outside it, in the host's /proc: nothing here
travels through the kernel's channel, so the kernel cannot forge or scrub it.

The channel: the judge's two pipes to the kernel's worker must stay at the descriptor numbers the
worker held them at before kernel.py was imported, and no other descriptor of any process of the
worker's tree may point at them. A kernel that answers the judge itself, relays the replies through
a pipe of its own (to scrub or rewrite them), or hands the channel to a helper process must move
one of those descriptors, and is seen at the next message.

Processes: while the kernel is timed, a process of its own beside the timed loop (a helper that
works while the clock runs, or finishes the work after it stops) is read from the same /proc.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

_MOVED = "the kernel's process moved its channel to the judge"
_SETTLE_S = 0.05


def _links(pid: int) -> dict[int, str]:
    """Descriptor number -> link target of one process (missing ones skipped: they close as read)."""
    out = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(name)] = os.readlink(f"/proc/{pid}/fd/{name}")
        except (OSError, ValueError):
            continue
    return out


def tree(pid: int) -> list[int]:
    """`pid` and every process below it (threads' children included)."""
    seen, todo = [], [pid]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        try:
            for tid in os.listdir(f"/proc/{current}/task"):
                todo.extend(int(c) for c in Path(f"/proc/{current}/task/{tid}/children").read_text().split())
        except OSError:
            continue
    return seen


@dataclass
class ChannelWatch:
    """Arm it while the worker is still the scorer's alone (after setup, before load)."""
    pid: int  # the process that runs the kernel
    judge_ends: tuple[int, int]  # the judge's ends of the request and reply pipes
    numbers: dict[int, str] = field(default_factory=dict)  # the worker's channel descriptors
    readable: bool = False

    def _targets(self) -> set[str]:
        return {f"pipe:[{os.fstat(fd).st_ino}]" for fd in self.judge_ends}

    def arm(self) -> None:
        targets = self._targets()
        try:
            links = _links(self.pid)
        except OSError:
            return  # a judge that may not read the worker's descriptors: unverified, said in isolation
        self.numbers = {fd: link for fd, link in links.items() if link in targets}
        self.readable = sorted(self.numbers.values()) == sorted(targets)

    def violation(self) -> str | None:
        """What is wrong with the channel now, or None. Another process found holding it is read
        again a moment later: a child between fork and exec (a compiler the kernel's toolchain
        starts) holds the channel until exec closes it, a relay keeps it."""
        found = self._violation()
        if found is not None and not found.startswith(_MOVED):
            time.sleep(_SETTLE_S)
            found = self._violation()
        return found

    def _violation(self) -> str | None:
        if not self.readable:
            return None
        targets = self._targets()
        for pid in tree(self.pid):
            try:
                links = _links(pid)
            except OSError:
                continue  # ended while read
            if pid == self.pid:
                moved = [fd for fd, link in self.numbers.items() if links.get(fd) != link]
                if moved:
                    return (f"{_MOVED}: descriptor(s) {moved} no longer "
                            f"hold the judge's pipes ({', '.join(str(links.get(fd)) for fd in moved)})")
            extra = [fd for fd, link in links.items() if link in targets and (pid != self.pid or fd not in self.numbers)]
            if extra:
                return (f"process {pid} of the kernel's worker holds the judge's channel at descriptor(s) {extra} "
                        "beside the worker's own: the channel is being relayed")
        return None


def processes_beside(pid: int) -> list[str]:
    """The processes of the worker's tree other than the kernel's own, as "pid (name)"."""
    out = []
    for other in tree(pid)[1:]:
        try:
            name = Path(f"/proc/{other}/comm").read_text().strip()
        except OSError:
            continue  # ended while read
        out.append(f"{other} ({name})")
    return out
