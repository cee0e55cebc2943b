"""timer-patching, ruled in the judge on the timing hold's label the kernel's worker reports (the
time reply's `gate`, scorer/gpu/gate.py): every program of the GPU-wide hold before each start event
writes the SM it ran on, and a hold with a program missing leaves the timed window open to work
queued beside it."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.gpu.timing import HOLD_INCOMPLETE
from scorer.judge.registry import Check, Evidence, register


@register
class GpuHold(Check):
    id = "gpu-hold"
    layer = "in-process"
    phases = ("timing",)
    patterns = ("timer-patching",)
    what = "the GPU-wide hold before each start event ran in full (scorer/gpu/gate.py), ruled in the judge on its label"

    def judge(self, evidence: Evidence) -> list[Finding]:
        return [f for seen in evidence.observed if seen.gate is not None for f in hold_findings(seen.gate)]


def hold_findings(gate: str) -> list[Finding]:
    if HOLD_INCOMPLETE not in gate:
        return []
    return [Finding("timer-patching", f"the GPU-wide hold before each start event did not run in full ({gate})")]
