"""One timing protocol for the baseline and the kernel (each in its own worker process).

The clock primitives are captured by `capture_clock()` before any kernel is imported and only
those captured callables are used afterwards, so a kernel that patches `torch.cuda.Event`,
`synchronize` or `time.perf_counter` later does not change what we measure (the guard reports
the patch). Per repetition: flush L2, hold every SM of the GPU (scorer.gpu.gate: the host
enqueues forward meanwhile, so its launch overhead stays out of the events), start event, forward,
end event on the caller's stream, device-wide synchronize, then a "drained" event. The time is
start to end, without the host's launch or wake-up latency (on the H200 VM those moved 0.07-0.2 ms
kernels' medians by 15-26% between processes; with the hold the spread was under 1%). Work left
running on other streams shows as end-to-drained time above the idle calibration (`idle_drain_ms`,
the same sequence with no forward; `settled_drain_ms` says what of that time counts); a host clock
brackets forward + synchronize as a second cross-check. dynamic_checks.timing_findings judges both.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from scorer.gpu.gate import _hold_kernel, make_gate

CUDA_TIMER = "cuda_event"
CPU_TIMER = "cpu/perf_counter"
_CPU_FLUSH_BYTES = 32 << 20  # larger than the last-level cache of common CI CPUs
# On a GPU, warm-up runs at least this long (besides its repetition count): a few reps of a 0.1 ms kernel
# leave the GPU below its boost clock, and the baseline and kernel then run at different clocks.
MIN_WARMUP_S = 0.25
_MAX_WARMUP_REPS = 5000
# Where the GPU-wide hold cannot run (no Triton, ROCm), the GPU spins this long on the caller's
# stream before each start event instead: only the first launch's latency stays out of the events.
_SPIN_CYCLES = 40_000  # ~20 us at Hopper clocks
IDLE_CALIBRATION_REPS = 12  # before and again after the timed repetitions (one more after each)
# The hold's label where a tallied hold left a program out (ruled in the judge: rulings/gpu_hold.py).
HOLD_INCOMPLETE = "sm-hold: INCOMPLETE (a program of some hold before a start event did not run)"


@dataclass(frozen=True)
class Clock:
    perf_counter: Callable[[], float]
    event_cls: Any
    event_record: Callable[..., Any]
    event_elapsed: Callable[..., float]
    cuda_sync: Callable[..., None]
    gpu_spin: Callable[[int], None] | None = None
    hold_kernel: Any = None
    current_stream: Callable[..., Any] | None = None
    set_stream: Callable[[Any], None] | None = None
    # torch.cuda.synchronize taken apart (its device guard, and the bare wait inside it), so the host
    # can note the moment it starts waiting with nothing but one C call in between (settled_drain_ms).
    device_index: Callable[..., int] | None = None
    exchange_device: Callable[[int], int] | None = None
    restore_device: Callable[[int], int] | None = None
    cuda_wait: Callable[[], None] | None = None


def capture_clock() -> Clock:
    event_cls = torch.cuda.Event
    return Clock(
        perf_counter=time.perf_counter,
        event_cls=event_cls,
        event_record=event_cls.record,
        event_elapsed=event_cls.elapsed_time,
        cuda_sync=torch.cuda.synchronize,
        gpu_spin=getattr(torch.cuda, "_sleep", None),
        hold_kernel=_hold_kernel,
        current_stream=torch.cuda.current_stream,
        set_stream=torch.cuda.set_stream,
        device_index=getattr(torch.cuda, "_get_device_index", None),
        exchange_device=getattr(torch.cuda, "_exchange_device", None),
        restore_device=getattr(torch.cuda, "_maybe_exchange_device", None),
        cuda_wait=getattr(torch._C, "_cuda_synchronize", None),
    )


@dataclass(frozen=True)
class TimingPlan:
    warmup: int
    repetitions: int
    flush_l2: bool


@dataclass
class TimingRun:
    timer: str
    times_ms: list[float]
    host_times_ms: list[float]
    event_times_ms: list[float] | None = None
    kept_outputs: dict[int, Any] = field(default_factory=dict)
    # CUDA only: per repetition, end event to the event recorded after the device-wide synchronize,
    # settled (settled_drain_ms); and the same for repetitions with no forward (what the host's
    # synchronize alone costs).
    drain_ms: list[float] | None = None
    idle_drain_ms: list[float] | None = None
    # CUDA only: how the GPU was held before each start event, and for how long (per repetition).
    gate: str = ""
    gate_ms: list[float] | None = None
    # CUDA only: the same drains as the events alone measured them, before settling (diagnostics).
    drain_device_ms: list[float] | None = None
    idle_drain_device_ms: list[float] | None = None


class Flusher:
    """Writes a buffer larger than the cache between repetitions so no rep starts warm."""

    def __init__(self, device: torch.device, enabled: bool) -> None:
        self.buf: torch.Tensor | None = None
        if not enabled:
            return
        if device.type == "cuda":
            l2 = torch.cuda.get_device_properties(device).L2_cache_size or (64 << 20)
            nbytes = max(2 * l2 + (1 << 20), 4 << 20)
        else:
            nbytes = _CPU_FLUSH_BYTES
        self.buf = torch.empty(nbytes // 4, dtype=torch.int32, device=device)

    def __call__(self, rep: int) -> None:
        if self.buf is not None:
            self.buf.fill_(rep)


def time_forward(
    fn: Callable[..., Any],
    warm_inputs: Sequence[Any],
    inputs_for: Callable[[int], Sequence[Any]],
    plan: TimingPlan,
    device: torch.device,
    clock: Clock,
    on_output: Callable[[int, Any], Any] | None = None,
    around: Callable[[Callable[[], Any]], Any] | None = None,
) -> TimingRun:
    """Time `fn` over `plan.repetitions` reps; the warm-up calls it on `warm_inputs`, rep r on
    fresh inputs `inputs_for(r)` (drawn outside the timed region: a cache keyed by content,
    pointer or tensor version never sees the same inputs twice). `on_output(rep, out)` runs
    outside the timed region; what it returns, unless None, is kept for that rep. `around`, if
    given, wraps every timed call (the kernel's: the library-call monitor watches each one, so no
    timed call differs from a watched one)."""
    flush = Flusher(device, plan.flush_l2)
    on_cuda = device.type == "cuda"
    sync = (lambda: clock.cuda_sync(device)) if on_cuda else (lambda: None)
    # Every event goes on the stream forward is called on, taken before forward first runs, and
    # each repetition starts on it again: a forward that leaves another stream current must not
    # move the timer's events there.
    stream = clock.current_stream(device) if on_cuda and clock.current_stream else None
    # Built (and, in the reference worker, compiled) before the warm-up, so no compile pause
    # separates the warm-up from the timed repetitions.
    hold = _Hold(device, clock) if on_cuda else None
    settle = _settler(clock, device, sync) if on_cuda else None
    warm_start, min_warm_s = clock.perf_counter(), MIN_WARMUP_S if on_cuda else 0.0
    i = 0
    while i < plan.warmup or (clock.perf_counter() - warm_start < min_warm_s and i < _MAX_WARMUP_REPS):
        fn(*warm_inputs)
        i += 1
        if i >= plan.warmup:
            sync()  # time the warm-up by completed work, not by launches queued
    sync()
    kept: dict[int, Any] = {}
    host_ms: list[float] = []
    events: list[tuple[Any, Any, Any, Any]] = []
    tails: list[float | None] = []
    idle: list[tuple[Any, Any, Any, Any]] = []
    idle_tails: list[float | None] = []
    rep_clock = _RepClock(clock, sync, hold, stream, settle)

    def idle_rep(late: bool) -> None:
        """The repetition's sequence with no forward. An honest forward leaves the host either
        waiting in the synchronize before the device reaches the end event (a kernel longer than
        its launch path) or arriving after it (a launch path as long as the hold: Python, the
        library-call monitor, Triton's launcher); the two leave different host paths in the
        drain, so the calibration takes both: a call that returns at once, and one that returns
        only once the device has passed the start event."""
        sync()
        rep = rep_clock.run(sync if late else _nothing)
        idle.append(rep.events)
        idle_tails.append(rep.tail_ms)

    def calibrate() -> None:
        for i in range(IDLE_CALIBRATION_REPS):
            idle_rep(late=bool(i % 2))

    if hold is not None:
        calibrate()
    args: Sequence[Any] = ()
    for rep in range(plan.repetitions):
        # The last rep's inputs go first, so a large task holds one input set, not two.
        args = ()
        args = inputs_for(rep)
        flush(rep)
        sync()
        call = (lambda a=args: around(lambda: fn(*a))) if around is not None else (lambda a=args: fn(*a))
        timed = rep_clock.run(call)
        del call  # it holds these inputs: the next repetition's are drawn only after they are let go
        out = timed.out
        if hold is not None:
            events.append(timed.events)
            tails.append(timed.tail_ms)
        host_ms.append(timed.host_ms)
        del timed
        # Outside the timed region: inspecting or copying the output must not count as work.
        if on_output is not None:
            keep = on_output(rep, out)
            if keep is not None:
                kept[rep] = keep
            del keep
        del out
        if hold is not None:
            # One idle repetition beside each timed one (after the output went to the judge, as the
            # next timed one comes after its inputs did): the calibration sees the same host and
            # device state the timed repetitions met, not only what held before and after them.
            idle_rep(late=bool(rep % 2))
    if hold is not None:
        calibrate()
        sync()
        event_ms = [float(clock.event_elapsed(s, e)) for _, s, e, _ in events]
        drain_dev = [float(clock.event_elapsed(e, d)) for _, _, e, d in events]
        idle_dev = [float(clock.event_elapsed(e, d)) for _, _, e, d in idle]
        gate_ms = [float(clock.event_elapsed(h, s)) for h, s, _, _ in events]
        return TimingRun(CUDA_TIMER, event_ms, host_ms, event_ms, kept,
                         [settled_drain_ms(d, t) for d, t in zip(drain_dev, tails, strict=True)],
                         [settled_drain_ms(d, t) for d, t in zip(idle_dev, idle_tails, strict=True)],
                         hold.describe(), gate_ms, drain_dev, idle_dev)
    return TimingRun(CPU_TIMER, list(host_ms), host_ms, None, kept)


def _nothing() -> None:
    return None


def settled_drain_ms(device_ms: float, host_tail_ms: float | None) -> float:
    """What of one repetition's end-to-drained time (`device_ms`, by the events) can be work still
    running on another stream: no more than `host_tail_ms`, the host's time from the moment it
    began waiting in the device-wide synchronize until the drained event was recorded.

    The drained event is recorded by the host after the synchronize, so the drain always holds
    host time. Where the host waits before the device reaches the end event (the idle
    calibration, where the call returns at once), it holds only the wake-up and the recording of
    the drained event. Where the host gets there after the device did (a forward whose launch
    path takes about as long as the hold: Python, the library-call monitor, Triton's launcher,
    or a forward that synchronizes itself), the device sits idle meanwhile, and the drain also
    holds the host's way from recording the end event into the synchronize, about as long as its
    way out. That fits the two single-stream Triton kernels rejected as stream-injection on the
    H200 VM with eight scorings at once (drains 0.038 vs 0.016 ms idle, and 0.057 vs 0.028 ms for
    one whose start-to-end time, 0.084 ms, already held host latency: its launch came after the
    hold had ended); tests/scorer/test_drain_check.py replays that timeline. Bounding the drain by
    the host's time inside and after the synchronize takes that idle interval out: the device
    was done before the host began to wait, and any work still running then (however it was
    launched) keeps the synchronize waiting, so it stays in the bound. What the bound can leave
    out is at most the scorer's own few statements between the end event and the wait; work
    before the end event is inside the start-to-end time."""
    if host_tail_ms is None or not math.isfinite(host_tail_ms):
        return device_ms
    return min(device_ms, host_tail_ms)


def _settler(clock: Clock, device: torch.device, sync: Callable[[], None]) -> Callable[[], float]:
    """The device-wide synchronize of a repetition; returns the host time just before the wait.

    torch.cuda.synchronize(device) runs Python before it waits (parsing the device, building a
    guard). In a repetition where the device reached the end event first, that Python sits between
    the end event and the wait: the settled drain would keep it as an honest kernel's excess if
    the host noted its time after it, and would let work hidden that long go unseen if before. So
    the device index is resolved once, here (before forward first runs, so a forward that changes
    the current device cannot move the wait elsewhere), and each repetition sets it with one call
    and waits."""
    index_of, exchange, restore = clock.device_index, clock.exchange_device, clock.restore_device
    wait, now = clock.cuda_wait, clock.perf_counter
    if index_of is None or exchange is None or restore is None or wait is None:
        def settle() -> float:
            started = now()
            sync()
            return started
        return settle
    index = int(index_of(device, optional=True))

    def settle_on_device() -> float:
        previous = exchange(index)
        started = now()
        try:
            wait()
        finally:
            restore(previous)
        return started
    return settle_on_device


class _Rep(NamedTuple):
    events: Any  # (held, start, end, drained) on CUDA, else None
    host_ms: float  # host clock around call + synchronize
    out: Any
    tail_ms: float | None  # CUDA: host time from starting to wait in the synchronize to after `drained`


class _RepClock:
    """One repetition's measurement around `call`: on CUDA the held/start/end/drained events
    (docs/SCORER.md, Timing), always the host clock around call + synchronize. The idle
    calibration runs the same sequence around a call that does nothing. `settle`, where given,
    is the synchronize, returning the host time at which it began to wait."""

    def __init__(self, clock: Clock, sync: Callable[[], None], hold: _Hold | None, stream: Any,
                 settle: Callable[[], float] | None = None) -> None:
        self.clock, self.sync, self.hold, self.stream = clock, sync, hold, stream
        self.settle = settle

    def _record(self, event: Any) -> None:
        if self.stream is not None:
            self.clock.event_record(event, self.stream)
        else:
            self.clock.event_record(event)

    def run(self, call: Callable[[], Any]) -> _Rep:
        clock, hold = self.clock, self.hold
        events = None
        if hold is not None:
            if self.stream is not None and clock.set_stream is not None:
                clock.set_stream(self.stream)
            events = tuple(clock.event_cls(enable_timing=True) for _ in range(4))
            hold.arm()
            self._record(events[0])
            hold()
            self._record(events[1])
        t0 = clock.perf_counter()
        out = call()
        if events is not None:
            self._record(events[2])
        if self.settle is not None:
            waiting = self.settle()
        else:
            waiting = clock.perf_counter()
            self.sync()
        t1 = clock.perf_counter()
        tail_ms = None
        if events is not None:
            self._record(events[3])
            tail_ms = (clock.perf_counter() - waiting) * 1e3
            if hold is not None:  # always: the events are made only with a hold
                hold.tally()
        return _Rep(events, (t1 - t0) * 1e3, out, tail_ms)


class _Hold:
    """The GPU-wide hold (scorer.gpu.gate), or a spin on the caller's stream where it cannot run."""

    def __init__(self, device: torch.device, clock: Clock) -> None:
        self.gate = make_gate(device, clock.hold_kernel)
        self.spin = clock.gpu_spin

    def arm(self) -> None:
        if self.gate is not None:
            self.gate.arm()

    def __call__(self) -> None:
        if self.gate is not None:
            self.gate()
        elif self.spin is not None:
            self.spin(_SPIN_CYCLES)

    def tally(self) -> None:
        if self.gate is not None:
            self.gate.tally()

    def describe(self) -> str:
        if self.gate is None:
            return f"spin {_SPIN_CYCLES} cycles on the caller's stream" if self.spin else "none"
        sms = self.gate.sms_used()
        if sms <= 0:
            return HOLD_INCOMPLETE
        return f"sm-hold {self.gate.hold_ns // 1000} us, {self.gate.programs} programs on {sms} SMs"


def median_and_spread(times_ms: Sequence[float]) -> tuple[float, float]:
    """Median and IQR / median (a relative spread comparable across kernels)."""
    if not times_ms:
        return float("nan"), float("nan")
    med = statistics.median(times_ms)
    if len(times_ms) < 4:
        spread = (max(times_ms) - min(times_ms)) / med if med > 0 else 0.0
    else:
        q = statistics.quantiles(times_ms, n=4, method="inclusive")
        spread = (q[2] - q[0]) / med if med > 0 else 0.0
    return med, spread
