"""Ranks by confidence: the rule LMArena publishes, applied to the leaderboard's score intervals.

A model's rank is 1 + the number of models whose interval lies wholly above its own (their lower
bound above its upper bound), so models whose intervals overlap share a rank. Its rank range is
the best and the worst rank those intervals allow: best = the rank, worst = N - the number of
models wholly below it. A model without an interval (no finished trial, or a score that is 0 in
every resample: no correct kernel) ranks after every model that has one, all such models sharing
one rank. Without bootstrap intervals each score stands for its own interval [score, score], so
the rule reduces to ranking by score with exact ties shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard

Interval = tuple[float, float]


def rank_note(bootstrapped: bool) -> str:
    """The one line every output prints about how `rank` is set."""
    if bootstrapped:
        return ("rank = 1 + the number of models whose 95% score interval lies wholly above this one's "
                "(LMArena's rule: overlapping intervals share a rank); rank range = the best and worst rank "
                "the intervals allow; strict rank = the order by score alone.")
    return ("rank = the order by score, exact ties shared (no bootstrap, so no intervals to share ranks by); "
            "strict rank = the order by score alone.")


def has_interval(interval: Interval | None) -> TypeGuard[Interval]:
    """An interval that says something: one whose upper bound is above 0."""
    return interval is not None and interval[1] > 0


def confidence_ranks(intervals: Sequence[Interval | None]) -> list[tuple[int, tuple[int, int]]]:
    """Per model, in the given order: (rank, (best, worst)) by the rule in the module docstring."""
    n = len(intervals)
    ranked = [iv for iv in intervals if has_interval(iv)]
    unranked = n - len(ranked)
    out = []
    for iv in intervals:
        if has_interval(iv):
            lo, hi = iv
            above = sum(o[0] > hi for o in ranked)
            below = sum(o[1] < lo for o in ranked) + unranked
            out.append((above + 1, (above + 1, n - below)))
        else:
            out.append((len(ranked) + 1, (len(ranked) + 1, n)))
    return out
