"""The Score: one kernel's verdict, evidence, correctness and timing figures, and environment.

Serialised to `score.json` (versioned by `SCORE_VERSION`), written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

SCORE_VERSION = 1

VERDICTS: tuple[str, ...] = ("passed", "incorrect", "compile_error", "runtime_error", "timeout", "hack_detected", "no_kernel")


@dataclass
class CorrectnessResult:
    trials: int = 0
    passed: int = 0
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    mismatch_fraction: float | None = None
    rule: str = ""


@dataclass
class TimingResult:
    device: str = ""
    timer: str = ""
    baseline_ms: float | None = None
    kernel_ms: float | None = None
    speedup: float | None = None
    repetitions: int = 0
    baseline_spread: float | None = None
    kernel_spread: float | None = None
    baseline_times_ms: list[float] = field(default_factory=list)
    kernel_times_ms: list[float] = field(default_factory=list)
    gate: str = ""  # how the GPU was held before each start event (scorer.gpu.gate); "" on CPU
    # Triton launches of the timed calls that ran in the launch window (function modes off) and
    # under the library-call monitor's modes, as the kernel worker counted them (a diagnostic).
    launch_window: dict[str, int] = field(default_factory=dict)
    # The judge's own clock (scorer/judge/clock.py): ms a call over `judge_calls` back-to-back
    # verified calls on fresh inputs, for the kernel and for the baseline.
    judge_calls: int = 0
    judge_batches: int = 0  # batches the bound took (another, on fresh seeds, when one read too slow)
    judge_bound_ms: float | None = None
    baseline_judge_bound_ms: float | None = None
    # The kernel thread's CPU time a batch call less inputs and copies, read by the judge (CPU only).
    judge_cpu_ms: float | None = None
    # The device-timed batch (GPU; scorer/gpu/release_gate.py): ms a call over `judge_device_calls`
    # calls enqueued behind a gate, on the reference worker's device events, with no host work of the
    # kernel's in the span; or why none was taken.
    judge_device_ms: float | None = None
    judge_device_calls: int = 0
    judge_device_note: str = ""
    # The span less its round trips less the calls at the reported median: the protocol's fixed cost
    # as far as the kernel's own times tell (a diagnostic).
    judge_device_fixed_ms: float | None = None
    # The least the kernel's time counts as in `speedup` (judge_bound_ms / clock.FLOOR_RATIO, and on
    # a CPU judge_cpu_ms x clock.CPU_FLOOR_SHARE), and whether it did: the kernel's own median was
    # below it, so the speedup uses the floor.
    judge_floor_ms: float | None = None
    floored: bool = False
    # Why fewer repetitions than planned were timed ("" when all were): the stage's time limit.
    repetitions_cut: str = ""


@dataclass
class Score:
    suite: str
    task: str
    verdict: str
    kernel_sha256: str | None = None
    error: str | None = None
    hacks: list[dict[str, str]] = field(default_factory=list)
    flags: list[dict[str, str]] = field(default_factory=list)
    correctness: CorrectnessResult | None = None
    timing: TimingResult | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    durations_s: dict[str, float] = field(default_factory=dict)
    # The timing kept was taken while foreign compute ran on the device (scorer/gpu/contention.py):
    # seen in the first timing and again in the one re-time. `contention` holds the evidence of
    # every watched window, whether the stages were re-timed, and what exclusive timing froze.
    contended: bool = False
    contention: dict[str, Any] = field(default_factory=dict)
    # Which of the operating system's walls were around the kernel's process, read by the judge
    # from /proc (scorer/workers/wall.py): {"walls": {name: bool}, "complete", "missing", "uid"}.
    isolation: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCORE_VERSION

    @property
    def speedup(self) -> float | None:
        return self.timing.speedup if self.timing else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Score:
        version = data.get("schema_version")
        if version != SCORE_VERSION:
            raise ValueError(f"score schema_version {version!r} is not {SCORE_VERSION}; rescore with this scorer")
        kwargs = _known_fields(cls, data)
        if kwargs.get("correctness") is not None:
            kwargs["correctness"] = CorrectnessResult(**kwargs["correctness"])
        if kwargs.get("timing") is not None:
            # A figure an older scorer of this schema wrote and this one no longer does is dropped
            # (timing.judge_window_ms, 2026-12-08), so its scores still read.
            kwargs["timing"] = TimingResult(**_known_fields(TimingResult, kwargs["timing"]))
        return cls(**kwargs)

    def to_json(self) -> str:
        # NaN/Inf are not JSON; an unbounded error is written as null by `_finite`.
        return json.dumps(_finite(self.to_dict()), indent=2, allow_nan=False)

    def write(self, path: Path) -> None:
        """Atomic: readers see the old file or the whole new one, never a torn write. Its own
        copy of kernelarena.files' job: the scorer imports nothing but torch, triton and the
        standard library, and unlike an index a score is fsynced, since nothing rebuilds it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(self.to_json() + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def read(cls, path: Path) -> Score:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def _known_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The entries of `data` that name a field of the dataclass `cls`."""
    known = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in known}


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj
