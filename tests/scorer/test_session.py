"""Scoring sessions (scorer/judge/session.py): one prepared reference serves every kernel of a task, and
each kernel still runs in a fresh process of its own (CPU, real workers)."""

from __future__ import annotations

import pytest

from scorer import ScoreOptions
from scorer.judge.session import ScoringSession
from scorer.tasks.suites import Suite

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
        # The reference's preparation steps and the queueing for the GPU are reported.
        assert {"reference_build_worker", "reference_outputs_worker", "gpu_lock_wait"} <= set(first.durations_s)
        assert "baseline_timing" in first.durations_s
        if not second.contention["retimed"]:  # foreign load on the box re-times the baseline with the kernel
            assert "baseline_timing" not in second.durations_s
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


@pytest.mark.slow
def test_reference_worker_locks_the_gpu_itself_around_its_device_work(demo: Suite, tmp_path, monkeypatch) -> None:
    """The judge does not hold the GPU lock while a reference prepares (building a large model
    on the host takes seconds other scorers need not wait for): the worker takes the lock's
    shared side itself, so it waits while another scorer times, and goes on once that ends."""
    import time

    from scorer.gpu.lock import LOCK_DIR_ENV
    from scorer.workers.process import WorkerDirs, WorkerProcess
    from tests.scorer.conftest import timing_elsewhere

    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))  # the worker inherits it
    task = demo.tasks["swish"]
    header = {"op": "prepare", "task_path": str(task.path), "device": "cpu", "overrides": dict(task.test_shapes),
              "init_seed": 1, "seeds": [2, 3], "alt_shapes": [], "fp64": True, "task": {},
              "rule": {"rtol": 1e-5, "atol": 1e-8, "exact": False, "deterministic": True}, "gpu_lock": "GPU-test"}
    with WorkerProcess("reference", WorkerDirs.create(tmp_path, "reference")) as worker:
        assert worker.wait_started(120)
        with timing_elsewhere("GPU-test", 1.5) as released_at:
            reply = worker.request(header, None, 120)
            answered_at = time.monotonic()
    assert reply.header.get("ok"), reply.header
    assert answered_at >= released_at - 0.05, "the reference computed outputs while another scorer held the GPU"
    assert set(reply.header["steps_s"]) >= {"build", "outputs"}


def test_pool_grows_to_its_depth_on_a_gpu_once_a_scoring_waited_for_its_worker() -> None:
    """Back to back on a GPU a scoring outruns its successor's start: a wait for a pooled worker
    makes the session keep three starting ahead at once. A wait with a cold worker, or on a CPU,
    changes nothing."""
    with ScoringSession(OPTIONS) as session:
        session._deepen_if_waited("cuda", False, 2.5)
        session._deepen_if_waited("cpu", True, 2.5)
        session._deepen_if_waited("cuda", True, 0.01)
        assert session._depth == {}
        session._deepen_if_waited("cuda", True, 2.5)  # one wait: as deep as it grows
        assert session._depth == {"cuda": 3}
        session._deepen_if_waited("cuda", True, 2.5)
        assert session._depth == {"cuda": 3}
        # Started for real (this machine has no GPU: the workers skip the context and wait).
        session._start_ahead("cuda")
        pool = session._pool["cuda"]
        assert len(pool) == 3 and all(w.proc.poll() is None for w in pool)
        session._start_ahead("cpu")
        assert len(session._pool["cpu"]) == 1
