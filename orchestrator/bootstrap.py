"""Bootstrap confidence intervals for the leaderboard's suite score and geometric-mean speedup.

What is resampled: the suite's tasks, with replacement, the SAME draw for every model (a paired
bootstrap, so two models are compared on the same resampled suites); within each drawn task, a
model's samples, with replacement (as many as it has there). Each resample is then scored with
the published convention (`scorer.aggregate`): each result's contribution is
`aggregate.effective_speedup` (0 unless correct and timed), correctness is `KernelResult.correct`,
`score = mean x median x pass@1` over all results and the geometric mean over correct kernels with
a positive speedup. The arithmetic is vectorised over resamples with numpy; `statistics()` applied
to the observed results (no resampling) gives `aggregate.summarize`'s figures, which the tests check.

- `score_ci` / `geomean_ci`: the 2.5th and 97.5th percentiles over resamples (percentile interval,
  numpy's linear interpolation). Resamples in which a model has no correct timed kernel have no
  geometric mean and are left out of `geomean_ci` (None when none has one).
- `order_confidence(i, j)`: the share of resamples in which model i ranks above model j by the
  leaderboard's key (score, then pass@1); a full tie counts one half.

Deterministic for a given seed, number of resamples and input (the models' order included).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.aggregate import KernelResult, effective_speedup

LEVEL = 0.95
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0

TaskResults = Mapping[Hashable, Sequence[KernelResult]]
"""One model's results: task key -> its samples' results (an incorrect or failed kernel included)."""


@dataclass(frozen=True)
class _Arrays:
    """One model's results as (tasks x max samples) arrays over the shared task list."""

    speed: np.ndarray  # float, effective speedup (0 for incorrect / untimed)
    correct: np.ndarray  # bool
    counts: np.ndarray  # int, samples per task (0: the model has no result there)


def _arrays(results: TaskResults, tasks: Sequence[Hashable]) -> _Arrays:
    k = max((len(results.get(t, ())) for t in tasks), default=0) or 1
    speed = np.zeros((len(tasks), k))
    correct = np.zeros((len(tasks), k), dtype=bool)
    counts = np.zeros(len(tasks), dtype=np.int64)
    for i, task in enumerate(tasks):
        samples = results.get(task, ())
        counts[i] = len(samples)
        for j, r in enumerate(samples):
            speed[i, j] = effective_speedup(r)
            correct[i, j] = r.correct
    return _Arrays(speed, correct, counts)


def statistics(speed: np.ndarray, correct: np.ndarray, valid: np.ndarray) -> dict[str, np.ndarray]:
    """The published figures of each row of (resamples x results) arrays; `valid` masks the
    results that are present (rows may hold different numbers of results)."""
    n = valid.sum(axis=1)
    has = n > 0
    safe_n = np.where(has, n, 1)
    v = np.where(valid, speed, 0.0)
    mean = v.sum(axis=1) / safe_n
    pass_at_1 = (correct & valid).sum(axis=1) / safe_n
    ordered = np.sort(np.where(valid, speed, np.inf), axis=1)  # absent results sort last
    if ordered.shape[1] == 0:  # no result at all: a sweep none of whose trials has finished yet
        median = np.zeros(len(n))
    else:
        lo = np.take_along_axis(ordered, np.maximum((n - 1) // 2, 0)[:, None], axis=1)[:, 0]
        hi = np.take_along_axis(ordered, np.minimum(n // 2, ordered.shape[1] - 1)[:, None], axis=1)[:, 0]
        median = np.where(has, (lo + hi) / 2, 0.0)
    mean = np.where(has, mean, 0.0)
    pos = valid & correct & (speed > 0)
    g = pos.sum(axis=1)
    logs = np.where(pos, np.log(np.where(pos, speed, 1.0)), 0.0).sum(axis=1)
    geomean = np.where(g > 0, np.exp(logs / np.maximum(g, 1)), np.nan)
    return {"score": mean * median * pass_at_1, "pass_at_1": pass_at_1, "mean": mean,
            "median": median, "geomean": geomean}


@dataclass(frozen=True)
class BootstrapResult:
    resamples: int
    seed: int
    score: np.ndarray
    """(models x resamples) suite scores."""
    pass_at_1: np.ndarray
    geomean: np.ndarray
    """(models x resamples), NaN where a resample has no correct timed kernel."""

    def score_ci(self, i: int) -> tuple[float, float]:
        lo, hi = np.percentile(self.score[i], [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
        return float(lo), float(hi)

    def geomean_ci(self, i: int) -> tuple[float, float] | None:
        values = self.geomean[i][~np.isnan(self.geomean[i])]
        if values.size == 0:
            return None
        lo, hi = np.percentile(values, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
        return float(lo), float(hi)

    def order_confidence(self, i: int, j: int) -> float:
        """Share of resamples in which model i ranks above model j (score, then pass@1); ties 1/2."""
        si, sj, pi, pj = self.score[i], self.score[j], self.pass_at_1[i], self.pass_at_1[j]
        above = (si > sj) | ((si == sj) & (pi > pj))
        tie = (si == sj) & (pi == pj)
        return float((above.sum() + 0.5 * tie.sum()) / self.resamples)


def bootstrap(models: Sequence[TaskResults], resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED) -> BootstrapResult:
    """Paired bootstrap over the union of the models' tasks (and over samples within a task)."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    tasks = sorted({t for m in models for t in m}, key=repr)
    rng = np.random.default_rng(seed)
    n_tasks = len(tasks)
    drawn = rng.integers(0, n_tasks, size=(resamples, n_tasks)) if n_tasks else np.zeros((resamples, 0), dtype=np.int64)
    scores, passes, geos = [], [], []
    for results in models:
        a = _arrays(results, tasks)
        counts = a.counts[drawn]  # (B, T)
        k = a.speed.shape[1]
        if k == 1:
            speed, correct, valid = a.speed[drawn, 0], a.correct[drawn, 0], counts > 0
        else:
            pick = np.minimum((rng.random((resamples, n_tasks, k)) * counts[..., None]).astype(np.int64), k - 1)
            speed = a.speed[drawn[..., None], pick].reshape(resamples, -1)
            correct = a.correct[drawn[..., None], pick].reshape(resamples, -1)
            valid = (np.arange(k) < counts[..., None]).reshape(resamples, -1)
        figures = statistics(speed, correct, valid)
        scores.append(figures["score"])
        passes.append(figures["pass_at_1"])
        geos.append(figures["geomean"])
    shape = (len(models), resamples)
    return BootstrapResult(
        resamples=resamples, seed=seed,
        score=np.array(scores).reshape(shape), pass_at_1=np.array(passes).reshape(shape),
        geomean=np.array(geos).reshape(shape),
    )


def observed(results: TaskResults) -> dict[str, float | None]:
    """`statistics()` of the observed results themselves (every task and sample once)."""
    tasks = sorted(results, key=repr)
    a = _arrays(results, tasks)
    valid = np.arange(a.speed.shape[1]) < a.counts[:, None]
    f = statistics(a.speed.reshape(1, -1), a.correct.reshape(1, -1), valid.reshape(1, -1))
    out: dict[str, float | None] = {key: float(value[0]) for key, value in f.items()}
    if out["geomean"] is not None and math.isnan(out["geomean"]):
        out["geomean"] = None
    return out
