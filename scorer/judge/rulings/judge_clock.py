"""The judge's own clock: a batch of back-to-back calls on secret seeds, verified by the reference
worker at secret positions (wrong rows: caching-memoization), timed by the judge, and on a CPU the
kernel thread's CPU time over it (scorer/judge/clock.py)."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.clock import clock_findings
from scorer.judge.registry import Check, Evidence, register


@register
class JudgeClock(Check):
    id = "judge-clock"
    layer = "judge"
    patterns = ("timer-patching", "caching-memoization")
    phases = ("clock",)
    what = "the batch's time on the judge's clock (and its CPU time, on a CPU), the batch rows checked by the reference"

    def judge(self, evidence: Evidence) -> list[Finding]:
        if evidence.clock is None or evidence.result is None:
            return []
        return clock_findings(evidence.result.kernel_times_ms, evidence.clock, evidence.device)
