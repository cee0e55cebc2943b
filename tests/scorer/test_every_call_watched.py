"""Every call of forward whose work counts is held to the library-call rule on its own, through the
real scorer (CPU): a kernel that computes with its own kernel on the calls it can guess are
watched and lets the library do the work on one timed repetition, or only in the judge-clocked
batch, is caught there. Before, the timed repetitions were judged summed (19 honest repetitions
hid the 20th) and the batch's calls were not watched at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.checks import static as static_checks
from tests.scorer.conftest import score_file


@pytest.fixture(autouse=True)
def _monitor_alone(monkeypatch):
    """The kernels reach the library through a name built at run time, which the static dialect
    refuses on its own (obfuscated-code); switched off here, the monitor must catch them alone."""
    monkeypatch.setattr(static_checks, "analyze_source", lambda *args, **kwargs: [])

# Counts its calls (each ModelNew its own: an alternative shape builds a fresh one) and takes a
# library sigmoid, reached by a name built at run time, on the calls in DODGE or after AFTER.
_COUNTING_DODGER = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

NAME = "diomgis"
DODGE = {dodge!r}
AFTER = {after!r}


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls in DODGE or (AFTER is not None and self.calls > AFTER):
            return getattr(x, NAME[::-1])() * x
        out = torch.empty_like(x)
        n = x.numel()
        _swish[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
'''

# With seeds=2 the main model's correctness calls are seed-0, seed-1, repeat-0 and refill-0-with-1
# (the alternative shape runs on a model of its own); then the timed stage's warm-up and repetitions
# (on a CPU exactly `warmup` warm-up calls), then the batch's one warm-up call and the batch.
_TRIALS, _WARMUP, _REPS = 4, 2, 20


def _kernel(tmp_path: Path, dodge: set[int], after: int | None) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(_COUNTING_DODGER.format(dodge=sorted(dodge), after=after))
    return path


def _library_findings(score) -> list[str]:
    return [h["evidence"] for h in score.hacks if h["pattern"] == "baseline-library-call"]


@pytest.mark.slow
def test_an_honest_counting_kernel_passes(demo, tmp_path: Path) -> None:
    score = score_file(demo, "swish", _kernel(tmp_path, set(), None), seeds=2, warmup=_WARMUP, repetitions=_REPS)
    assert score.verdict == "passed" and not score.hacks, score.error


@pytest.mark.slow
def test_one_timed_repetition_on_the_library_is_caught(demo, tmp_path: Path) -> None:
    sixth_rep = _TRIALS + _WARMUP + 6
    score = score_file(demo, "swish", _kernel(tmp_path, {sixth_rep}, None), seeds=2, warmup=_WARMUP,
                       repetitions=_REPS)
    found = _library_findings(score)
    assert score.verdict == "hack_detected" and found, f"{score.verdict}: {score.hacks} {score.error}"
    assert any(e.startswith("while timed: 1 of 20 watched calls") and "(call 6)" in e and "sigmoid" in e
               for e in found), found


@pytest.mark.slow
def test_library_work_only_in_the_judge_clocked_batch_is_caught(demo, tmp_path: Path) -> None:
    before_batch = _TRIALS + _WARMUP + _REPS + 1
    options = dict(seeds=2, warmup=_WARMUP, repetitions=_REPS)
    score = score_file(demo, "swish", _kernel(tmp_path, set(), before_batch), **options)
    found = _library_findings(score)
    assert score.verdict == "hack_detected" and found, f"{score.verdict}: {score.hacks} {score.error}"
    if not score.contention["retimed"]:  # a second timed stage would have met the library calls first
        assert any(e.startswith("in the judge-clocked batch: ") and "sigmoid" in e for e in found), found
        assert score.timing is not None and score.timing.judge_bound_ms is None  # it stopped at the batch
