"""input-mutation. The worker observes which inputs changed: each correctness trial's against a
bitwise snapshot taken before the call (ruled by the reference worker, scorer/correctness/evaluate.py),
and each kept timed repetition's against the same seed drawn again (replies.KeptRepObservation,
ruled here). The judge reveals which repetitions are kept only after each returns, so a kernel that
writes over its inputs on the calls it cannot see checked meets this check on any of them."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, register
from scorer.workers.replies import KeptRepObservation


@register
class InputHashes(Check):
    id = "input-hashes"
    layer = "in-process"
    patterns = ("input-mutation",)
    what = ("each call's inputs before and after, and kept timed repetitions' inputs against the seed drawn again, "
            "observed in the worker; ruled by the reference worker and the judge")


def mutation_findings(kept: KeptRepObservation) -> list[Finding]:
    if not kept.changed_inputs:
        return []
    return [Finding("input-mutation", f"forward() changed input(s) {kept.changed_inputs} during timed repetition "
                                      f"{kept.rep} (its inputs differ from the same seed drawn again)")]
