"""Bounded capture of a command's output stream.

The head and the tail are kept (an error is usually at the end, the command's context at the
start); the middle is replaced by a marker that gives the full byte count, so a reader knows
output was lost and how much.
"""

from __future__ import annotations

from collections.abc import Callable


class BoundedCapture:
    def __init__(self, limit_bytes: int, listener: Callable[[bytes], None] | None = None) -> None:
        self.limit = limit_bytes
        self.listener = listener
        """Called with every chunk as it arrives, whole, before any truncation."""
        self.head_limit = limit_bytes // 2
        self.tail_limit = limit_bytes - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        if self.listener is not None:
            self.listener(chunk)
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def bytes(self) -> bytes:
        return bytes(self.head) + bytes(self.tail)

    def text(self) -> str:
        if not self.truncated:
            return self.bytes().decode("utf-8", errors="replace")
        omitted = self.total - len(self.head) - len(self.tail)
        marker = (
            f"\n[... kernelarena: output truncated: {self.total} bytes in all, "
            f"{omitted} bytes omitted here ...]\n"
        )
        return (
            self.head.decode("utf-8", errors="replace")
            + marker
            + self.tail.decode("utf-8", errors="replace")
        )
