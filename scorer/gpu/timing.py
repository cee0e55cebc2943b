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
the same sequence with no forward); a host clock brackets forward + synchronize as a second
cross-check. dynamic_checks.timing_findings judges both.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

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
_IDLE_CALIBRATION_REPS = 12  # before and again after the timed repetitions


@dataclass(frozen=True)
class Clock:
    perf_counter: Callable[[], float]
    event_cls: Any
    event_record: Callable[..., Any] | None
    event_elapsed: Callable[..., float] | None
    cuda_sync: Callable[..., None] | None
    gpu_spin: Callable[[int], None] | None = None
    hold_kernel: Any = None
    current_stream: Callable[..., Any] | None = None
    set_stream: Callable[[Any], None] | None = None


def capture_clock() -> Clock:
    from scorer.gpu.gate import _hold_kernel

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
    # CUDA only: per repetition, end event to the event recorded after the device-wide synchronize;
    # and the same for repetitions with no forward (what the host's synchronize alone costs).
    drain_ms: list[float] | None = None
    idle_drain_ms: list[float] | None = None
    # CUDA only: how the GPU was held before each start event, and for how long (per repetition).
    gate: str = ""
    gate_ms: list[float] | None = None


class _Flusher:
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
    flush = _Flusher(device, plan.flush_l2)
    on_cuda = device.type == "cuda"
    sync = (lambda: clock.cuda_sync(device)) if on_cuda else (lambda: None)
    # Every event goes on the stream forward is called on, taken before forward first runs, and
    # each repetition starts on it again: a forward that leaves another stream current must not
    # move the timer's events there.
    stream = clock.current_stream(device) if on_cuda and clock.current_stream else None
    # Built (and, in the reference worker, compiled) before the warm-up, so no compile pause
    # separates the warm-up from the timed repetitions.
    hold = _Hold(device, clock) if on_cuda else None
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
    idle: list[tuple[Any, Any, Any, Any]] = []
    rep_clock = _RepClock(clock, sync, hold, stream)

    def calibrate() -> None:
        for _ in range(_IDLE_CALIBRATION_REPS):
            sync()
            idle.append(rep_clock.run(lambda: None)[0])

    if hold is not None:
        calibrate()
    args: Sequence[Any] = ()
    for rep in range(plan.repetitions):
        # The last rep's inputs go first, so a large task holds one input set, not two.
        args = ()
        args = inputs_for(rep)
        flush(rep)
        sync()
        call = (lambda: around(lambda: fn(*args))) if around is not None else (lambda: fn(*args))
        rep_events, rep_host_ms, out = rep_clock.run(call)
        if hold is not None:
            events.append(rep_events)
        host_ms.append(rep_host_ms)
        # Outside the timed region: inspecting or copying the output must not count as work.
        if on_output is not None:
            keep = on_output(rep, out)
            if keep is not None:
                kept[rep] = keep
            del keep
        del out
    if hold is not None:
        calibrate()
        sync()
        event_ms = [float(clock.event_elapsed(s, e)) for _, s, e, _ in events]
        drain_ms = [float(clock.event_elapsed(e, d)) for _, _, e, d in events]
        idle_ms = [float(clock.event_elapsed(e, d)) for _, _, e, d in idle]
        gate_ms = [float(clock.event_elapsed(h, s)) for h, s, _, _ in events]
        return TimingRun(CUDA_TIMER, event_ms, host_ms, event_ms, kept, drain_ms, idle_ms, hold.describe(), gate_ms)
    return TimingRun(CPU_TIMER, list(host_ms), host_ms, None, kept)


class _RepClock:
    """One repetition's measurement around `call`: on CUDA the held/start/end/drained events
    (docs/SCORER.md, Timing), always the host clock around call + synchronize. The idle
    calibration runs the same sequence around a call that does nothing."""

    def __init__(self, clock: Clock, sync: Callable[[], None], hold: "_Hold | None", stream: Any) -> None:
        self.clock, self.sync, self.hold, self.stream = clock, sync, hold, stream

    def _record(self, event: Any) -> None:
        if self.stream is not None:
            self.clock.event_record(event, self.stream)
        else:
            self.clock.event_record(event)

    def run(self, call: Callable[[], Any]) -> tuple[Any, float, Any]:
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
        self.sync()
        t1 = clock.perf_counter()
        if events is not None:
            self._record(events[3])
            hold.tally()
        return events, (t1 - t0) * 1e3, out


class _Hold:
    """The GPU-wide hold (scorer.gpu.gate), or a spin on the caller's stream where it cannot run."""

    def __init__(self, device: torch.device, clock: Clock) -> None:
        from scorer.gpu.gate import make_gate

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
            return "sm-hold: INCOMPLETE (a program of some hold before a start event did not run)"
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
