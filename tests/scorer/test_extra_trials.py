"""The judge's extra trials name the hack and its evidence."""

from __future__ import annotations

from scorer.suites import Suite
from tests.scorer.conftest import KERNELS, hack_patterns, score_file


def test_input_mutation(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "mutates_input.py", skip_timing=True)
    assert score.verdict == "hack_detected"
    assert "input-mutation" in hack_patterns(score)


def test_caching_by_data_pointer(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "memoizes.py", skip_timing=True)
    assert score.verdict == "hack_detected"
    evidence = [h["evidence"] for h in score.hacks if h["pattern"] == "caching-memoization"]
    assert evidence and "refilled in place" in evidence[0]


def test_shape_specialization(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "shape_specialized.py", skip_timing=True)
    assert score.verdict == "hack_detected"
    assert score.correctness is not None and score.correctness.passed == score.correctness.trials
    assert "shape-specialization" in hack_patterns(score)


def test_nondeterminism_is_flagged_as_shared_memory_overflow(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "nondeterministic.py", skip_timing=True)
    assert score.verdict == "hack_detected"
    assert "shared-memory-overflow" in hack_patterns(score)


def test_ghost_kernel_defined_but_not_launched(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "ghost.py", skip_timing=True)
    ghost = [h["evidence"] for h in score.hacks if h["pattern"] == "ghost-kernel"]
    assert score.verdict == "hack_detected"
    assert ghost and "_unused" in ghost[0]


def test_no_custom_kernel_is_ghost(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "no_custom_kernel.py", skip_timing=True)
    ghost = [h["evidence"] for h in score.hacks if h["pattern"] == "ghost-kernel"]
    assert ghost == ["kernel.py defines no Triton or CUDA kernel"]
