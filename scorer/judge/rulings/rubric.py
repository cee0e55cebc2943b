"""A task's rubric (its required dtype path, forbidden libraries, required algorithm), on the source."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.checks.rubric import rubric_findings
from scorer.judge.registry import Check, Evidence, register


@register
class Rubric(Check):
    id = "rubric"
    layer = "static"
    patterns = ("rubric",)
    phases = ("source",)
    what = "the source against the task's rubric in suite.toml"

    def judge(self, evidence: Evidence) -> list[Finding]:
        return rubric_findings(evidence.source, evidence.task.rubric, evidence.task.id)
