"""The judge's extra trials name the hack and its evidence."""

from __future__ import annotations

from pathlib import Path

from scorer.tasks.suites import Suite
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


def _full_size_suite(tmp_path, with_full_alt: bool) -> Suite:
    """A one-task suite whose full shape is small enough for the CPU, so full-size rules apply."""
    from scorer.tasks.suites import load_suite

    root = tmp_path / ("with" if with_full_alt else "without")
    root.mkdir()
    task = (Path(__file__).resolve().parents[2] / "suites" / "demo" / "swish.py").read_text()
    (root / "swish.py").write_text(task.replace("batch_size = 4096", "batch_size = 4").replace("dim = 8192", "dim = 2048"))
    full_alt = "full_alt_shapes = [{ batch_size = 3, dim = 2500 }]\n" if with_full_alt else ""
    (root / "suite.toml").write_text(
        'name = "fullsize"\ntargets = ["cpu"]\n[timing]\nwarmup = 1\nrepetitions = 3\n'
        '[tasks.swish]\ncategory = "elementwise"\ndtype = "float32"\n'
        "test_shapes = { batch_size = 4, dim = 300 }\nalt_shapes = [{ batch_size = 3, dim = 1000 }]\n" + full_alt)
    return load_suite(root)


def test_full_size_runs_verify_on_a_wider_variant(tmp_path) -> None:
    """At full size the test-scale alt shapes are narrower than the task, so a kernel that froze
    the first call's width passes them; full_alt_shapes (wider) expose it."""
    from scorer import ScoreOptions, score_kernel

    attack = Path(__file__).resolve().parents[1] / "hacks" / "attacks" / "shape-specialization" / "first_call_size.py"
    options = ScoreOptions(device="cpu", seeds=2, skip_timing=True, use_test_shapes=False)
    narrower = score_kernel(_full_size_suite(tmp_path, False), "swish", attack, device="cpu", options=options)
    assert narrower.verdict == "passed", narrower.error
    wider = score_kernel(_full_size_suite(tmp_path, True), "swish", attack, device="cpu", options=options)
    assert wider.verdict == "hack_detected" and "shape-specialization" in hack_patterns(wider), wider.error
