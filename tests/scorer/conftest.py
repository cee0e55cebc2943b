"""Shared fixtures: the demo suite and scoring options sized for a 2-core CPU box."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scorer import ScoreOptions, score_kernel
from scorer.score import Score
from scorer.tasks.suites import Suite, load_suite

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


@contextmanager
def timing_elsewhere(gpu_key: str, for_s: float) -> Iterator[float]:
    """Another scorer holds the GPU lock exclusively (as its timing does) from now for `for_s`
    seconds; yields the monotonic time it lets go. Joined on exit."""
    from scorer.gpu.lock import hold_gpu

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with hold_gpu(gpu_key):
            held.set()
            release.wait(for_s + 30)

    other = threading.Thread(target=hold)
    other.start()
    assert held.wait(10), f"the other scorer never got {gpu_key}'s lock"
    releases_at = time.monotonic() + for_s
    threading.Timer(for_s, release.set).start()
    try:
        yield releases_at
    finally:
        other.join()
