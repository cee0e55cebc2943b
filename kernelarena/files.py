"""Atomic file writes: a reader sees the old file or the whole new one, never a torn one.

The scorer keeps its own two (`scorer/score.py`, `scorer/workers/protocol.py`) because it runs
with torch and the standard library alone and never imports this package.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def replacing(path: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A file handle to write `path`'s new content into; on a clean exit it replaces `path` in
    one rename, on an error it is removed and `path` is untouched. No fsync: a killed process
    cannot tear a renamed file, and everything written this way can be rebuilt."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        fh: IO[Any] = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")
        with fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: bytes | str) -> None:
    with replacing(path, binary=isinstance(data, bytes)) as fh:
        fh.write(data)


def write_json_atomic(path: Path, data: Any, indent: int | None = 1) -> None:
    with replacing(path) as fh:
        json.dump(data, fh, indent=indent)
