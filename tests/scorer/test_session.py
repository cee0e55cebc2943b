"""Scoring sessions (scorer/session.py): one prepared reference serves every kernel of a task, and
each kernel still runs in a fresh process of its own (CPU, real workers)."""

from __future__ import annotations

import pytest

from scorer import ScoreOptions
from scorer.session import ScoringSession
from scorer.suites import Suite

OPTIONS = ScoreOptions(device="cpu", seeds=2, warmup=1, repetitions=3)


@pytest.mark.slow
def test_reference_prepared_once_and_a_fresh_worker_per_kernel(demo: Suite) -> None:
    solution = demo.tasks["swish"].solution
    with ScoringSession(OPTIONS) as session:
        first = session.score(demo, "swish", solution, device="cpu")
        (ref,) = session._references.values()
        reference_pid = ref.worker.proc.pid
        second = session.score(demo, "swish", solution, device="cpu")
        assert first.verdict == second.verdict == "passed", (first.error, second.error)
        # The second kernel found the reference prepared and its baseline measured.
        assert "reference" in first.durations_s and "reference" not in second.durations_s
        assert "baseline_timing" in first.durations_s and "baseline_timing" not in second.durations_s
        assert second.timing is not None and second.timing.baseline_ms == first.timing.baseline_ms
        assert list(session._references.values())[0].worker.proc.pid == reference_pid
        # Each kernel had a worker of its own, dead once its kernel was scored; one waits warm.
        warm = session._pool["cpu"]
        assert len(warm) == 1 and warm[0].proc.poll() is None
        # Meeting swish started a reference worker ahead for the next new task; row_sum gets it.
        spare = session._spare_reference
        assert spare is not None and spare.proc.poll() is None
        # Both had finished starting before anything was timed: the wait is a stage of its own,
        # and the workers answered it (the requests they served are counted).
        assert "settle" in first.durations_s and "settle" in second.durations_s
        assert warm[0]._requests == 1 and spare._requests == 1
        other = session.score(demo, "row_sum", demo.tasks["row_sum"].solution, device="cpu")
        assert other.verdict == "passed", other.error
        assert len(session._references) == 1  # max_references=1: swish's reference was closed
        assert ref.worker.proc.poll() is not None
        (row_sum_ref,) = session._references.values()
        assert row_sum_ref.worker is spare and spare.proc.poll() is None
    assert spare.proc.poll() is not None and session._spare_reference is None  # close() ends them all
