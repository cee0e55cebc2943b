"""Length-prefixed frames between the judge and its workers, over dedicated pipe fds.

A frame is ``>IQ`` (header length, payload length), a UTF-8 JSON header, then an optional
payload written by ``torch.save``. The judge reads kernel-worker payloads only with
``torch.load(weights_only=True)``: a pickle from the kernel's process could run code in the judge.
Reads and writes take a deadline so a worker that stops reading or writing cannot hang the judge.
"""

from __future__ import annotations

import io
import json
import os
import select
import struct
import time
from dataclasses import dataclass
from typing import Any

import torch

_PREFIX = struct.Struct(">IQ")
MAX_HEADER_BYTES = 16 << 20
MAX_PAYLOAD_BYTES = 64 << 30
_CHUNK = 1 << 20


class ChannelClosed(Exception):
    """The other end closed its pipe (the worker died or exited)."""


class ChannelTimeout(Exception):
    """The deadline passed before a whole frame was read or written."""


class ProtocolViolation(Exception):
    """Bytes arrived that are not a valid frame (a kernel may have written into the channel)."""


@dataclass
class Frame:
    header: dict[str, Any]
    payload: Any = None


def encode_payload(obj: Any) -> memoryview:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getbuffer()


def decode_payload(data: bytes | bytearray | memoryview) -> Any:
    try:
        return torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as exc:  # any unpickling refusal means the sender broke the protocol
        raise ProtocolViolation(f"unreadable payload: {type(exc).__name__}: {exc}"[:500]) from None


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise ChannelTimeout("deadline passed")
    return left


def _read_exact(fd: int, n: int, deadline: float | None) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            ready, _, _ = select.select([fd], [], [], _remaining(deadline))
            if not ready:
                continue
        k = os.readv(fd, [view[got:got + _CHUNK * 16]])
        if k == 0:
            raise ChannelClosed("channel closed")
        got += k
    return buf


def _write_all(fd: int, data: bytes | memoryview, deadline: float | None) -> None:
    view = memoryview(data)
    sent = 0
    while sent < len(view):
        if deadline is not None:
            _, ready, _ = select.select([], [fd], [], _remaining(deadline))
            if not ready:
                continue
        try:
            sent += os.write(fd, view[sent:sent + _CHUNK])
        except BlockingIOError:
            continue
        except BrokenPipeError:
            raise ChannelClosed("channel closed") from None


def send_frame(fd: int, header: dict[str, Any], payload: Any = None, deadline: float | None = None) -> None:
    header_bytes = json.dumps(header).encode("utf-8")
    payload_bytes = encode_payload(payload) if payload is not None else memoryview(b"")
    _write_all(fd, _PREFIX.pack(len(header_bytes), len(payload_bytes)) + header_bytes, deadline)
    if payload_bytes:
        _write_all(fd, payload_bytes, deadline)


def recv_frame(fd: int, deadline: float | None = None) -> Frame:
    header_len, payload_len = _PREFIX.unpack(bytes(_read_exact(fd, _PREFIX.size, deadline)))
    if header_len > MAX_HEADER_BYTES or payload_len > MAX_PAYLOAD_BYTES:
        raise ProtocolViolation(f"frame too large (header {header_len} B, payload {payload_len} B)")
    raw = _read_exact(fd, header_len, deadline)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolViolation(f"bad frame header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolViolation("frame header is not a JSON object")
    payload = decode_payload(_read_exact(fd, payload_len, deadline)) if payload_len else None
    return Frame(header, payload)


def set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


_F_SETPIPE_SZ = 1031


def widen_pipe(fd: int, size: int = 1 << 20) -> None:
    """Larger pipe buffers cut syscalls 16x for tensor payloads; best effort (Linux only)."""
    try:
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)
    except (OSError, ImportError):
        pass
