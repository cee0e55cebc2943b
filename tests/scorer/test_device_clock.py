"""The device-timed batch: its bound and rules (CPU), the release that opens its gate (real
threads), which task inputs it can slab (real torch), and the whole path on a GPU (skipped
without one)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import torch

from scorer import ScoreOptions, score_kernel
from scorer.judge.clock import (
    DEVICE_MAX_CALLS,
    DeviceSpan,
    device_calls,
    device_findings,
)
from scorer.judge.device_release import ReleaseOnce
from scorer.tasks.suites import Suite
from scorer.workers import reference_gate


def test_the_device_bound_takes_the_round_trips_off_and_divides_by_the_calls() -> None:
    assert DeviceSpan(calls=10, total_ms=12.0, round_trip_ms=1.0).bound_ms() == pytest.approx(1.0)
    assert DeviceSpan(calls=4, total_ms=1.0, round_trip_ms=3.0).bound_ms() == 0.0


def test_times_below_the_device_bound_over_the_ratio_are_a_forged_clock() -> None:
    span = DeviceSpan(calls=10, total_ms=12.0, round_trip_ms=1.0)  # 1 ms a call
    forged = device_findings([0.3] * 20, span)
    assert [f.pattern for f in forged] == ["timer-patching"] and "behind a gate" in forged[0].evidence
    assert device_findings([0.5] * 20, span) == []
    # The upper quartile is held, so a few slow repetitions do not rescue a forged median.
    assert device_findings([0.1] * 15 + [5.0] * 5, span) != []
    assert device_findings([float("nan")] * 4, span) == []  # not a time: another rule's (reported_timing)


def test_the_device_batch_is_long_enough_and_fits_the_launch_queue() -> None:
    assert device_calls(0.05, 4096) == DEVICE_MAX_CALLS  # a small kernel: capped by the queue
    assert device_calls(10.0, 4096) == 3  # a slow one: the least
    assert device_calls(1.0, 16) == 16  # never more than the fresh batch's seeds
    assert device_calls(0.0, 4096) == DEVICE_MAX_CALLS


def test_the_release_opens_the_gate_once_on_the_reply() -> None:
    opened: list[str] = []
    with ReleaseOnce(lambda: opened.append(threading.current_thread().name), after_s=5.0) as release:
        pass  # the worker replied at once
    assert opened == [threading.current_thread().name] and not release.by_timer
    assert release.released_at is not None


def test_the_release_opens_the_gate_after_the_delay_when_the_worker_waits_for_it() -> None:
    opened = threading.Event()
    with ReleaseOnce(opened.set, after_s=0.05) as release:
        # A forward that waits for the device: its worker replies only once the gate is open.
        assert opened.wait(10), "the delay never opened the gate"
    assert release.by_timer


def test_a_failed_release_in_the_timer_is_raised_in_the_judges_thread() -> None:
    def fails() -> None:
        raise RuntimeError("the reference worker is gone")

    with pytest.raises(RuntimeError, match="reference worker is gone"):
        with ReleaseOnce(fails, after_s=0.01):
            time.sleep(0.2)


def test_the_batch_fits_a_share_of_the_free_memory() -> None:
    gib = 1 << 30
    assert reference_gate.calls_that_fit(gib, 40 * gib) == 8  # a fifth of 40 GiB
    assert reference_gate.calls_that_fit(gib, 400 * gib) == 12  # the cap
    assert reference_gate.calls_that_fit(3 * gib, 10 * gib) == 0  # none: no device-timed batch


def _inputs(values: list[list[object]]):
    return lambda row: values[row]


def test_inputs_are_stacked_where_every_call_has_the_same_arguments_besides_its_tensors() -> None:
    warm = [torch.zeros(3, 4), 7, None]
    rows = [[torch.full((3, 4), float(i)), 7, None] for i in range(5)]
    staged, why = reference_gate.draw(5, _inputs(rows), warm)
    assert why == "" and len(staged) == 1 and staged[0].shape == (5, 3, 4)
    assert torch.equal(staged[0][3], torch.full((3, 4), 3.0))


@pytest.mark.parametrize(("rows", "reason"), [
    ([[torch.zeros(3, 4), 7, None], [torch.zeros(3, 4), 8, None]], "not a tensor differs"),
    ([[[torch.zeros(3, 4)], 7, None]] * 2, "inside a container"),
    ([[torch.zeros(3, 5), 7, None]] * 2, "shape or dtype"),
    ([[torch.zeros(3, 4, dtype=torch.float16), 7, None]] * 2, "shape or dtype"),
    ([[torch.zeros(3, 4), 7]] * 2, "number of inputs"),
])
def test_inputs_that_cannot_be_slabbed_are_named(rows: list[list[object]], reason: str) -> None:
    staged, why = reference_gate.draw(len(rows), _inputs(rows), [torch.zeros(3, 4), 7, None])
    assert staged == [] and reason in why


# --- on a GPU ---------------------------------------------------------------------------------

_needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

SYNCING = """

_Honest = ModelNew


class ModelNew(_Honest):
    def forward(self, *args):
        out = super().forward(*args)
        float(out.float().abs().amax())  # reads a value on the host: waits for the device
        return out
"""


@pytest.mark.gpu
@_needs_cuda
def test_an_honest_kernel_reads_near_its_events_in_the_device_timed_batch(demo: Suite) -> None:
    solution = demo.tasks["softmax"].solution
    assert solution is not None
    score = score_kernel(demo, "softmax", solution, device="cuda", options=ScoreOptions(device="cuda"))
    assert score.verdict == "passed", score.error or score.hacks
    t = score.timing
    assert t is not None and t.judge_device_ms is not None and t.judge_device_calls >= 3, t.judge_device_note
    assert not t.floored, (t.kernel_ms, t.judge_device_ms, t.judge_bound_ms)


@pytest.mark.gpu
@_needs_cuda
def test_a_forward_that_waits_for_the_device_gets_its_gate_opened_after_the_delay(demo: Suite, tmp_path: Path) -> None:
    solution = demo.tasks["softmax"].solution
    assert solution is not None
    kernel = tmp_path / "kernel.py"
    kernel.write_text(solution.read_text() + SYNCING)
    score = score_kernel(demo, "softmax", kernel, device="cuda", options=ScoreOptions(device="cuda"))
    assert score.verdict == "passed", score.error or score.hacks
    t = score.timing
    assert t is not None and t.judge_device_ms is not None and "opened after" in t.judge_device_note
