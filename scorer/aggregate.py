"""Suite-score arithmetic (pure; shared by `kernelarena score --solutions` and the leaderboard).

Convention, as published by KernelArena: speedups are taken over the suite's tasks with an
incorrect (or otherwise failed) kernel counting as speedup 0 in the mean and the median, so
`score = mean_speedup x median_speedup x pass@1` punishes failures twice over, as published.
The geometric mean is over correct kernels only (a 0 would zero it). A kernel that passed but was
not timed (skip_timing) is solved but contributes speedup 0, since nothing was measured.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class KernelResult:
    task: str
    verdict: str
    speedup: float | None = None

    @property
    def correct(self) -> bool:
        return self.verdict == "passed"


@dataclass(frozen=True)
class SuiteSummary:
    tasks: int
    solved: int
    pass_rate: float
    mean_speedup: float
    median_speedup: float
    geomean_speedup: float | None
    fast_p: float
    p: float
    score: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def effective_speedup(result: KernelResult) -> float:
    """The speedup a result contributes to the mean and median: 0 unless correct and timed."""
    if result.correct and result.speedup is not None and math.isfinite(result.speedup):
        return float(result.speedup)
    return 0.0


def geometric_mean(values: Sequence[float]) -> float | None:
    positive = [v for v in values if v > 0]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive))


def summarize(results: Sequence[KernelResult], p: float = 1.0) -> SuiteSummary:
    """One model's results on a suite (one result per task) -> the published figures."""
    if not results:
        return SuiteSummary(0, 0, 0.0, 0.0, 0.0, None, 0.0, p, 0.0)
    speedups = [effective_speedup(r) for r in results]
    solved = sum(r.correct for r in results)
    pass_rate = solved / len(results)
    mean = statistics.fmean(speedups)
    median = statistics.median(speedups)
    fast = sum(1 for r, s in zip(results, speedups) if r.correct and s > p) / len(results)
    geo = geometric_mean([s for r, s in zip(results, speedups) if r.correct])
    return SuiteSummary(len(results), solved, pass_rate, mean, median, geo, fast, p, mean * median * pass_rate)
