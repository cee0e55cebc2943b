"""The four demo Triton solutions pass end to end (TRITON_INTERPRET=1, CPU test shapes)."""

from __future__ import annotations

import math

import pytest

from scorer.score import SCORE_VERSION
from scorer.tasks.suites import Suite
from tests.scorer.conftest import score_file


@pytest.mark.parametrize("task", ["swish", "row_sum", "softmax", "add_rmsnorm"])
def test_demo_solution_passes(demo: Suite, task: str) -> None:
    solution = demo.tasks[task].solution
    assert solution is not None
    score = score_file(demo, task, solution)
    assert score.verdict == "passed", score.error
    assert score.hacks == []
    assert score.correctness is not None
    assert score.correctness.trials >= 5 and score.correctness.passed == score.correctness.trials
    assert score.correctness.max_abs_error is not None and score.correctness.max_abs_error < 1e-3
    timing = score.timing
    assert timing is not None and timing.timer == "cpu/perf_counter" and timing.device == "cpu"
    assert len(timing.kernel_times_ms) == 3 and len(timing.baseline_times_ms) == 3
    assert timing.speedup is not None and math.isclose(timing.speedup, timing.baseline_ms / timing.kernel_ms)
    env = score.environment
    assert env["torch"] and env["python"] and env["scorer_version"] and "triton" in env
    assert score.schema_version == SCORE_VERSION and len(score.kernel_sha256 or "") == 64
