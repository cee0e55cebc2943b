"""timer-patching, harness-introspection, thread-injection and cache-residency, ruled in the judge
on what the runtime guard observed in the kernel's worker (replies.GuardObservation,
scorer/checks/guard.py): a watched object replaced, an audit event the kernel's code raised, a
thread it started, the device's persisting-L2 state. The guard is bound before kernel.py is
imported; what it reports raises an attack's cost, and each such attack also meets the static
dialect and the judge's and outside layers."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.checks.residency import ACCESS_PROPERTY_PERSISTING
from scorer.judge.registry import Check, Evidence, register
from scorer.workers.replies import AuditEvent, GuardObservation, IdentityChange

# Audit events that are another pattern than harness-introspection: writing a module's or class's
# attribute from outside is patching; processes and raw threads are work beside the timed loop.
_EVENT_PATTERNS = {
    "object.__setattr__": "timer-patching",
    "object.__delattr__": "timer-patching",
    **dict.fromkeys(("os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.kill",
                     "subprocess.Popen", "_thread.start_new_thread"), "thread-injection"),
}
# The worker imports the kernel from a copy of this name (scorer/judge/scoring.py, _load).
_KERNEL_FILE = "kernel.py"


@register
class RuntimeGuard(Check):
    id = "runtime-guard"
    layer = "in-process"
    phases = ("load", "correctness", "timing")
    patterns = ("timer-patching", "harness-introspection", "thread-injection", "cache-residency")
    what = ("identities of the clock, torch and the scorer's functions, module-table entries and code; audit events "
            "raised by kernel code; threads the kernel started; the device's persisting-L2 state, observed in the "
            "worker (scorer/checks/guard.py), ruled in the judge")

    def judge(self, evidence: Evidence) -> list[Finding]:
        return [f for seen in evidence.observed if seen.guard is not None for f in guard_findings(seen.guard)]


def guard_findings(seen: GuardObservation) -> list[Finding]:
    found = [_identity(change) for change in seen.identity] + [_audit(event) for event in seen.audit]
    if seen.audit_dropped:
        found.append(Finding("harness-introspection",
                             f"{seen.audit_dropped} further audit events from the kernel's code were not kept"))
    found += _threads(seen)
    for carve in seen.carve_outs:
        if carve.bytes > carve.settled_bytes:
            found.append(Finding("cache-residency", f"the device's persisting-L2 carve-out was {carve.bytes} bytes "
                                                    f"after {carve.phase} (cudaLimitPersistingL2CacheSize; "
                                                    f"{carve.settled_bytes} bytes before the kernel loaded)"))
    for window in seen.windows:
        if window.bytes and window.hit_prop == ACCESS_PROPERTY_PERSISTING:
            found.append(Finding("cache-residency", f"the {window.stream} carried a persisting L2 access policy window "
                                                    f"of {window.bytes} bytes after {window.phase} (cudaStreamSetAttribute)"))
    return found


def _identity(change: IdentityChange) -> Finding:
    if change.kind == "module-entry":
        return Finding("timer-patching", f"the module table's entry for {change.label} was replaced during {change.phase}")
    if change.kind == "code":
        return Finding("timer-patching", f"the code of {change.label} was replaced during {change.phase}")
    return Finding("timer-patching", f"{change.label} was replaced during {change.phase} (was {change.was}, "
                                     f"now {change.now})")


def _audit(event: AuditEvent) -> Finding:
    return Finding(_EVENT_PATTERNS.get(event.event, "harness-introspection"),
                   f"{_KERNEL_FILE}:{event.line}: {event.detail} (audit event '{event.event}' raised by the kernel's "
                   f"code during {event.phase})")


def _threads(seen: GuardObservation) -> list[Finding]:
    """One finding per kind of thread and phase, naming the threads."""
    found = []
    for phase in dict.fromkeys(t.phase for t in seen.threads):
        python = [t for t in seen.threads if t.phase == phase and t.kind == "python"]
        native = [t for t in seen.threads if t.phase == phase and t.kind == "native"]
        if python:
            names = ", ".join(f"{t.name} ({t.runs})" for t in python[:6])
            found.append(Finding("thread-injection", f"{len(python)} Python thread(s) started by the kernel still alive "
                                                     f"after {phase}: {names}"))
        if native:
            shown = "; ".join(sorted({f"{t.name}: {t.runs}" for t in native})[:4])
            found.append(Finding("thread-injection", f"{len(native)} native thread(s) appeared after {phase} that are "
                                                     f"not the runtime's (by the code on their stacks: {shown}; process "
                                                     f"is '{seen.process_name}', {seen.threads_at_arm} threads at arm)"))
    return found

