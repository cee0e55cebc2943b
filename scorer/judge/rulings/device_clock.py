"""The device-timed batch (GPU): calls enqueued behind a gate the reference worker opens after its
own start event, on inputs it copies in after that event, timed by its device events; the rows are
checked by the reference as in the judge-clocked batch (scorer/judge/clock.py, scorer/gpu/release_gate.py)."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.clock import device_findings
from scorer.judge.registry import Check, Evidence, register


@register
class DeviceClock(Check):
    id = "device-clock"
    layer = "judge"
    patterns = ("timer-patching", "caching-memoization")
    phases = ("clock",)
    what = "calls enqueued behind a gate, timed by the reference worker's device events from before their inputs existed"

    def judge(self, evidence: Evidence) -> list[Finding]:
        if evidence.device_span is None or evidence.result is None:
            return []
        return device_findings(evidence.result.kernel_times_ms, evidence.device_span)
