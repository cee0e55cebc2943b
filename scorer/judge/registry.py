"""One interface for every check: what it observes (in the kernel's worker, from outside its
process, in the source, or in the judge's own data), which catalog patterns it can find, and how
the judge rules on what it observed.

A check is one module under scorer/judge/rulings/ that registers a `Check`. The judge gathers
`Evidence` as the scoring goes and asks the registry at each phase (`rule`); checks whose rules run
elsewhere (the reference worker's comparisons, the protocol's parsing) register what they are, so
the catalog's layers can be checked against them. An in-process check observes in the kernel's
worker, which sends the observation typed (scorer/workers/replies.py), and rules on it in its module
here: the kernel's process never sends a finding. Adding a check: one module here, its catalog
pattern, its attack kernels in tests/hacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from scorer.checks.catalog import Finding, Layer
from scorer.score import TimingResult
from scorer.tasks.suites import Suite, Task
from scorer.workers.replies import InProcess

# When the judge rules: on the source before any worker; on the kernel worker's load reply; after
# correctness; after the timed stage; on each judge-clocked batch's reply; after its own clock.
# Checks with no phase are listed, not called here: they rule elsewhere, or the judge calls their
# rule where it parses their observation (scorer/judge/scoring.py).
Phase = Literal["source", "load", "correctness", "timing", "batch", "clock"]


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
    device_span: Any = None  # the device-timed batch's DeviceSpan (GPU), where one was taken
    # What the checks beside the kernel observed over the phase being ruled, one per reply of the
    # kernel's worker (two timed stages where contention had the kernel timed again).
    observed: list[InProcess] = field(default_factory=list)


class Check:
    id: ClassVar[str]
    layer: ClassVar[Layer]
    patterns: ClassVar[tuple[str, ...]]
    phases: ClassVar[tuple[Phase, ...]] = ()
    what: ClassVar[str]  # what it observes, in a line

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


_LAYER_ORDER: tuple[Layer, ...] = ("judge", "outside", "in-process", "static")


def layers_of(pattern: str) -> tuple[Layer, ...]:
    """The layers of the checks registered for `pattern`, the ones the kernel can reach last."""
    found = {c.layer for c in _REGISTRY.values() if pattern in c.patterns}
    return tuple(layer for layer in _LAYER_ORDER if layer in found)


def checks_of(pattern: str) -> tuple[str, ...]:
    """`static` where the source is checked, `dynamic` where anything that runs is."""
    layers = layers_of(pattern)
    kinds = ["static"] if "static" in layers else []
    if any(layer != "static" for layer in layers):
        kinds.append("dynamic")
    return tuple(kinds)
