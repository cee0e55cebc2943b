"""The judge's own decisions: how many repetitions fit the stage, the floor under the kernel's
reported time, and the typed replies' exact counts and finite figures."""

from __future__ import annotations

import json
import math

import pytest

from scorer.checks.dynamic import LibraryCallMonitor
from scorer.judge.clock import FLOOR_RATIO, BatchClock, floor_speedup
from scorer.judge.rep_budget import MIN_REPETITIONS, timed_subset
from scorer.score import TimingResult
from scorer.workers import replies
from scorer.workers.protocol import ProtocolViolation
from tests.scorer.test_in_process_rulings import NOTHING_SEEN


def test_a_slow_call_times_a_subset_that_keeps_every_kept_repetition_in_order() -> None:
    picked, why = timed_subset(100, [7, 93], call_s=2.6, warmup=2, limit_s=300.0)
    assert {7, 93} <= set(picked) and picked == sorted(picked)
    assert len(picked) == int(0.5 * 300 / 2.6) - 2
    assert "of 100 repetitions timed" in why and "2.6 s" in why
    assert timed_subset(100, [7, 93], call_s=0.01, warmup=2, limit_s=300.0) == (list(range(100)), "")
    few, _ = timed_subset(100, [1, 2], call_s=1000.0, warmup=2, limit_s=300.0)
    assert len(few) == MIN_REPETITIONS
    assert timed_subset(100, [1], call_s=float("nan"), warmup=2, limit_s=300.0)[0] == list(range(100))


def test_a_time_below_the_judge_floor_counts_as_the_floor() -> None:
    clock = BatchClock(calls=4, total_ms=4 * 8.0, round_trip_ms=0.0, round_trips=2, overhead_ms_per_call=0.0)
    forged = TimingResult(baseline_ms=4.0, kernel_ms=0.01, speedup=400.0)
    floor_speedup(forged, clock)
    assert forged.floored and forged.judge_floor_ms == pytest.approx(8.0 / FLOOR_RATIO)
    assert forged.speedup == pytest.approx(4.0 / (8.0 / FLOOR_RATIO))
    honest = TimingResult(baseline_ms=4.0, kernel_ms=6.0, speedup=4.0 / 6.0)
    floor_speedup(honest, clock)
    assert not honest.floored and honest.speedup == pytest.approx(4.0 / 6.0)


def _timing_header(**changes):
    header = {"ok": True, "timer": "cpu/perf_counter", "times_ms": [1.0, 2.0, 3.0], "host_times_ms": [1.0, 2.0, 3.0],
              "event_times_ms": None, "drain_ms": None, "idle_drain_ms": None, "gate": "", "gate_ms": None,
              "launch_window": {"open": 0, "watched": 0}, "guard": NOTHING_SEEN, "turns": [], "kept": [],
              "worker_s": 0.5,
              "library": LibraryCallMonitor(frozenset()).observe()}
    header.update(changes)
    return header


@pytest.mark.parametrize("changes", [
    {"times_ms": [1.0, 2.0]},                      # a repetition missing
    {"times_ms": [1.0, 2.0, 3.0, 4.0]},            # one more than asked
    {"times_ms": [1.0, math.nan, 3.0]},            # not finite
    {"times_ms": [1.0, -2.0, 3.0]},                # negative
    {"times_ms": [1.0, True, 3.0]},                # not a number
    {"event_times_ms": [1.0, 1.0, 1.0]},           # device events on a CPU
    {"findings": [{"pattern": "made-up", "evidence": "x", "severity": "reject"}]},
    {"findings": [{"pattern": "timer-patching", "evidence": "x"}]},
    {"extra": 1},
    {"launch_window": {"open": 1.5, "watched": 0}},
    {"worker_s": math.inf},
])
def test_a_timing_reply_off_the_protocol_is_a_violation(changes) -> None:
    header = _timing_header(**changes)
    with pytest.raises(ProtocolViolation):
        replies.TimeReply.parse(header, 3, on_gpu=False, kept=[])
        replies.worker_seconds(header)


def test_a_well_formed_timing_reply_parses_into_its_figures() -> None:
    parsed = replies.TimeReply.parse(_timing_header(), 3, on_gpu=False, kept=[])
    assert parsed.times_ms == [1.0, 2.0, 3.0] and parsed.launch_window == {"open": 0, "watched": 0}


def test_correctness_replies_name_exactly_the_trials_the_judge_asked_for() -> None:
    trials = replies.correctness_trials(2, 1)
    assert trials == ["seed-0", "seed-1", "repeat-0", "refill-0-with-1", "alt-0"]
    call = {"devices": ["cpu"], "mutated": [], "error": None,
            "output": {"items": [], "error": None}, "library": LibraryCallMonitor(frozenset()).observe()}
    launches = {"triton_defined": ["k"], "cuda_defined": [], "triton_in_source": True, "triton_launched": {"k": 1},
                "device_kernels": None}
    header = {"ok": True, "calls": [{"trial": t, **call} for t in trials], "input_digests": ["a", "b"],
              "guard": NOTHING_SEEN, "turns": [], "gpu_lock_wait_s": 0.0, "launches": launches}
    assert [c.trial for c in replies.CorrectnessReply.parse(header, trials).calls] == trials
    for calls in (header["calls"][:-1], header["calls"][::-1], header["calls"] + header["calls"][:1]):
        with pytest.raises(ProtocolViolation):
            replies.CorrectnessReply.parse({**header, "calls": calls}, trials)
    with pytest.raises(ProtocolViolation):
        replies.CorrectnessReply.parse({**header, "input_digests": ["a"]}, trials)


def test_nan_from_an_untrusted_sender_is_refused_as_the_frame_is_read(tmp_path) -> None:
    import os

    from scorer.workers.protocol import PROTOCOL_VERSION, recv_frame

    read, write = os.pipe()
    body = json.dumps({"ok": True, "times_ms": [float("nan")], "v": PROTOCOL_VERSION}).encode()
    os.write(write, len(body).to_bytes(4, "big") + body)
    with pytest.raises(ProtocolViolation):
        recv_frame(read, trusted=False)
    stale = json.dumps({"ok": True, "v": PROTOCOL_VERSION - 1}).encode()
    os.write(write, len(stale).to_bytes(4, "big") + stale)
    with pytest.raises(ProtocolViolation):
        recv_frame(read, trusted=False)
    os.close(read)
    os.close(write)


def test_on_a_cpu_the_floor_is_also_the_batch_calls_cpu_time() -> None:
    """A forged clock cannot cut the CPU time the scheduler counts: on a CPU the kernel's time counts
    as at least CPU_FLOOR_SHARE of its batch calls' CPU time (less the calibration and the slack),
    so a clock forged inside the ratio rule's margin gains at most about 1 / CPU_FLOOR_SHARE."""
    from scorer.judge.clock import CPU_FLOOR_SHARE, CPU_SLACK_MS

    clock = BatchClock(3, 3 * 40.0 + 0.6, 0.3, 2, 2.0, batch_cpu_ms_per_call=38.0)
    forged = TimingResult(device="cpu", baseline_ms=40.0, kernel_ms=40.0 / 3)
    floor_speedup(forged, clock)
    assert forged.judge_cpu_ms == pytest.approx(36.0)
    assert forged.floored and forged.judge_floor_ms == pytest.approx(36.0 * CPU_FLOOR_SHARE - CPU_SLACK_MS)
    assert forged.speedup == pytest.approx(40.0 / forged.judge_floor_ms) and forged.speedup < 1.7
    honest = TimingResult(device="cpu", baseline_ms=40.0, kernel_ms=36.5, speedup=40.0 / 36.5)
    floor_speedup(honest, clock)
    assert not honest.floored and honest.speedup == pytest.approx(40.0 / 36.5)
    # Without the scheduler's count (a GPU) the floor is the batch's wall time over FLOOR_RATIO.
    gpu = TimingResult(device="cuda", baseline_ms=40.0, kernel_ms=40.0 / 3)
    floor_speedup(gpu, BatchClock(3, 3 * 40.0 + 0.6, 0.3, 2, 2.0))
    assert gpu.judge_cpu_ms is None and not gpu.floored
