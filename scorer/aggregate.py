"""Suite-score arithmetic (pure; shared by `kernelarena score --solutions` and the leaderboard).

KernelArena's published method (`method="published"`, the default):
- the mean and the median speedup are taken over the kernels that passed correctness and were
  timed, only;
- pass@1 is the share of results (first tries) that were correct;
- `score = mean x median x pass@1`; with no correct timed kernel the mean and the median are None
  ("-") and the score is 0 (a failed kernel's own performance entry is 0);
- the geometric mean is over correct kernels with a positive speedup; fast_p is the share of all
  results that are correct with a speedup above p.

`method="strict"` is the stricter variant some users ask for: every result counts in the mean and
the median, an incorrect, failed or untimed kernel as speedup 0. It punishes a failure two or three
times over (in pass@1, and again in the mean and the median; below half passing the median is 0 and
so is the score), so it is never the default.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

METHODS = ("published", "strict")
DEFAULT_METHOD = "published"


@dataclass(frozen=True)
class KernelResult:
    task: str
    verdict: str
    speedup: float | None = None

    @property
    def correct(self) -> bool:
        return self.verdict == "passed"

    @property
    def timed(self) -> bool:
        """Correct with a measured speedup: the results the published mean and median are over."""
        return self.correct and self.speedup is not None and math.isfinite(self.speedup)


@dataclass(frozen=True)
class SuiteSummary:
    tasks: int
    solved: int
    pass_rate: float
    mean_speedup: float | None
    """None where no result enters the mean (published: no correct timed kernel)."""
    median_speedup: float | None
    geomean_speedup: float | None
    fast_p: float
    p: float
    score: float
    method: str = DEFAULT_METHOD

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown score method {method!r}: use one of {', '.join(METHODS)}")
    return method


def effective_speedup(result: KernelResult) -> float:
    """A result's performance entry: its speedup if correct and timed, else 0."""
    speedup = result.speedup  # timed implies a speedup; the local lets the check below narrow it
    return float(speedup) if result.timed and speedup is not None else 0.0


def speedups_for(results: Sequence[KernelResult], method: str = DEFAULT_METHOD) -> list[float]:
    """The values the mean and the median are taken over."""
    if check_method(method) == "strict":
        return [effective_speedup(r) for r in results]
    return [effective_speedup(r) for r in results if r.timed]


def geometric_mean(values: Sequence[float]) -> float | None:
    positive = [v for v in values if v > 0]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive))


def summarize(results: Sequence[KernelResult], p: float = 1.0, method: str = DEFAULT_METHOD) -> SuiteSummary:
    """One model's results on a suite (one result per task, or per sample) -> the figures."""
    values = speedups_for(results, method)
    if not results:
        return SuiteSummary(0, 0, 0.0, None, None, None, 0.0, p, 0.0, method)
    solved = sum(r.correct for r in results)
    pass_rate = solved / len(results)
    mean = statistics.fmean(values) if values else None
    median = statistics.median(values) if values else None
    fast = sum(1 for r in results if r.timed and effective_speedup(r) > p) / len(results)
    geo = geometric_mean([effective_speedup(r) for r in results if r.timed])
    score = mean * median * pass_rate if mean is not None and median is not None else 0.0
    return SuiteSummary(len(results), solved, pass_rate, mean, median, geo, fast, p, score, method)
