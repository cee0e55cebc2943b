"""A kernel faster than the roofline floor of its task's FLOPs and bytes on this device: a flag."""

from __future__ import annotations

from scorer.checks import dynamic as dynamic_checks
from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, Evidence, register


@register
class Roofline(Check):
    id = "roofline"
    layer = "judge"
    patterns = ("impossible-speed",)
    phases = ("timing",)
    what = "the kernel's time against the task's FLOPs and bytes and the device's peaks"

    def judge(self, evidence: Evidence) -> list[Finding]:
        if evidence.result is None or evidence.result.kernel_ms is None:
            return []
        device_name = evidence.environment.get("gpu") or "cpu"
        return dynamic_checks.roofline_findings(evidence.result.kernel_ms, evidence.task.flops,
                                                evidence.task.bytes_moved, device_name)
