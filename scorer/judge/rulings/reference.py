"""The reference worker's comparisons: the kernel's outputs against outputs it computed and holds
(every seed, the repeat, the refill, alternative shapes, float64, kept timed repetitions), and the
evidence a failed comparison names (scorer/correctness/). Ruled in that trusted process."""

from __future__ import annotations

from scorer.judge.registry import Check, register


@register
class ReferenceComparison(Check):
    id = "reference-comparison"
    layer = "judge"
    patterns = ("identity-kernel", "noop-kernel", "stale-memory-reuse", "shared-memory-overflow", "caching-memoization",
                "shape-specialization", "precision-downgrade", "degenerate-output", "input-sniffing")
    what = "the kernel's outputs, compared in the reference worker with outputs it holds"
