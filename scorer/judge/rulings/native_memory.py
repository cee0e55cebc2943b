"""The clock's C callables and the shared objects in the kernel's process, read by the judge through
/proc/<pid>/mem and /proc/<pid>/maps against what it read before kernel.py was imported."""

from __future__ import annotations

from scorer.checks import native_audit
from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, Evidence, register


@register
class NativeMemory(Check):
    id = "native-memory"
    layer = "outside"
    patterns = ("timer-patching", "harness-introspection")
    phases = ("correctness", "timing")
    what = "the worker's memory and mappings, from /proc in the host's namespace"

    def judge(self, evidence: Evidence) -> list[Finding]:
        watch = evidence.native
        if watch is None or not watch.readable:
            return []
        return native_audit.audit_timers(watch.pid, watch.fingerprint) + \
            native_audit.scan_new_objects(watch.pid, watch.mapped_before)
