"""The judge's own bound on the time per call, from a clock the kernel's process cannot reach.

Every figure the kernel worker reports (event times, the host clock beside them, the hold's record)
is read inside a process that runs the kernel's native code, so it can be forged. The judge
therefore times, with its own `time.perf_counter`, a batch of back-to-back calls (scorer/workers/batch.py)
on fresh inputs, whose every output is read at secret positions before the clock stops. From that
it subtracts its own round trip to a worker and what drawing the inputs and copying the outputs
cost (both measured on the trusted reference worker), and divides by the number of calls.

That bound includes what the events leave out on purpose (host launch overhead the hold hides), so
an honest kernel's bound is at or above its event median; a forged median is far below it. The
check rejects reported times below `bound / RATIO - SLACK_MS`; docs/HACKS.md gives what this can miss.

The batch runs after the timed repetitions, so a machine whose load changes between the two moves
one against the other: on a CPU the batch is read at the timed stage's load (`BatchClock.load_factor`)
and the kernel thread's CPU time over it (`cpu_call_ms`), which no load inflates, bounds the calls
too. On a GPU the device-timed batch (`DeviceSpan`, scorer/gpu/release_gate.py) takes the kernel's
host out of the span.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass

from scorer.checks.catalog import Finding
from scorer.gpu import contention
from scorer.score import TimingResult

# The threshold keeps a margin above the honest bound / reported figures measured. On the H200
# (docs/results/2026-12-03-judge-owns-data-and-clock.md) kernels of 0.3 ms and more measured
# ratios of 0.7-1.9; small ones are host-bound in the batch (Python launch overhead, 0.2-0.4 ms
# a call in the kernel's worker), up to 0.47 ms for a 0.068 ms swish: SLACK_MS covers that. On a CPU the reported times
# and the batch run at different moments of a shared, noisy machine (a 2-core box measured honest
# ratios up to 4.6 with compiles running beside it). Forged clocks in the corpus read 1/8.
RATIO = {"cuda": 2.5, "cpu": 4.0}
SLACK_MS = {"cuda": 0.25, "cpu": 0.5}


# The clock stops in a Python thread of the judge. Where one process judges several kernels at once
# (a ScoringSession used from threads, as scripts/gpu_check.py does with 8), the thread a worker's
# reply wakes waits for the GIL while another judge's thread runs Python, up to the switch interval
# (5 ms by default), twice a batch (the kernel's reply, the sample's). A batch of a few calls
# (published sizes on a crowded GPU) reads that as milliseconds a call: on an H100 with 8 at once
# the bound of two such batches was 7.7x and 6.8x the median, and of a baseline's 9.0x.
# benchmarks/gil_wait.py measures the wait at each interval.
GIL_SWITCH_S = 0.0005


def prompt_gil_handoff() -> None:
    """Makes a thread that holds the GIL hand it over within GIL_SWITCH_S to one that waits."""
    if sys.getswitchinterval() > GIL_SWITCH_S:
        sys.setswitchinterval(GIL_SWITCH_S)


@dataclass(frozen=True)
class BatchClock:
    """One judge-timed batch: its calls, the judge's wall time around it, and the calibrations."""
    calls: int
    total_ms: float
    round_trip_ms: float
    round_trips: int
    overhead_ms_per_call: float  # drawing inputs + copying outputs, measured with no forward
    # The kernel thread's share of the time it wanted a core, over the batch and over the timed
    # stage (CPU only, `CoreShare`): the batch's wall time is read at the timed stage's
    # load, `work_ms`. None where not read.
    availability: float | None = None
    timed_availability: float | None = None
    # The kernel thread's CPU time a batch call, and the worker's a timed step (both read by the
    # judge from the scheduler's counts; CPU only): how much of a timed step's work the call is.
    batch_cpu_ms_per_call: float | None = None
    timed_cpu_ms_per_rep: float | None = None

    def work_ms(self) -> float:
        wall = self.total_ms - self.round_trips * self.round_trip_ms
        return wall * self.load_factor()

    def load_factor(self) -> float:
        """The batch's wall time as it would have read under the timed stage's load: batch
        availability / timed availability. An honest kernel's reported times wait for cores as its
        batch does, so both are held at one load; a forged clock's cut survives any factor, since the
        scheduler's counts (not the kernel's clock) give it. 1 where either was not read.

        Where the timed stage waited more than the batch, only the call's share of a step's CPU
        work (`call_share`) is scaled: the stage's waits also fall on what a step does besides the
        call (the cache flush, the wake-up on each request), which the reported times leave out. CI
        saw the honest swish_cpp_loop_portable (0.56 ms a call, a 10 ms flush a step) at 53% of a
        core over its timed stage and 98% in its batch: scaled whole, its batch read 8x its times.
        A batch that waited more is read at the stage's load whole: that only lowers the bound."""
        if not self.availability or not self.timed_availability:
            return 1.0
        factor = self.availability / self.timed_availability
        return factor if factor <= 1.0 else 1.0 + (factor - 1.0) * self.call_share()

    def call_share(self) -> float:
        """The call's CPU time over a timed step's (at most 1); 1 where either was not read."""
        if not self.batch_cpu_ms_per_call or not self.timed_cpu_ms_per_rep:
            return 1.0
        return min(1.0, self.batch_cpu_ms_per_call / self.timed_cpu_ms_per_rep)

    def bound_ms(self) -> float:
        return max(0.0, self.work_ms() / max(1, self.calls) - self.overhead_ms_per_call)


# The least a kernel's time counts as in its speedup: the judge's batch time a call over this
# factor. Honest kernels measured batch / reported ratios up to 4.6 on a loaded 2-core CPU and up to
# about 7 for a host-bound 0.068 ms swish on the H200 (its Python launches sit in the batch, not
# in its events), so the floor stays below every honest figure seen, while a forged clock gains at
# most this factor wherever the ratio check's slack lets it through.
FLOOR_RATIO = 8.0
# On a CPU the floor is also this share of the kernel thread's CPU time a batch call, less the
# calibrated cost of drawing its inputs and copying its outputs (`BatchClock.cpu_call_ms`). The
# scheduler's count is exact and read by the judge; waiting for a core adds none, so unlike the
# wall clock it does not grow with the box's load, and an honest call on one thread spends at least
# its CPU time on the wall. A forged clock cannot cut it: its hidden work is CPU time. The share
# leaves room for a batch whose calls ran slower than the timed ones (caches shared with a busy
# neighbour, a lower clock speed); CPU_SLACK_MS for what a batch call costs the kernel's worker
# beyond the reference's calibration: a CI run read the honest swish_cpp_loop_portable's batch at
# 1.6 ms of CPU a call past the calibration against 0.557 ms reported (under load, 2026-12-07).
CPU_FLOOR_SHARE = 0.7
CPU_SLACK_MS = 1.0
# A reported time below this share of that CPU time (less the slack) is `timer-patching` outright:
# an honest kernel's timed calls would have had to take less than half the CPU time its batch's took.
CPU_VERDICT_SHARE = 0.5


@dataclass(frozen=True)
class DeviceSpan:
    """The device-timed batch (scorer/gpu/release_gate.py): `calls` calls enqueued behind a gate
    before their inputs existed, timed by the judge from the reference worker's reply that it had
    copied the inputs in and opened the gate to its reply that it had read every row at the secret
    positions, less the round trips of the kernel worker's wait and of that read."""
    calls: int
    total_ms: float
    round_trip_ms: float
    round_trips: int = 2

    def bound_ms(self) -> float:
        return max(0.0, (self.total_ms - self.round_trips * self.round_trip_ms) / max(1, self.calls))


# A reported upper quartile below the device-timed bound over this factor, less DEVICE_SLACK_MS, is
# `timer-patching`; a forged clock that passes gains at most that over the kernel's time where the
# span holds its calls alone. The span holds no host work of the kernel's but what runs after a
# wait for the device inside forward (the calls after it go at the host's pace, as in its timed
# repetitions, whose events see the same waits); it does hold a fixed cost of the protocol: on an
# H100 the honest gelu solution (0.182 ms reported, 16 calls) read 0.363 ms a call in two
# batches, about 2.9 ms beyond its calls. There is no floor beside the verdict: at 1.5 one floored
# that gelu (docs/results/2026-12-08-device-timed-batch.md), and at this factor, where a kernel's
# calls come to under twice the fixed cost (128 calls of under about 16 us), the fixed cost alone
# would floor an honest kernel; above the verdict's threshold a floor would take nothing more.
DEVICE_RATIO = RATIO["cuda"]
# The verdict's slack: the bound has no host launch overhead in it to cover, unlike the batch's.
DEVICE_SLACK_MS = 0.02
# Calls of a device-timed batch: enough for this much device time, and few enough that their
# launches fit the stream's queue (about 1,000 launches before the host blocks; each call is at
# least a launch of forward's and a copy of each output).
DEVICE_TARGET_MS = 20.0
DEVICE_MAX_CALLS = 128


def device_calls(reported_ms: float, seeds: int) -> int:
    """How many calls the device-timed batch makes: a kernel reporting less than it takes only makes
    its batch longer, up to the cap."""
    wanted = int(DEVICE_TARGET_MS / max(reported_ms, 1e-3)) + 1
    return max(1, min(seeds, DEVICE_MAX_CALLS, max(3, wanted)))


def device_findings(times_ms: list[float], span: DeviceSpan) -> list[Finding]:
    """timer-patching where the reported upper quartile is below `bound / RATIO - DEVICE_SLACK_MS`."""
    kernel_ms = reported_ms(times_ms)
    if kernel_ms is None:
        return []
    bound = span.bound_ms()
    allowed = bound / DEVICE_RATIO - DEVICE_SLACK_MS
    if kernel_ms < allowed:
        return [Finding("timer-patching",
                        f"the kernel's timer reported {kernel_ms:.4g} ms a call (upper quartile), but the judge's clock "
                        f"measured {bound:.4g} ms a call over {span.calls} calls enqueued behind a gate and run on inputs "
                        f"copied in when it opened ({span.total_ms:.4g} ms in all, less {span.round_trips} x "
                        f"{span.round_trip_ms:.3g} ms round trip; allowed down to bound / {DEVICE_RATIO:g} - "
                        f"{DEVICE_SLACK_MS:g} ms = {allowed:.4g} ms): the reported times are not real")]
    return []


def cpu_call_ms(clock: BatchClock) -> float | None:
    """The kernel thread's CPU time a batch call less the calibrated inputs and copies (CPU only)."""
    if clock.batch_cpu_ms_per_call is None:
        return None
    return max(0.0, clock.batch_cpu_ms_per_call - clock.overhead_ms_per_call)


def floor_speedup(timing: TimingResult, clock: BatchClock) -> None:
    """Records the floor, and where the kernel's median lies below it, takes the speedup from it."""
    cpu_ms = cpu_call_ms(clock)
    timing.judge_cpu_ms = cpu_ms
    timing.judge_floor_ms = max(clock.bound_ms() / FLOOR_RATIO, (cpu_ms or 0.0) * CPU_FLOOR_SHARE - CPU_SLACK_MS)
    if timing.kernel_ms is None or timing.baseline_ms is None or not timing.kernel_ms < timing.judge_floor_ms:
        return
    timing.floored = True
    timing.speedup = timing.baseline_ms / timing.judge_floor_ms


def median_round_trip_ms(samples_ms: list[float]) -> float:
    return statistics.median(samples_ms) if samples_ms else 0.0


def reported_ms(times_ms: list[float]) -> float | None:
    """The reported figure the bound is held against: the upper quartile of the timed repetitions,
    so a few reps slowed by the machine do not matter, and a forged timer (which scales them all)
    still shows."""
    if not times_ms:
        return None
    ordered = sorted(times_ms)
    return ordered[(3 * (len(ordered) - 1)) // 4]


def clock_findings(times_ms: list[float], clock: BatchClock, device_type: str) -> list[Finding]:
    """timer-patching where the reported upper quartile is below what the judge measured: on every
    device, `bound / RATIO - SLACK_MS` of its batch's wall clock; on a CPU also `CPU_VERDICT_SHARE`
    of the kernel thread's CPU time a batch call (`cpu_call_ms`), which no load inflates.

    On a CPU the wall-clock rule holds only against a time below that CPU time: an honest call on one
    thread spends at least its CPU time on the wall, so a reported time above it leaves the wall
    clock's excess to waits for a core, which the timed stage and the batch meet unequally under
    bursts of load (a fresh-clone CI run rejected two honest swish kernels whose timed stage had a
    core 7% and 13% of the time it wanted one, their batches 80% and 9%). A forged clock's cut
    stays below its CPU time at any share of a core above 1 / the cut."""
    kernel_ms = reported_ms(times_ms)
    if kernel_ms is None:
        return []
    ratio, slack = RATIO.get(device_type, RATIO["cuda"]), SLACK_MS.get(device_type, SLACK_MS["cuda"])
    bound = clock.bound_ms()
    cpu_ms = cpu_call_ms(clock) if device_type == "cpu" else None
    cpu_allowed = None if cpu_ms is None else cpu_ms * CPU_VERDICT_SHARE - CPU_SLACK_MS
    if cpu_allowed is not None and kernel_ms < cpu_allowed:
        return [Finding("timer-patching",
                        f"the kernel's timer reported {kernel_ms:.4g} ms a call (upper quartile), but the scheduler "
                        f"counted {cpu_ms:.4g} ms of CPU time a call on the kernel's thread over its batch (read by "
                        f"the judge, less inputs and copies; allowed down to x {CPU_VERDICT_SHARE:g} - {CPU_SLACK_MS:g} ms = "
                        f"{cpu_allowed:.4g} ms), and {_measured(clock, bound)}): the reported times are not real")]
    allowed = bound / ratio - slack
    if kernel_ms < allowed and (cpu_ms is None or kernel_ms < cpu_ms):
        return [Finding("timer-patching",
                        f"the kernel's timer reported {kernel_ms:.4g} ms a call (upper quartile), but "
                        f"{_measured(clock, bound)}; allowed down to bound / {ratio:g} - {slack:g} ms = {allowed:.4g} ms"
                        f"{_cpu_note(cpu_ms)}): the reported times are not real")]
    return []


def _measured(clock: BatchClock, bound: float) -> str:
    return (f"the judge's own clock measured {bound:.4g} ms a call over {clock.calls} back-to-back verified calls on "
            f"fresh inputs ({clock.total_ms:.4g} ms in all, less {clock.round_trips} x {clock.round_trip_ms:.3g} ms "
            f"round trip{_load_note(clock)}, and {clock.overhead_ms_per_call:.3g} ms a call for inputs and copies")


def _cpu_note(cpu_ms: float | None) -> str:
    return "" if cpu_ms is None else f", and below its thread's CPU time a batch call, {cpu_ms:.4g} ms"


def _load_note(clock: BatchClock) -> str:
    if clock.load_factor() == 1.0:
        return ""
    share = "" if clock.call_share() == 1.0 else f", the call {clock.call_share():.0%} of a timed step's CPU time"
    return (f"; read at the timed stage's load: x {clock.load_factor():.3g} (the kernel thread had a core "
            f"{clock.availability:.0%} of the time it wanted one in the batch, {clock.timed_availability:.0%} when "
            f"timed{share})")


def baseline_problem(times_ms: list[float], clock: BatchClock, device_type: str) -> str | None:
    """Why the reference worker's reported baseline cannot be used, or None. The reference is
    trusted code, but it can be slowed from outside (stopped, starved): its median reads slower
    than its own batch under the judge's clock allows, the same margins as for a kernel, reversed."""
    if not times_ms:
        return "the reference worker reported no baseline times"
    median = statistics.median(times_ms)
    ratio, slack = RATIO.get(device_type, RATIO["cuda"]), SLACK_MS.get(device_type, SLACK_MS["cuda"])
    bound = clock.bound_ms()
    allowed = bound * ratio + slack
    if median > allowed:
        return (f"the reference worker reported a baseline of {median:.4g} ms a call (median), but the judge's own "
                f"clock measured {bound:.4g} ms a call over its batch of {clock.calls} calls (allowed up to bound x "
                f"{ratio:g} + {slack:g} ms = {allowed:.4g} ms): the baseline was slowed while it was timed")
    return None


# The worker's CPU time over a timed stage is read in clock ticks (10 ms): below this much it says
# too little to lower the gap.
MIN_CPU_MS = 200.0


class CoreShare:
    """The kernel thread's share of a core over one stage: its time on a core over the time it was
    on one or runnable and waiting (the scheduler's counts from schedstat, exact; CPU devices only).
    Two reads of the thread's own file: cheap beside the judge's clock, unlike a process-table scan."""

    def __init__(self, main: int) -> None:
        self.main = main
        self.cpu0, self.delay0 = contention.thread_cpu_ms(main), contention.run_delay_ms(main)
        self.ran_ms: float | None = None  # the thread's CPU time up to the last `share()`

    def share(self) -> float | None:
        """Since the start; None where unread or the thread never ran."""
        cpu, delay = contention.thread_cpu_ms(self.main), contention.run_delay_ms(self.main)
        if cpu is None or delay is None or self.cpu0 is None or self.delay0 is None:
            return None
        ran, waited = max(0.0, cpu - self.cpu0), max(0.0, delay - self.delay0)
        self.ran_ms = ran
        return ran / (ran + waited) if ran > 0 else None


class StageCpu:
    """The kernel worker's CPU time over one stage, read by the judge from /proc (CPU devices only:
    on a GPU the work is not the host's). `root` is the worker, `main` the walled process that runs
    the kernel."""

    def __init__(self, root: int, main: int) -> None:
        self.root, self.main = root, main
        self.tree0, self.main0 = contention.tree_cpu_ms(root), contention.thread_cpu_ms(main)

    def spent_ms(self) -> float | None:
        spent = contention.tree_cpu_ms(self.root) - self.tree0
        if spent >= MIN_CPU_MS:
            return spent
        main_after = contention.thread_cpu_ms(self.main)
        if self.main0 is None or main_after is None:
            return None
        # Too few ticks to read: the kernel thread's own count, exact at any length. A stage this
        # short did little work on any thread (the tree's ticks say so).
        return max(0.0, main_after - self.main0)
