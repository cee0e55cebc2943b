"""How many timed repetitions fit the timed stage's limit: the scorer's own protocol must fit its
time budget, never turn a slow honest kernel into a `timeout`.

The judge estimates a call from the correctness stage on its own clock (its wall time over the
calls it asked for). Where the planned repetitions would take more than a share of the stage's
limit, it times a subset of them: every kept repetition (their references exist and stay secret)
and others drawn at random, in their planned order, so the kernel meets the same protocol with
fewer repetitions. score.json says how many ran and why.
"""

from __future__ import annotations

import math
import secrets

SHARE_OF_LIMIT = 0.5  # the rest of the stage: warm-up spread, checks of the kept outputs, round trips
MIN_REPETITIONS = 5


def timed_subset(repetitions: int, keep: list[int], call_s: float | None, warmup: int,
                 limit_s: float) -> tuple[list[int], str]:
    """(the planned repetitions to time, in order; why fewer than planned, or "")."""
    everything = list(range(repetitions))
    if not call_s or call_s <= 0 or not math.isfinite(call_s):
        return everything, ""
    fits = int(SHARE_OF_LIMIT * limit_s / call_s) - warmup
    count = max(MIN_REPETITIONS, len(keep), fits)
    if count >= repetitions:
        return everything, ""
    others = [r for r in everything if r not in keep]
    chosen = sorted(set(keep) | set(secrets.SystemRandom().sample(others, count - len(keep))))
    why = (f"{len(chosen)} of {repetitions} repetitions timed: a call took about {call_s:.3g} s in correctness, and "
           f"the timed stage has {limit_s:g} s")
    return chosen, why
