"""Processes of the kernel's worker beside its timed loop, read from /proc at every timed step
(scorer/judge/outside.py); ruled in the timed stage itself."""

from __future__ import annotations

from scorer.judge.registry import Check, register


@register
class Processes(Check):
    id = "processes"
    layer = "outside"
    patterns = ("thread-injection",)
    what = "the worker's process tree, from /proc in the host's namespace, at every timed step"
