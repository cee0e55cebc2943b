"""Where a concurrent run's GPU time went, from the GPU lock's trace (scorer.gpu.lock.TRACE_ENV).

Timing is exclusive, so a run of many scorings on one GPU takes at least the sum of its exclusive
sections. What it takes beyond that is time with only shared holders (correctness, comparisons,
a reference's outputs) or with nothing held, and the figures below say which: the share of the
window the lock spent in each state, and how long a timer was queued while each state lasted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any


@dataclass
class Occupancy:
    window_s: float
    exclusive_s: float  # a timer held the GPU
    shared_only_s: float  # only shared holders
    idle_s: float  # nothing held
    timer_queued_behind_shared_s: float  # a timer waited while only shared holders held it
    timer_queued_while_idle_s: float  # a timer waited while nothing was held (hand-over latency)
    exclusive_holds: int

    def to_dict(self) -> dict[str, Any]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}


def read_trace(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            row = json.loads(line)
            rows.append({"shared": bool(row["shared"]), "asked": float(row["asked"]), "got": float(row["got"]),
                         "freed": float(row["freed"])})
        except (ValueError, KeyError, TypeError):
            continue  # a worker's process also ran the kernel: a malformed line is skipped
    return rows


def occupancy(rows: list[dict[str, Any]]) -> Occupancy | None:
    if not rows:
        return None
    start, end = min(r["asked"] for r in rows), max(r["freed"] for r in rows)
    cuts = sorted({t for r in rows for t in (r["asked"], r["got"], r["freed"])})
    ex = sh = idle = queued_sh = queued_idle = 0.0
    for a, b in pairwise(cuts):
        mid, span = (a + b) / 2, b - a
        held = [r for r in rows if r["got"] <= mid < r["freed"]]
        exclusive = any(not r["shared"] for r in held)
        timer_waits = any(not r["shared"] and r["asked"] <= mid < r["got"] for r in rows)
        if exclusive:
            ex += span
        elif held:
            sh += span
            queued_sh += span if timer_waits else 0.0
        else:
            idle += span
            queued_idle += span if timer_waits else 0.0
    return Occupancy(end - start, ex, sh, idle, queued_sh, queued_idle, sum(1 for r in rows if not r["shared"]))
