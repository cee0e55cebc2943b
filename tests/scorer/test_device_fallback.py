"""A torch fallback for inputs off the GPU is left alone statically (dead code on a GPU) and caught
at run time where it does run, so a CPU score never credits it."""

from __future__ import annotations

from scorer.checks.static import analyze_source
from scorer.tasks.suites import Suite
from tests.scorer.conftest import KERNELS, hack_patterns, score_file


def test_fallback_branch_is_not_a_static_finding(demo: Suite) -> None:
    path = KERNELS / "cpu_fallback_branch.py"
    assert analyze_source(path.read_text(), str(path), demo.policy, task_dtype="float32") == []


def test_fallback_that_runs_on_cpu_is_reported_by_the_monitor(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "cpu_fallback_branch.py")
    assert score.verdict == "hack_detected"
    assert "baseline-library-call" in hack_patterns(score)
    ran = [h["evidence"] for h in score.hacks if h["pattern"] == "baseline-library-call"]
    assert any("of forward's work" in e and "torch.sigmoid" in e for e in ran), ran
