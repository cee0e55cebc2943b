"""The channel to the judge, read from /proc after every message (scorer/judge/outside.py): the
worker's descriptors still hold the judge's pipes, and no other process holds them. Ruled as each
message arrives (a violation ends the scoring)."""

from __future__ import annotations

from scorer.judge.registry import Check, register


@register
class Channel(Check):
    id = "channel"
    layer = "outside"
    patterns = ("protocol-violation",)
    what = "the worker tree's descriptors, from /proc in the host's namespace, after every message"
