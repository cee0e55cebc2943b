"""The kernel's source, before anything of it runs: the dialect, library calls, threads, timers,
introspection, fallbacks (scorer/checks/static/)."""

from __future__ import annotations

from scorer.checks import static as static_checks
from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, Evidence, register


@register
class StaticSource(Check):
    id = "static-source"
    layer = "static"
    patterns = ("baseline-library-call", "cache-residency", "harness-introspection", "input-sniffing", "obfuscated-code",
                "precision-downgrade", "stream-injection", "thread-injection", "timer-patching", "try-fallback")
    phases = ("source",)
    what = "the AST of kernel.py and the native sources it builds"

    def judge(self, evidence: Evidence) -> list[Finding]:
        return static_checks.analyze_source(evidence.source, evidence.kernel_path, evidence.suite.policy,
                                            task_dtype=evidence.task.dtype)
