"""Bootstrap confidence intervals for the leaderboard's suite score and geometric-mean speedup.

What is resampled: the suite's tasks, with replacement, the SAME draw for every model (a paired
bootstrap, so two models are compared on the same resampled suites); within each drawn task, a
model's samples, with replacement (as many as it has there). Each resample is then scored by the
method `scorer.aggregate` defines: published (default), the mean and the median over the correct
timed kernels (`KernelResult.timed`), pass@1 over all results, `score = mean x median x pass@1`,
0 where no kernel is correct and timed; strict, the mean and the median over all results with
`aggregate.effective_speedup` (0 unless correct and timed). The geometric mean is over correct
kernels with a positive speedup. The arithmetic is vectorised over resamples with numpy;
`statistics()` applied to the observed results (no resampling) gives `aggregate.summarize`'s
figures, which the tests check.

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
from typing import TypeVar

import numpy as np

from scorer.aggregate import DEFAULT_METHOD, KernelResult, check_method, effective_speedup

LEVEL = 0.95
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0

TaskKey = TypeVar("TaskKey", bound=Hashable)
TaskResults = Mapping[TaskKey, Sequence[KernelResult]]
"""One model's results: task key -> its samples' results (an incorrect or failed kernel included)."""


@dataclass(frozen=True)
class _Arrays:
    """One model's results as (tasks x max samples) arrays over the shared task list."""

    speed: np.ndarray  # float, effective speedup (0 for incorrect / untimed)
    correct: np.ndarray  # bool
    timed: np.ndarray  # bool, correct with a measured speedup
    counts: np.ndarray  # int, samples per task (0: the model has no result there)


def _arrays(results: TaskResults[TaskKey], tasks: Sequence[TaskKey]) -> _Arrays:
    k = max((len(results.get(t, ())) for t in tasks), default=0) or 1
    speed = np.zeros((len(tasks), k))
    correct = np.zeros((len(tasks), k), dtype=bool)
    timed = np.zeros((len(tasks), k), dtype=bool)
    counts = np.zeros(len(tasks), dtype=np.int64)
    for i, task in enumerate(tasks):
        samples = results.get(task, ())
        counts[i] = len(samples)
        for j, r in enumerate(samples):
            speed[i, j] = effective_speedup(r)
            correct[i, j] = r.correct
            timed[i, j] = r.timed
    return _Arrays(speed, correct, timed, counts)


def _median(values: np.ndarray, member: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Row-wise median of the members (n per row); NaN where a row has none."""
    if values.shape[1] == 0:
        return np.full(len(n), np.nan)
    ordered = np.sort(np.where(member, values, np.inf), axis=1)  # non-members sort last
    lo = np.take_along_axis(ordered, np.maximum((n - 1) // 2, 0)[:, None], axis=1)[:, 0]
    hi = np.take_along_axis(ordered, np.minimum(n // 2, ordered.shape[1] - 1)[:, None], axis=1)[:, 0]
    return np.where(n > 0, (lo + hi) / 2, np.nan)


def statistics(speed: np.ndarray, correct: np.ndarray, valid: np.ndarray, timed: np.ndarray | None = None,
               method: str = DEFAULT_METHOD) -> dict[str, np.ndarray]:
    """The figures of each row of (resamples x results) arrays; `valid` masks the results that are
    present (rows may hold different numbers of results). `timed` (correct with a measured speedup)
    defaults to correct with a positive speedup. Mean and median are NaN where nothing enters them."""
    check_method(method)
    if timed is None:
        timed = correct & (speed > 0)
    n = valid.sum(axis=1)
    pass_at_1 = (correct & valid).sum(axis=1) / np.where(n > 0, n, 1)
    member = valid if method == "strict" else valid & timed
    m = member.sum(axis=1)
    v = np.where(member, speed, 0.0)
    mean = np.where(m > 0, v.sum(axis=1) / np.maximum(m, 1), np.nan)
    median = _median(speed, member, m)
    score = np.where(m > 0, np.nan_to_num(mean) * np.nan_to_num(median) * pass_at_1, 0.0)
    pos = valid & timed & (speed > 0)
    g = pos.sum(axis=1)
    logs = np.where(pos, np.log(np.where(pos, speed, 1.0)), 0.0).sum(axis=1)
    geomean = np.where(g > 0, np.exp(logs / np.maximum(g, 1)), np.nan)
    return {"score": score, "pass_at_1": pass_at_1, "mean": mean, "median": median, "geomean": geomean}


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


def bootstrap(models: Sequence[TaskResults[TaskKey]], resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED, method: str = DEFAULT_METHOD) -> BootstrapResult:
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
            speed, correct, timed, valid = a.speed[drawn, 0], a.correct[drawn, 0], a.timed[drawn, 0], counts > 0
        else:
            pick = np.minimum((rng.random((resamples, n_tasks, k)) * counts[..., None]).astype(np.int64), k - 1)
            speed = a.speed[drawn[..., None], pick].reshape(resamples, -1)
            correct = a.correct[drawn[..., None], pick].reshape(resamples, -1)
            timed = a.timed[drawn[..., None], pick].reshape(resamples, -1)
            valid = (np.arange(k) < counts[..., None]).reshape(resamples, -1)
        figures = statistics(speed, correct, valid, timed, method)
        scores.append(figures["score"])
        passes.append(figures["pass_at_1"])
        geos.append(figures["geomean"])
    shape = (len(models), resamples)
    return BootstrapResult(
        resamples=resamples, seed=seed,
        score=np.array(scores).reshape(shape), pass_at_1=np.array(passes).reshape(shape),
        geomean=np.array(geos).reshape(shape),
    )


def observed(results: TaskResults[TaskKey], method: str = DEFAULT_METHOD) -> dict[str, float | None]:
    """`statistics()` of the observed results themselves (every task and sample once)."""
    tasks = sorted(results, key=repr)
    a = _arrays(results, tasks)
    valid = np.arange(a.speed.shape[1]) < a.counts[:, None]
    f = statistics(a.speed.reshape(1, -1), a.correct.reshape(1, -1), valid.reshape(1, -1),
                   a.timed.reshape(1, -1), method)
    return {key: None if math.isnan(float(value[0])) else float(value[0]) for key, value in f.items()}
