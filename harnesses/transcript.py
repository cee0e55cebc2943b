"""transcript.jsonl: one JSON object a line, appended and flushed as each event happens.

Line format (schema ``TRANSCRIPT_VERSION``)::

    {"v": 1, "seq": 0, "ts": "2026-12-02T15:49:00.123456+00:00", "type": "trial_start", "payload": {...}}

The payload is nested rather than merged into the top level so a payload key can never collide
with ``type`` or ``seq``. Every string in a payload is redacted before it reaches the disk: the
values of secret-looking environment variables and key-shaped patterns (``sk-...``,
``Bearer ...``) become ``[REDACTED]``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

TRANSCRIPT_VERSION = 1
EVENT_TYPES = frozenset(
    {
        "trial_start",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "retry",
        "budget",
        "harness_event",
        "score",
        "error",
        "trial_end",
    }
)
REDACTED = "[REDACTED]"
SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
# Shorter values would redact ordinary words and digits everywhere ("1", "true"); no real
# credential is this short.
MIN_SECRET_LENGTH = 8
SECRET_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),  # OpenAI / Anthropic style keys
    re.compile(r"Bearer\s+[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE),
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),  # Google API keys
)


def secret_env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [
        value
        for name, value in env.items()
        if name.upper().endswith(SECRET_ENV_SUFFIXES) and len(value) >= MIN_SECRET_LENGTH
    ]


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: list[str] = []
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        merged = {*self._secrets, *(s for s in secrets if len(s) >= MIN_SECRET_LENGTH)}
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(merged, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        for pattern in SECRET_PATTERNS:
            value = pattern.sub(REDACTED, value)
        return value

    def value(self, obj: Any) -> Any:
        """A JSON-ready copy of ``obj`` with every string (keys included) redacted."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple, set, frozenset)):
            return [self.value(v) for v in obj]
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return self.value(dataclasses.asdict(obj))
        if hasattr(obj, "model_dump"):  # pydantic models
            return self.value(obj.model_dump(mode="json"))
        if isinstance(obj, Path):
            return self.text(str(obj))
        if obj is None or isinstance(obj, (bool, int, float)):
            return obj
        return self.text(repr(obj))


class Transcript:
    """Append-only event log. Safe to call from several asyncio tasks (and threads)."""

    def __init__(self, path: Path, *, extra_secrets: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.redactor = Redactor([*secret_env_values(), *extra_secrets])
        self._lock = threading.Lock()
        self._seq = 0
        self._fh: TextIO | None = self.path.open("a", encoding="utf-8")

    @property
    def next_seq(self) -> int:
        return self._seq

    def event(self, type: str, **payload: Any) -> dict[str, Any]:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown transcript event type {type!r}; one of {sorted(EVENT_TYPES)}")
        with self._lock:
            if self._fh is None:
                raise RuntimeError(f"transcript {self.path} is closed")
            record = {
                "v": TRANSCRIPT_VERSION,
                "seq": self._seq,
                "ts": datetime.now(UTC).isoformat(),
                "type": type,
                "payload": self.redactor.value(payload),
            }
            self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()
            self._seq += 1
            return record

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """Events of a transcript in file order; a torn last line (crash mid-write) is skipped."""
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
