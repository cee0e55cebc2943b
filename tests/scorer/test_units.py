"""Pure pieces: frames, comparison, suite arithmetic, Score serialisation, the timer."""

from __future__ import annotations

import json
import math
import os
import pickle
import time
from pathlib import Path

import pytest
import torch

from scorer.aggregate import KernelResult, summarize
from scorer.correctness.compare import Rule, compare_outputs, first_difference
from scorer.gpu.timing import TimingPlan, capture_clock, median_and_spread, time_forward
from scorer.score import Score, TimingResult
from scorer.workers import protocol

ALLCLOSE = Rule(1e-3, 1e-3, False)
EXACT = Rule(0, 0, True)


def test_frame_round_trip_with_tensors(tmp_path: Path) -> None:
    r, w = os.pipe()
    spool = protocol.Spool(tmp_path / "spool")
    payload = {"x": [torch.arange(6.0).reshape(2, 3)], "n": 3}
    protocol.send_frame(w, {"op": "run", "k": [1, 2]}, payload, spool=spool, payload_name="request-1.pt")
    frame = protocol.recv_frame(r, time.monotonic() + 5, spool=spool, expect_payload="request-1.pt")
    assert frame.header == {"op": "run", "k": [1, 2]}
    assert torch.equal(frame.payload["x"][0], payload["x"][0]) and frame.payload["n"] == 3
    assert list(spool.path.iterdir()) == [], "a payload file is removed once read"
    os.close(r), os.close(w)


def test_typed_request_round_trips_and_refuses_keys_off_its_list() -> None:
    """Both sides read a request through its class: a key one side forgot, renamed or added
    fails loudly instead of a default silently taking its place."""
    request = protocol.KernelBatch(seeds=[1, 2, 3])
    header = {**request.header(), "reply_file": "reply-1.pt"}  # the transport's key is not the op's
    assert protocol.parse_request(header, protocol.KERNEL_REQUESTS) == request
    with pytest.raises(protocol.ProtocolViolation, match="missing keys \\['seeds'\\]"):
        protocol.parse_request({"op": "batch"}, protocol.KERNEL_REQUESTS)
    with pytest.raises(protocol.ProtocolViolation, match="unknown keys \\['seed'\\]"):
        protocol.parse_request({"op": "batch", "seeds": [1], "seed": 1}, protocol.KERNEL_REQUESTS)
    with pytest.raises(protocol.ProtocolViolation, match="unknown op"):
        protocol.parse_request({"op": "sample"}, protocol.KERNEL_REQUESTS)  # a reference op
    # The same op name means another message for the other role.
    ref_batch = protocol.parse_request({"op": "batch", "mode": "regen"}, protocol.REFERENCE_REQUESTS)
    assert isinstance(ref_batch, protocol.ReferenceBatch) and ref_batch.mode == "regen"
    # Optional keys may be left out, and only those.
    assert protocol.parse_request({"op": "attach"}, protocol.REFERENCE_REQUESTS) == protocol.ReferenceAttach()


class _Evil:
    def __reduce__(self) -> tuple[object, ...]:
        return (print, ("pwned",))


def test_payload_that_would_run_code_is_refused(tmp_path: Path) -> None:
    spool = protocol.Spool(tmp_path / "spool")
    torch.save({"x": _Evil()}, spool.path / "reply-1.pt", pickle_module=pickle)
    with pytest.raises(protocol.ProtocolViolation):
        spool.take("reply-1.pt", trusted=False)


def test_untrusted_payload_must_be_the_named_plain_file(tmp_path: Path) -> None:
    """A kernel worker could point its reply at a judge-side file (symlink, hard link), or
    block the judge on a FIFO; each is refused rather than read."""
    spool = protocol.Spool(tmp_path / "spool")
    secret = tmp_path / "reference-outputs.pt"
    torch.save({"out": torch.ones(3)}, secret)
    (spool.path / "reply-1.pt").symlink_to(secret)
    os.link(secret, spool.path / "reply-2.pt")
    os.mkfifo(spool.path / "reply-3.pt")
    for name in ("reply-1.pt", "reply-2.pt", "reply-3.pt", "../reference-outputs.pt"):
        with pytest.raises(protocol.ProtocolViolation):
            spool.take(name, trusted=False)
    r, w = os.pipe()
    spool.put("reply-4.pt", {"out": torch.zeros(3)})
    protocol.send_frame(w, {"ok": True, protocol.PAYLOAD_KEY: "reply-4.pt"})
    with pytest.raises(protocol.ProtocolViolation, match="expected 'reply-5.pt'"):
        protocol.recv_frame(r, time.monotonic() + 1, spool=spool, expect_payload="reply-5.pt")
    os.close(r), os.close(w)


def test_read_times_out_and_detects_close() -> None:
    r, w = os.pipe()
    with pytest.raises(protocol.ChannelTimeout):
        protocol.recv_frame(r, time.monotonic() + 0.2)
    os.close(w)
    with pytest.raises(protocol.ChannelClosed):
        protocol.recv_frame(r, time.monotonic() + 1)
    os.close(r)


def test_garbage_frame_is_a_protocol_violation() -> None:
    r, w = os.pipe()
    os.write(w, b"\x00\x00\x00\x05not{j")
    with pytest.raises(protocol.ProtocolViolation):
        protocol.recv_frame(r, time.monotonic() + 1)
    os.close(r), os.close(w)


def test_compare_allclose_exact_shape_dtype_nan() -> None:
    e = torch.ones(4, 4)
    assert compare_outputs([e + 5e-4], [e], ALLCLOSE).ok
    near = compare_outputs([e + 5e-4], [e], EXACT)
    assert not near.ok and near.mismatch_fraction == 1.0
    assert "shape" in compare_outputs([torch.ones(4, 5)], [e], ALLCLOSE).reason
    assert "dtype" in compare_outputs([e.double()], [e], ALLCLOSE).reason
    poisoned = e.clone()
    poisoned[0, 0] = float("nan")
    res = compare_outputs([poisoned], [e], ALLCLOSE)
    assert not res.ok and math.isinf(res.max_abs_error) and "1 NaN" in res.reason
    assert compare_outputs([torch.tensor([float("inf")])], [torch.tensor([float("inf")])], ALLCLOSE).ok
    assert not compare_outputs([e], [e, e], ALLCLOSE).ok


def test_compare_reports_errors() -> None:
    res = compare_outputs([torch.tensor([1.0, 2.5])], [torch.tensor([1.0, 2.0])], ALLCLOSE)
    assert res.max_abs_error == pytest.approx(0.5) and res.max_rel_error == pytest.approx(0.25)
    assert res.mismatch_fraction == pytest.approx(0.5)


def test_first_difference() -> None:
    a = torch.zeros(3, 3)
    b = a.clone()
    assert first_difference(a, b) is None
    b[2, 1] = 0.25
    assert first_difference(a, b) == (0.25, (2, 1))


def test_suite_arithmetic_strict_method_counts_failures_as_zero() -> None:
    """The strict variant (the published method is tested in tests/orchestrator/test_leaderboard.py)."""
    results = [KernelResult("a", "passed", 2.0), KernelResult("b", "passed", 0.5),
               KernelResult("c", "incorrect", 9.0), KernelResult("d", "passed", 4.0)]
    s = summarize(results, method="strict")
    assert s.solved == 3 and s.pass_rate == 0.75
    assert s.mean_speedup == pytest.approx(6.5 / 4)
    assert s.median_speedup == pytest.approx(1.25)
    assert s.score == pytest.approx(6.5 / 4 * 1.25 * 0.75)
    assert s.geomean_speedup == pytest.approx((2.0 * 0.5 * 4.0) ** (1 / 3))
    assert s.fast_p == 0.5
    assert summarize([]).score == 0.0


def test_score_round_trip_and_atomic_write(tmp_path: Path) -> None:
    score = Score(suite="demo", task="swish", verdict="passed",
                  timing=TimingResult(device="cpu", timer="cpu/perf_counter", baseline_ms=1.0, kernel_ms=0.5, speedup=2.0,
                                      kernel_times_ms=[0.123456789012345]))
    path = tmp_path / "score.json"
    score.write(path)
    back = Score.read(path)
    assert back == score and back.timing is not None
    assert back.timing.kernel_times_ms == [0.123456789012345]  # raw times are not rounded
    assert [p.name for p in tmp_path.iterdir()] == ["score.json"]
    data = json.loads(path.read_text())
    # A figure an older scorer of this schema wrote (timing.judge_window_ms) does not stop it reading.
    data["timing"]["judge_window_ms"] = 0.4
    assert Score.from_dict(data) == score
    data["schema_version"] = 99
    with pytest.raises(ValueError, match="schema_version"):
        Score.from_dict(data)


def test_infinite_errors_serialise_as_null(tmp_path: Path) -> None:
    from scorer.score import CorrectnessResult

    score = Score(suite="s", task="t", verdict="incorrect",
                  correctness=CorrectnessResult(1, 0, float("inf"), float("nan"), 1.0, "exact"))
    data = json.loads(score.to_json())
    assert data["correctness"]["max_abs_error"] is None and data["correctness"]["max_rel_error"] is None


def test_timer_uses_clock_captured_before_patching(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = capture_clock()
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)  # what a kernel could do after import
    calls: list[int] = []

    def fn(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        time.sleep(0.002)
        return x * 2

    sets = [[torch.full((4,), float(i))] for i in range(3)]
    run = time_forward(fn, sets[0], lambda r: sets[r % 3], TimingPlan(warmup=2, repetitions=7, flush_l2=True),
                       torch.device("cpu"), clock, on_output=lambda rep, out: out if rep == 4 else None)
    assert len(calls) == 9 and len(run.times_ms) == 7 and run.timer == "cpu/perf_counter"
    assert all(t >= 1.5 for t in run.times_ms)  # real sleeps measured despite the patch
    assert torch.equal(run.kept_outputs[4], sets[4 % 3][0] * 2)


def test_every_timed_call_and_only_those_runs_inside_around() -> None:
    """The library-call monitor wraps each timed call itself: no timed call runs unwatched, and
    no extra call on repeated inputs marks the watched ones."""
    seen: list[tuple[float, bool]] = []
    inside = [False]

    def fn(x: torch.Tensor) -> torch.Tensor:
        seen.append((float(x[0]), inside[0]))
        return x + 0

    def around(call):
        inside[0] = True
        try:
            return call()
        finally:
            inside[0] = False

    sets = [[torch.full((4,), float(i))] for i in range(3)]
    run = time_forward(fn, sets[0], lambda r: sets[r % 3], TimingPlan(warmup=1, repetitions=6, flush_l2=False),
                       torch.device("cpu"), capture_clock(), around=around)
    assert len(run.times_ms) == 6
    assert seen == [(0.0, False)] + [(float(r % 3), True) for r in range(6)]  # warm-up, then each rep once


def test_median_and_spread() -> None:
    med, spread = median_and_spread([1.0, 2.0, 3.0, 4.0, 100.0])
    assert med == 3.0 and spread == pytest.approx((4.0 - 2.0) / 3.0)


def test_timed_reps_draw_fresh_inputs_after_dropping_the_last() -> None:
    """Each rep gets its own inputs, drawn once, in order, after the previous rep's set is gone: a
    memo keyed by pointer and version that hits on a reused buffer returns a stale result, which
    the kept outputs expose (the judge compares them with the reference for their own seeds)."""
    import weakref

    drawn: list[int] = []
    alive: list[weakref.ref] = []

    def inputs_for(rep: int) -> list[torch.Tensor]:
        assert all(r() is None for r in alive), "the previous rep's inputs are still held"
        drawn.append(rep)
        x = torch.full((4,), float(rep))
        alive.append(weakref.ref(x))
        return [x]

    run = time_forward(lambda x: x * 2, [torch.zeros(4)], inputs_for,
                       TimingPlan(warmup=1, repetitions=5, flush_l2=False),
                       torch.device("cpu"), capture_clock(), on_output=lambda rep, out: [out] if rep in (1, 4) else None)
    assert drawn == [0, 1, 2, 3, 4]
    assert torch.equal(run.kept_outputs[4][0], torch.full((4,), 8.0))


def test_hold_record_reports_a_hold_that_left_programs_out() -> None:
    """The hold's bookkeeping (scorer.gpu.gate) on CPU tensors, with a stand-in for Triton's
    launch that runs all programs, or all but the last, writing the SM each ran on."""
    from scorer.gpu.gate import DeviceGate

    class Launch:
        def __init__(self) -> None:
            self.skip_last = False

        def __getitem__(self, grid):
            def run(hold_ns, where, num_warps):
                n = grid[0] - (1 if self.skip_last else 0)
                where[:n] = torch.arange(n, dtype=torch.int32) % 4
            return run

    gate = DeviceGate.__new__(DeviceGate)
    gate.programs, gate.hold_ns, gate.kernel = 16, 1000, Launch()
    gate.where = torch.full((16,), -1, dtype=torch.int32)
    gate.missing = torch.zeros((), dtype=torch.int64)
    def hold_once(skip_last: bool = False) -> None:
        gate.kernel.skip_last = skip_last
        gate.arm()
        gate()
        gate.tally()

    for _ in range(3):
        hold_once()
    assert gate.sms_used() == 4
    hold_once(skip_last=True)
    hold_once()  # a later full hold does not hide the earlier short one
    assert gate.sms_used() == -1
    gate.reset()
    hold_once()
    assert gate.sms_used() == 4


def test_rep_clock_orders_the_cuda_events_around_the_call() -> None:
    """The CUDA repetition sequence, checked on CPU with stand-ins for the event API: the stream is
    made current again, the hold sits between `held` and `start`, `end` follows the call on that
    stream, and `drained` follows the device-wide synchronize."""
    import dataclasses

    from scorer.gpu.timing import _RepClock, capture_clock

    log: list[str] = []

    class Event:
        count = 0

        def __init__(self, enable_timing: bool) -> None:
            self.name = ("held", "start", "end", "drained")[Event.count % 4]
            Event.count += 1

    class Hold:
        def arm(self) -> None:
            log.append("arm")

        def __call__(self) -> None:
            log.append("hold")

        def tally(self) -> None:
            log.append("tally")

    clock = dataclasses.replace(capture_clock(), event_cls=Event,
                                event_record=lambda ev, stream=None: log.append(f"{ev.name}@{stream}"),
                                set_stream=lambda stream: log.append(f"set {stream}"))
    rep = _RepClock(clock, lambda: log.append("sync"), Hold(), "s0")
    events, host_ms, out, tail_ms = rep.run(lambda: log.append("call") or 7)
    assert out == 7 and host_ms >= 0 and [e.name for e in events] == ["held", "start", "end", "drained"]
    assert tail_ms is not None and tail_ms >= 0
    assert log == ["set s0", "arm", "held@s0", "hold", "start@s0", "call", "end@s0", "sync", "drained@s0", "tally"]


def test_every_request_of_a_role_has_its_handler_and_no_handler_lacks_a_request() -> None:
    """A request the judge can send but the worker cannot handle would end a scoring as the
    worker's error; a handler no typed request reaches is dead protocol."""
    from scorer.workers import entry

    for role, table in (("kernel", protocol.KERNEL_REQUESTS), ("reference", protocol.REFERENCE_REQUESTS)):
        handlers = set(entry._role_handlers(role, lambda step: None))  # type: ignore[arg-type,return-value]
        assert handlers == set(table) - {"ping", "exit"}, (role, sorted(handlers ^ (set(table) - {"ping", "exit"})))
