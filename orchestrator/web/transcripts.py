"""Paged reading of a trial's `transcript.jsonl` for the browser.

A transcript of 10,000 events is tens of MB; the viewer asks for it in pages. One pass over the
file records each line's byte offset and event type (read from the line's head: the writer puts
`v, seq, ts, type` before the payload), cached by the file's (mtime, size), so a page costs one
seek and the JSON parse of its own lines only. A transcript still being written grows: its stamp
changes and the offsets are taken again. A torn last line (a crash mid-write) is skipped, as
`harnesses.transcript.read_events` does.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

PAGE_MAX = 1000
_TYPE = re.compile(rb'"type":\s*"([a-z_]+)"')
_TS = re.compile(rb'"ts":\s*"([^"]+)"')
HEAD_BYTES = 200


@dataclass(frozen=True)
class LineIndex:
    stamp: tuple[int, int]
    offsets: list[tuple[int, int]]
    """(start, length) of each complete event line."""
    types: list[str]
    first_ts: str | None
    last_ts: str | None
    tokens: tuple[int, int] = (0, 0)
    """Input and output tokens of the model responses' usage: what a running trial has spent so far
    (the ledger's row has its tokens only once the trial ends)."""


def _seconds(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


def build_index(path: Path) -> LineIndex:
    st = path.stat()
    data = path.read_bytes()
    offsets: list[tuple[int, int]] = []
    types: list[str] = []
    pos = 0
    end = len(data)
    tokens_in = tokens_out = 0
    while pos < end:
        nl = data.find(b"\n", pos)
        if nl < 0:
            nl = end
        line_len = nl - pos
        if line_len and (nl < end or _complete(data[pos:nl])):
            head = data[pos:pos + HEAD_BYTES]
            found = _TYPE.search(head)
            if found is None:  # an unusual key order: parse the whole line
                found_type = _parse(data[pos:nl]).get("type")
                kind = str(found_type) if found_type else "unknown"
            else:
                kind = found.group(1).decode()
            offsets.append((pos, line_len))
            types.append(kind)
            if kind == "model_response":
                usage = (_parse(data[pos:nl]).get("payload") or {}).get("usage") or {}
                tokens_in += int(usage.get("input_tokens") or 0)
                tokens_out += int(usage.get("output_tokens") or 0)
        pos = nl + 1
    first = _TS.search(data[offsets[0][0]:offsets[0][0] + HEAD_BYTES]) if offsets else None
    last = _TS.search(data[offsets[-1][0]:offsets[-1][0] + HEAD_BYTES]) if offsets else None
    return LineIndex(stamp=(st.st_mtime_ns, st.st_size), offsets=offsets, types=types,
                     first_ts=first.group(1).decode() if first else None,
                     last_ts=last.group(1).decode() if last else None, tokens=(tokens_in, tokens_out))


def _complete(line: bytes) -> bool:
    """A last line without its newline is complete only if it parses (else it is torn)."""
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _parse(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class TranscriptPager:
    """Caches one line index per transcript path (bounded: the most recent `keep`)."""

    def __init__(self, keep: int = 32) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._indexes: dict[Path, LineIndex] = {}

    def index(self, path: Path) -> LineIndex:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._indexes.get(path)
        if cached is not None and cached.stamp == stamp:
            return cached
        built = build_index(path)
        with self._lock:
            self._indexes[path] = built
            while len(self._indexes) > self.keep:
                self._indexes.pop(next(iter(self._indexes)))
        return built

    def summary(self, path: Path) -> dict[str, Any]:
        idx = self.index(path)
        start, end = _seconds(idx.first_ts), _seconds(idx.last_ts)
        return {"total": len(idx.offsets), "counts": dict(Counter(idx.types)), "first_ts": idx.first_ts,
                "last_ts": idx.last_ts, "duration_s": None if start is None or end is None else end - start,
                "ended": bool(idx.types) and idx.types[-1] == "trial_end",
                "input_tokens": idx.tokens[0], "output_tokens": idx.tokens[1]}

    def page(self, path: Path, offset: int, limit: int, types: set[str] | None = None) -> dict[str, Any]:
        """Events `offset..offset+limit` of the (optionally type-filtered) sequence; each event
        carries its position `i` in the whole transcript."""
        idx = self.index(path)
        limit = max(1, min(limit, PAGE_MAX))
        positions = range(len(idx.offsets)) if not types else [i for i, t in enumerate(idx.types) if t in types]
        chosen = positions[offset:offset + limit] if offset >= 0 else []
        events = []
        with path.open("rb") as fh:
            for i in chosen:
                start, length = idx.offsets[i]
                fh.seek(start)
                event = _parse(fh.read(length))
                event["i"] = i
                events.append(event)
        return {"total": len(positions), "offset": offset, "events": events}
