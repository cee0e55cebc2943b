"""The judge's handle on one task's reference worker: what it was asked to prepare, with which
secret seeds, and what the baseline measured. Prepared once, it serves every kernel of the task
that a scoring session scores (scorer/judge/session.py); one kernel's scoring makes and closes its own.
"""

from __future__ import annotations

import logging
import os
import secrets
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from scorer.errors import ScorerBroken, ScorerUserError
from scorer.gpu import contention
from scorer.gpu.lock import hold_gpu
from scorer.judge.clock import BatchClock, baseline_problem, median_round_trip_ms
from scorer.judge.stopwatch import STOPPED_S, StopWatch
from scorer.options import ScoreOptions
from scorer.tasks.suites import Suite, Task
from scorer.workers.batch import MIN_CALLS, batch_calls
from scorer.workers.process import WorkerDirs, WorkerFailure, WorkerProcess
from scorer.workers.protocol import (
    Frame,
    Ping,
    ProtocolViolation,
    ReferenceBatch,
    ReferenceBatchCollect,
    ReferenceBatchSetup,
    ReferenceEnvironment,
    ReferencePrepare,
    ReferenceTime,
    Request,
)
from scorer.workers.reference_replies import BatchReply, EnvironmentReply, PrepareReply, Reply, TimeReply
from scorer.workers.reference_replies import parse as parse_reply
from scorer.workers.replies import InProcess

R = TypeVar("R", bound=Reply)

log = logging.getLogger("kernelarena.scorer")
_ROUND_TRIP_PINGS = 9
# A baseline found slowed (the worker stopped while timed, or slower than the judge's clock allows)
# is measured again this many times in all before the scoring fails as broken.
_BASELINE_TRIES = 2
# On a CPU a baseline slowed while other programs loaded the cores is timed again once they are
# quiet, waiting at most this long (a compile beside the tests takes 30-60 s on a 2-core box).
_QUIET_WAIT_S = 60.0
# Calibration runs of drawing inputs and copying outputs; the fastest counts.
_CALIBRATIONS = 3


class ReferenceUnfit(Exception):
    """The task cannot be scored on this device (it does not fit): a runtime_error for the kernel."""


@dataclass
class TimingFigures:
    timer: str
    times_ms: list[float]
    host_times_ms: list[float]
    event_times_ms: list[float] | None = None
    findings: list[Any] = field(default_factory=list)
    drain_ms: list[float] | None = None
    idle_drain_ms: list[float] | None = None
    gate: str = ""
    gate_ms: list[float] | None = None
    rep_waited_ms: list[float] | None = None  # the timed loop's wait for a CPU per repetition (kernel only)
    rep_cpu_ms: float | None = None  # the kernel worker's CPU time a call of the timed stage (CPU only)
    contended: bool = False  # foreign compute on the device while this stage's clock ran (kernel only)
    availability: float | None = None  # the kernel thread's share of a core while it wanted one (CPU only)
    launch_window: dict[str, int] = field(default_factory=dict)  # Triton launches timed in/out of the window
    # What the checks beside the kernel observed over its timed stage(s), ruled in the judge (kernel only).
    observed: list[InProcess] = field(default_factory=list)


@dataclass
class Plan:
    """The secret choices of one prepared reference (the kernel worker is told only the seeds)."""
    init_seed: int
    seeds: list[int]
    alt_shapes: list[dict[str, Any]]  # {"overrides", "seed"}
    rep_seeds: list[int]
    warm_seed: int
    keep_reps: list[int]
    batch_seeds: list[int] = field(default_factory=list)
    challenge: list[int] = field(default_factory=list)


@dataclass
class Prepared:
    environment: dict[str, Any]
    output_specs: list[list[Any]]
    alt_output_specs: list[list[list[Any]]]
    input_digests: list[str]
    output_bytes: int
    free_bytes: int | None


class ReferenceService:
    def __init__(self, suite: Suite, task: Task, device: Any, options: ScoreOptions, overrides: dict[str, Any],
                 base: Path, repetitions: int, worker: WorkerProcess | None = None) -> None:
        self.suite, self.task, self.device, self.options = suite, task, device, options
        self.overrides = overrides
        chance = secrets.SystemRandom()
        variants = task.full_alt_shapes if not overrides and task.full_alt_shapes else task.alt_shapes
        alts = [{**overrides, **alt} for alt in variants] if options.alt_shapes else []
        self.plan = Plan(
            init_seed=secrets.randbits(31), seeds=[secrets.randbits(31) for _ in range(max(2, options.seeds))],
            alt_shapes=[{"overrides": o, "seed": secrets.randbits(31)} for o in alts],
            rep_seeds=[secrets.randbits(31) for _ in range(repetitions)], warm_seed=secrets.randbits(31),
            keep_reps=sorted(chance.sample(range(repetitions), min(2, repetitions))),
        )
        # A session hands over a worker it started ahead (torch imported while other work ran).
        self.worker = worker or WorkerProcess("reference", WorkerDirs.create(base, "reference"), warm_device=device.type)
        if self.worker.proc is None:
            self.worker.start()
        assert self.worker.proc is not None
        self.stopwatch = StopWatch(self.worker.proc.pid)
        self.prepared: Prepared | None = None
        self.baseline: TimingFigures | None = None
        self.baseline_clock: BatchClock | None = None
        self.overhead_ms_per_call = 0.0
        self.rtt_ms = 0.0
        self._device_env: dict[str, Any] = {}
        self.durations: dict[str, float] = {}

    def close(self) -> None:
        # A dying CUDA context frees its memory on the GPU: not while another scorer times there.
        self.stopwatch.close()
        with hold_gpu(self.gpu_key() if self._device_env else None, shared=True):
            self.worker.close()

    def gpu_key(self) -> str | None:
        """The GPU lock's key: the device's UUID, known before anything of the task runs on it."""
        if self.device.type != "cuda":
            return None
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
        return str(self._device_env.get("gpu_uuid") or f"cuda-{visible}")

    def request(self, stage: str, request: Request, payload: Any = None, timeout_s: float | None = None) -> Frame:
        start = time.perf_counter()
        try:
            with self.stopwatch:
                reply = self.worker.request(request.header(), payload, timeout_s or self.options.reference_s)
        except WorkerFailure as exc:
            if self.stopwatch.fired:
                raise ScorerBroken(f"reference worker for task '{self.task.id}' was stopped (SIGSTOP or a tracer) for "
                                   f"{STOPPED_S:g} s in {stage} and was ended: something outside the scorer stops it "
                                   "(a process left by an earlier kernel?)") from None
            tail = self.worker.log_tail().strip()
            raise ScorerBroken(f"reference worker for task '{self.task.id}' failed in {stage}: {exc.message}"
                               + (f"\n--- worker log (tail) ---\n{tail}" if tail else "")) from None
        finally:
            self.durations[stage] = round(self.durations.get(stage, 0.0) + time.perf_counter() - start, 4)
        if not reply.header.get("ok"):
            if reply.header.get("kind") == "runtime_error":
                raise ReferenceUnfit(str(reply.header.get("error")))
            if reply.header.get("kind") == "task_package":
                module = reply.header.get("module") or "?"
                raise ScorerUserError(f"task '{self.task.id}': its reference imports '{module}', which the scorer's "
                                      f"Python lacks; install it there (pip install {module}, or the package that "
                                      "provides it)")
            raise ScorerBroken(f"reference {stage} for task '{self.task.id}' failed: {reply.header.get('error')}")
        return reply

    def ask(self, stage: str, request: Request, reply: type[R], payload: Any = None, timeout_s: float | None = None) -> R:
        """One request, its reply parsed into `reply` (scorer/workers/reference_replies.py): a reply
        of our own worker that does not parse is the scorer's failure, never a default."""
        header = self.request(stage, request, payload, timeout_s).header
        try:
            return parse_reply(reply, header)
        except ProtocolViolation as exc:
            raise ScorerBroken(f"reference worker for task '{self.task.id}' answered {stage} off the protocol: {exc}") from None

    # --- once per task ----------------------------------------------------------------------
    def prepare(self) -> Prepared:
        if self.prepared is not None:
            return self.prepared
        self.request("reference_spawn", Ping())
        self._device_env = self.ask("reference_spawn", ReferenceEnvironment(str(self.device)), EnvironmentReply).environment
        t = self.task.tolerance
        request = ReferencePrepare(
            task_path=str(self.task.path), device=str(self.device), overrides=self.overrides,
            init_seed=self.plan.init_seed, seeds=self.plan.seeds, alt_shapes=self.plan.alt_shapes,
            fp64=self.task.dtype in (None, "float32"),
            rule={"rtol": t.rtol, "atol": t.atol, "exact": t.exact, "deterministic": t.deterministic,
                  "index_outputs": [io.to_dict() for io in self.task.index_outputs]},
            task={"dtype": self.task.dtype, "category": self.task.category},
            # The worker takes the lock's shared side itself around its GPU work (another scorer's
            # timing must not run beside it), not around building the models.
            gpu_lock=self.gpu_key())
        h = self.ask("reference", request, PrepareReply)
        for step, seconds in h.steps_s.items():
            self.durations[f"reference_{step}_worker"] = round(float(seconds), 4)
        self.plan.seeds = self.plan.seeds[: h.seeds_used]
        env = {**h.environment, "init_seed": self.plan.init_seed}
        self.prepared = Prepared(env, h.output_specs, h.alt_output_specs, h.input_digests, h.output_bytes, h.free_bytes)
        return self.prepared

    def measure_baseline(self, warmup: int, repetitions: int, flush_l2: bool) -> tuple[TimingFigures, BatchClock]:
        """The baseline's timed repetitions and its batch under the judge's clock, checked against
        each other and against stops of the worker; re-measured once where either shows the
        baseline was slowed, and a scoring failure (ScorerBroken) where it still does: a slowed
        baseline would inflate every kernel's speedup."""
        if self.baseline is not None and self.baseline_clock is not None:
            return self.baseline, self.baseline_clock
        problem = ""
        for attempt in range(_BASELINE_TRIES):
            with contention.watch(self.device.type, self.gpu_key()) as seen:
                figures, continued_from = self._time_baseline(warmup, repetitions, flush_l2)
                clock, continued_to = self._baseline_batch(figures.times_ms)
            stops = continued_to - continued_from
            if stops > 0:
                problem = (f"the reference worker was stopped and continued {stops} time(s) while its baseline was "
                           "timed (something outside the scorer stops it)")
            else:
                problem = baseline_problem(figures.times_ms, clock, self.device.type) or ""
            if not problem:
                self.baseline, self.baseline_clock = figures, clock
                return figures, clock
            problem += f" (repetitions {[round(t, 3) for t in figures.times_ms[:12]]} ms; {_load_seen(seen)})"
            log.warning("baseline of task %s slowed (attempt %d): %s", self.task.id, attempt + 1, problem)
            if self.device.type == "cpu" and seen.contended and attempt + 1 < _BASELINE_TRIES:
                contention.wait_for_quiet(_QUIET_WAIT_S)
        raise ScorerBroken(f"the baseline of task '{self.task.id}' cannot be trusted: {problem}")

    def _time_baseline(self, warmup: int, repetitions: int, flush_l2: bool) -> tuple[TimingFigures, int]:
        request = ReferenceTime(warmup=warmup, repetitions=repetitions, flush_l2=flush_l2,
                                rep_seeds=self.plan.rep_seeds, keep_reps=self.plan.keep_reps,
                                baseline=self.suite.baseline)
        with hold_gpu(self.gpu_key()):
            h = self.ask("baseline_timing", request, TimeReply, timeout_s=self.options.timing_s)
        return TimingFigures(h.timer, h.times_ms, h.host_times_ms), h.continued_before

    def round_trip_ms(self) -> float:
        samples = []
        for _ in range(_ROUND_TRIP_PINGS):
            t0 = time.perf_counter()
            self.request("round_trip", Ping())
            samples.append((time.perf_counter() - t0) * 1e3)
        return median_round_trip_ms(samples)

    def _baseline_batch(self, times_ms: list[float]) -> tuple[BatchClock, int]:
        """The baseline's judge-timed batch (its bound is reported beside the kernel's) and the
        calibration of drawing inputs and copying outputs; then the secret positions are read.
        Also the worker's count of stops by the end of its batch."""
        baseline_ms = statistics.median(times_ms) if times_ms else 0.0
        prepared = self.prepare()
        calls = batch_calls(self.device.type, baseline_ms, prepared.output_bytes, prepared.free_bytes)
        self._draw_batch_seeds(calls)
        with hold_gpu(self.gpu_key()):
            rtt = self.round_trip_ms()
            timeout = self.options.timing_s
            self.request("reference_batch", ReferenceBatchSetup(calls, self.plan.batch_seeds))
            # The least of a few: a calibration slowed by another process would lower every bound.
            overhead_ms = min(self._timed(lambda: self.request("reference_batch", ReferenceBatch("regen"),
                                                                timeout_s=timeout)) for _ in range(_CALIBRATIONS))
            self.overhead_ms_per_call = max(0.0, (overhead_ms - rtt) / calls)
            replies: list[Frame] = []
            total_ms = self._timed(lambda: replies.append(self.request("reference_batch", ReferenceBatch("forward"),
                                                                       timeout_s=timeout)))
        with hold_gpu(self.gpu_key(), shared=True):
            self.request("reference_batch", ReferenceBatchCollect(secrets.randbits(63), self.plan.challenge))
        self.rtt_ms = rtt
        try:
            continued = parse_reply(BatchReply, replies[0].header).continued
        except ProtocolViolation as exc:
            raise ScorerBroken(f"reference worker for task '{self.task.id}' answered its batch off the protocol: {exc}") from None
        return BatchClock(calls, total_ms, rtt, 1, self.overhead_ms_per_call), continued

    def _draw_batch_seeds(self, calls: int) -> None:
        self.plan.batch_seeds = [secrets.randbits(31) for _ in range(calls)]
        # One challenged row among the first MIN_CALLS (every kernel's batch has those) and one
        # anywhere; every row is also read at the secret positions.
        chance = secrets.SystemRandom()
        first = chance.randrange(min(MIN_CALLS, calls))
        self.plan.challenge = sorted({first, chance.randrange(calls)})

    def fresh_batch(self) -> None:
        """New secret seeds, positions and challenged rows for another kernel batch, with the
        reference's values there (its batch on them, untimed). A kernel's second batch must not
        see the first one's inputs again: it could return outputs it cached from them."""
        assert self.baseline_clock is not None, "measure_baseline first"
        self._draw_batch_seeds(len(self.plan.batch_seeds))
        timeout = self.options.timing_s
        with hold_gpu(self.gpu_key(), shared=True):
            self.request("reference_batch", ReferenceBatchSetup(len(self.plan.batch_seeds), self.plan.batch_seeds))
            self.request("reference_batch", ReferenceBatch("forward"), timeout_s=timeout)
            self.request("reference_batch", ReferenceBatchCollect(secrets.randbits(63), self.plan.challenge))

    @staticmethod
    def _timed(call: Any) -> float:
        t0 = time.perf_counter()
        call()
        return (time.perf_counter() - t0) * 1e3


def _load_seen(seen: contention.Contention) -> str:
    if seen.foreign_cpu_cores is not None and seen.device == "cpu":
        return f"foreign load {seen.foreign_cpu_cores:.2f} cores over {seen.window_s:.1f} s"
    if seen.foreign_gpu:
        return f"foreign GPU processes {seen.foreign_gpu}"
    return "no foreign load seen" + (f" ({seen.gpu_note})" if seen.gpu_note else "")
