"""Rules on the kernel's own timing figures (device events, host clock, drains, the hold), applied in
the judge: in-process evidence, since the figures come from the kernel's process; the judge's clock
(judge_clock.py) bounds them from outside."""

from __future__ import annotations

from scorer.checks import dynamic as dynamic_checks
from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, Evidence, register


@register
class ReportedTiming(Check):
    id = "reported-timing"
    layer = "in-process"
    patterns = ("stream-injection", "timer-patching")
    phases = ("timing",)
    what = "the events, host clock, drains and hold the kernel's worker measured per repetition"

    def judge(self, evidence: Evidence) -> list[Finding]:
        kernel = evidence.timing
        if kernel is None or kernel.event_times_ms is None:
            return []
        figures = (kernel.event_times_ms, kernel.host_times_ms, kernel.drain_ms, kernel.idle_drain_ms,
                   kernel.gate_ms, kernel.rep_waited_ms)
        judged = dynamic_checks.timing_findings(*figures, host_rule=not kernel.contended)
        if kernel.contended:
            # Both timings ran beside foreign compute on the device: the host clock also ran while
            # the GPU served the other process (on an H100, an honest swish's 2.65 ms on the host
            # against 0.093 ms of events), so its excess is not the kernel's. Kept as evidence;
            # the events, the drain and the hold are still judged, and the board shows the flag.
            unjudged = [f for f in dynamic_checks.timing_findings(*figures) if f not in judged]
            evidence.contention["host_rule"] = ("not judged: " + unjudged[0].evidence) if unjudged else "not judged"
        return judged
