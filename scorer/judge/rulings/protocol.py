"""The protocol the judge decides: typed, versioned replies with the counts it asked for and finite
figures (scorer/workers/replies.py), timed outputs committed before the keep is revealed
(scorer/workers/commitment.py), exactly the batch rows asked for. Ruled as each reply is parsed."""

from __future__ import annotations

from scorer.judge.registry import Check, register


@register
class Protocol(Check):
    id = "protocol"
    layer = "judge"
    patterns = ("protocol-violation",)
    what = "every reply of the kernel's worker, parsed into its typed form; the commitments of kept outputs"
