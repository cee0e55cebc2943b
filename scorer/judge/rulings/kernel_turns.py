"""harness-introspection, ruled in the judge on what the kernel's turns observed in its worker
(replies.TurnObservation, scorer/checks/turns.py): code of the kernel's that ran while it was the
scorer's turn (drawing inputs, copying and checking outputs, the flush, the batch), where its work
is neither timed nor watched."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, Evidence, register
from scorer.workers.replies import TurnObservation


@register
class KernelTurns(Check):
    id = "kernel-turns"
    layer = "in-process"
    phases = ("correctness", "timing", "batch")
    patterns = ("harness-introspection",)
    what = ("calls into the kernel's code during the scorer's own steps, observed in the worker "
            "(scorer/checks/turns.py), ruled in the judge")

    def judge(self, evidence: Evidence) -> list[Finding]:
        return [f for seen in evidence.observed for f in turn_findings(seen.turns)]


def turn_findings(turns: list[TurnObservation]) -> list[Finding]:
    if not turns:
        return []
    seen = "; ".join(f"{t.what} during {t.step}" for t in turns)
    return [Finding("harness-introspection",
                    f"the kernel's code ran in the scorer's own steps, outside forward: {seen}. Work done "
                    "there (while the scorer draws inputs, copies outputs or flushes the cache) is neither "
                    "timed nor watched: a patched task module, torch function, tensor method or finaliser "
                    "runs the kernel's code there")]
