"""Cutting long text (tool output, transcript fields, terminal panels) to a limit."""

from __future__ import annotations


def truncate(text: str, limit: int, *, note: str = "") -> str:
    """`text` cut in the middle to `limit` characters plus a marker saying how much went (and
    `note`); unchanged when it fits or `limit` is 0 or less. Both ends stay: the start shows what
    ran, the end how it finished (tracebacks)."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters truncated{note} ...]\n{text[-tail:]}"
