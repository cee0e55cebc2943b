"""Shared fixtures: the demo suite and scoring options sized for a 2-core CPU box."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer import ScoreOptions, score_kernel
from scorer.score import Score
from scorer.suites import Suite, load_suite

KERNELS = Path(__file__).parent / "kernels"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def demo() -> Suite:
    return load_suite("demo")


def fast_options(**overrides: object) -> ScoreOptions:
    base = dict(device="cpu", repetitions=3, warmup=1, load_s=60, correctness_s=60, timing_s=60)
    base.update(overrides)
    return ScoreOptions(**base)  # type: ignore[arg-type]


def score_file(suite: Suite, task: str, kernel: Path, **overrides: object) -> Score:
    return score_kernel(suite, task, kernel, device="cpu", options=fast_options(**overrides))


def hack_patterns(score: Score) -> set[str]:
    return {h["pattern"] for h in score.hacks}
