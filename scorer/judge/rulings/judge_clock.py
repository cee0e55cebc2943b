"""The judge's own clock: a batch of back-to-back calls on secret seeds, verified by the reference
worker at secret positions (wrong rows: caching-memoization), timed by the judge; and the gaps
between the timed steps on the judge's clock (scorer/judge/clock.py)."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.clock import clock_findings, window_findings
from scorer.judge.registry import Check, Evidence, register


@register
class JudgeClock(Check):
    id = "judge-clock"
    layer = "judge"
    patterns = ("timer-patching", "caching-memoization")
    phases = ("clock",)
    what = "the batch's time and the timed steps' gaps on the judge's clock, the batch rows checked by the reference"

    def judge(self, evidence: Evidence) -> list[Finding]:
        kernel, clock = evidence.timing, evidence.clock
        if kernel is None or clock is None or evidence.result is None:
            return []
        times = evidence.result.kernel_times_ms
        # One figure of the judge's is enough: the window is read only where the batch passed.
        return clock_findings(times, clock, evidence.device) or window_findings(
            times, kernel.rep_intervals_ms, clock, evidence.device, kernel.rep_cpu_ms, kernel.availability)
