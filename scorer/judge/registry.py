"""One interface for every check: what it observes (in the kernel's worker, from outside its
process, in the source, or in the judge's own data), which catalog patterns it can find, and how
the judge rules on what it observed.

A check is one module under scorer/judge/rulings/ that registers a `Check`. The judge gathers
`Evidence` as the scoring goes and asks the registry at each phase (`rule`); checks whose rules run
elsewhere (the worker's in-process checks, the reference worker's comparisons, the protocol's
parsing) register what they are, so the catalog's layers can be checked against them, and the
in-process findings a worker sends are accepted only for the patterns of the checks registered as
making their findings there (`worker_findings`). An in-process check without it has the worker send
a typed observation (scorer/workers/replies.py) and rules on it in its module here. Adding a
check: one module here, its catalog pattern, its attack kernels in tests/hacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from scorer.checks.catalog import Finding, Layer
from scorer.score import TimingResult
from scorer.tasks.suites import Suite, Task

# When the judge rules: on the source before any worker; after correctness; after the timed stage;
# after its own clock. Checks with no phase rule elsewhere (listed, not called).
Phase = Literal["source", "correctness", "timing", "clock"]


@dataclass(frozen=True)
class NativeWatch:
    """The kernel's process as the judge read it before kernel.py was imported."""
    pid: int
    fingerprint: dict[str, Any]
    readable: bool
    mapped_before: set[str]


@dataclass
class Evidence:
    """What the judge holds when it rules: its own data, what it read from outside, and the
    kernel's reported figures (typed, from scorer/workers/replies.py)."""
    suite: Suite
    task: Task
    device: str
    source: str = ""
    kernel_path: str = ""
    native: NativeWatch | None = None
    timing: Any = None  # the kernel's TimingFigures (scorer/judge/reference.py)
    result: TimingResult | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    contention: dict[str, Any] = field(default_factory=dict)
    clock: Any = None  # the fastest BatchClock (scorer/judge/clock.py)


class Check:
    id: ClassVar[str]
    layer: ClassVar[Layer]
    patterns: ClassVar[tuple[str, ...]]
    phases: ClassVar[tuple[Phase, ...]] = ()
    what: ClassVar[str]  # what it observes, in a line
    # Its findings are made in the kernel's worker and arrive made (scorer/judge/rulings/in_process.py);
    # an in-process check without it sends observations the judge rules on.
    worker_findings: ClassVar[bool] = False

    def judge(self, evidence: Evidence) -> list[Finding]:
        return []


_REGISTRY: dict[str, Check] = {}


def register(cls: type[Check]) -> type[Check]:
    if cls.id in _REGISTRY:
        raise ValueError(f"two checks registered as {cls.id!r}")
    _REGISTRY[cls.id] = cls()
    return cls


def checks() -> list[Check]:
    return list(_REGISTRY.values())


def rule(phase: Phase, evidence: Evidence) -> list[Finding]:
    """Every registered check of this phase, in registration order."""
    return [f for c in _REGISTRY.values() if phase in c.phases for f in c.judge(evidence)]


def in_process_patterns() -> frozenset[str]:
    """The patterns the worker may report as findings it made itself."""
    return frozenset(p for c in _REGISTRY.values() if c.worker_findings for p in c.patterns)


def layers_of(pattern: str) -> set[str]:
    return {c.layer for c in _REGISTRY.values() if pattern in c.patterns}
