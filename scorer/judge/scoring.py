"""The judge: scores one kernel without ever importing it.

Stages, each a small function returning a typed result: source (no_kernel), static checks,
reference (scorer/judge/reference.py: inputs, reference outputs, baseline timing), kernel worker
(load, correctness trials, timing), the judge's own clock bound (scorer/judge/clock.py), verdict.
The kernel runs only in its own child process; the reference worker, a trusted process, holds the
reference outputs and does every comparison; the judge decides, and owns the last word on time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from scorer.checks import native_audit
from scorer.checks.catalog import Finding
from scorer.correctness.evaluate import CorrectnessOutcome
from scorer.errors import ScorerBroken, ScorerUserError
from scorer.gpu import contention, crowding, freeze, release_gate
from scorer.gpu.lock import ensure_lock_files, hold_gpu, waited_s
from scorer.gpu.timing import median_and_spread
from scorer.judge import outside, registry, rulings  # noqa: F401  (rulings: importing registers the checks)
from scorer.judge.clock import (
    BatchClock,
    CoreShare,
    DeviceSpan,
    StageCpu,
    clock_findings,
    device_calls,
    device_findings,
    floor_speedup,
    prompt_gil_handoff,
)
from scorer.judge.device_release import ReleaseOnce
from scorer.judge.reference import ReferenceService, ReferenceUnfit, TimingFigures
from scorer.judge.registry import NativeWatch
from scorer.judge.rep_budget import timed_subset
from scorer.judge.rep_feed import RepFeed
from scorer.judge.rulings.input_hashes import mutation_findings
from scorer.judge.rulings.launch_census import ghost_findings
from scorer.judge.rulings.library_calls import library_findings, total_library_work
from scorer.judge.rulings.output_object import lazy_findings
from scorer.options import ScoreOptions
from scorer.score import CorrectnessResult, Score, TimingResult
from scorer.tasks.suites import Suite, Task
from scorer.workers import reference_replies, replies, wall
from scorer.workers.batch import batch_calls
from scorer.workers.process import WorkerDirs, WorkerFailure, WorkerProcess
from scorer.workers.protocol import (
    Frame,
    KernelBatch,
    KernelBatchSetup,
    KernelCorrectness,
    KernelGateEnqueue,
    KernelGateSetup,
    KernelGateWait,
    KernelLoad,
    KernelRelease,
    KernelSetup,
    KernelTime,
    Ping,
    ProtocolViolation,
    ReferenceAttach,
    ReferenceCompare,
    ReferenceCompareTimed,
    ReferenceGatePlan,
    ReferenceGateRelease,
    ReferenceGateSetup,
    ReferenceSample,
    ReferenceVerifyBatch,
    Request,
)

log = logging.getLogger("kernelarena.scorer")
_PR_SET_DUMPABLE = 4
# A bound that reads too slow is measured again on fresh secret seeds, and the fastest batch
# counts: each batch is real, verified work, so the fastest is still a bound, while an honest
# kernel whose batch another process slowed (a CUDA context torn down beside it, say) gets another.
_DEVICE_TRIES = 3
_BATCH_TRIES = 3
_OOM_SIGNS = ("MemoryError", "out of memory", "can't allocate memory", "OutOfMemoryError")


class StageFailure(Exception):
    """Ends scoring early with a verdict (no_kernel, compile_error, runtime_error, timeout)."""

    def __init__(self, verdict: str, error: str) -> None:
        super().__init__(error)
        self.verdict = verdict
        self.error = error


class ProtocolBroken(StageFailure):
    """The kernel's process broke the protocol (a reply that does not parse, counts the judge did
    not ask for, a broken commitment, a moved channel): `protocol-violation`, never a default."""

    def __init__(self, stage: str, why: str) -> None:
        super().__init__("hack_detected", f"protocol-violation: {stage}: {why}")
        self.finding = Finding("protocol-violation", f"{stage}: {why}"[:4000])


@dataclass
class Source:
    text: str
    sha256: str


def resolve_device(requested: str, task: Task, suite: Suite) -> torch.device:
    if requested not in ("auto", "cuda", "cpu"):
        raise ScorerUserError(f"unknown device '{requested}'; use auto, cuda or cpu")
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise ScorerUserError("--device cuda but this torch sees no CUDA/ROCm GPU; use --device cpu")
    if requested == "cpu" and task.cuda_only:
        raise ScorerUserError(f"task '{task.id}' is cuda_only; score it on a GPU (--device cuda)")
    if requested not in suite.targets:
        raise ScorerUserError(f"suite '{suite.name}' targets {list(suite.targets)}, not {requested}; pick one of those")
    if requested == "cpu":
        # Triton runs on a CPU only in its interpreter; the workers inherit this. A user's own
        # TRITON_INTERPRET stands.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return torch.device(requested)


def read_source(kernel_path: Path) -> Source:
    if not kernel_path.is_file():
        raise StageFailure("no_kernel", f"no kernel file at {kernel_path}")
    data = kernel_path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise StageFailure("no_kernel", "kernel.py is empty")
    if "ModelNew" not in text:
        raise StageFailure("no_kernel", "kernel.py defines no class ModelNew")
    return Source(text, hashlib.sha256(data).hexdigest())


def _worker_text(exc: WorkerFailure, worker: WorkerProcess) -> str:
    tail = worker.log_tail().strip()
    return exc.message + (f"\n--- worker log (tail) ---\n{tail}" if tail else "")


def _failure_from_worker(exc: WorkerFailure, worker: WorkerProcess, stage: str) -> StageFailure:
    if exc.kind == "protocol" and worker.role == "kernel":
        return ProtocolBroken(stage, exc.message)
    if exc.kind == "timeout":
        return StageFailure("timeout", f"{stage}: {_worker_text(exc, worker)}")
    return StageFailure("runtime_error", f"{stage}: {_worker_text(exc, worker)}")


def _failure_from_reply(header: dict[str, Any], stage: str) -> StageFailure:
    kind = str(header.get("kind", "runtime_error"))
    error = str(header.get("error", "unknown error"))
    if any(sign in error for sign in _OOM_SIGNS):
        error = f"out of memory: {error}"
    verdict = kind if kind in ("no_kernel", "compile_error", "runtime_error") else "runtime_error"
    return StageFailure(verdict, error if verdict == "no_kernel" else f"{stage}: {error}")


@contextmanager
def _untrusted_reply(stage: str) -> Iterator[None]:
    """What the kernel's process sent that does not parse as the protocol's typed reply is its
    violation of the protocol (scorer/workers/replies.py)."""
    try:
        yield
    except ProtocolViolation as exc:
        raise ProtocolBroken(stage, str(exc)) from None


def _no_watch() -> str | None:
    return None


def _deny_same_user_access() -> None:
    """Makes this process non-dumpable: the kernel's worker runs under the same uid, and could
    otherwise read the reference outputs out of the judge through /proc/<pid>/mem or its fds."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            log.warning("could not make the judge non-dumpable (errno %d)", ctypes.get_errno())
    except (OSError, AttributeError):
        log.warning("could not make the judge non-dumpable (no prctl)")


@contextmanager
def _private_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="kernelarena-score-"))
    os.chmod(path, 0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _shipped(shared: dict[str, Any] | None, reply: Frame) -> tuple[dict[str, Any] | None, Any]:
    """What the kernel worker shipped for the reference worker, passed on as it came: CUDA IPC
    descriptors (the reference worker validates them), or the payload the judge already read."""
    return (shared, None) if shared is not None else (None, reply.payload)


def _renamed(shipped: tuple[dict[str, Any] | None, Any], names: dict[str, str]) -> tuple[dict[str, Any] | None, Any]:
    """The shipped outputs under other keys (CUDA IPC descriptors, or the payload's dict); a key
    off the list stays as it is, for the reference worker to refuse."""
    shared, payload = shipped
    def rename(d: Any) -> Any:
        return {names.get(k, k): v for k, v in d.items()} if isinstance(d, dict) else d

    return rename(shared), rename(payload)


def kernel_worker(dirs: WorkerDirs, options: ScoreOptions, device_type: str) -> WorkerProcess:
    """A kernel's worker (not started): its address space capped on a CPU (CUDA needs a huge one),
    and on a GPU its context and the hold made as soon as it has started."""
    limit = options.memory_limit_bytes if device_type == "cpu" else None
    return WorkerProcess("kernel", dirs, memory_limit_bytes=limit, warm_device=device_type)


class Judge:
    def __init__(self, suite: Suite, task: Task, kernel_path: Path, device: torch.device, options: ScoreOptions,
                 reference: ReferenceService | None = None, kernel_worker: WorkerProcess | None = None) -> None:
        self.suite, self.task, self.kernel_path = suite, task, kernel_path
        self.device, self.options = device, options
        use_test = options.use_test_shapes if options.use_test_shapes is not None else device.type == "cpu"
        self.overrides: dict[str, Any] = dict(task.test_shapes) if use_test else {}
        self.warmup = options.warmup if options.warmup is not None else suite.timing.warmup
        self.repetitions = options.repetitions if options.repetitions is not None else suite.timing.repetitions
        self.durations: dict[str, float] = {}
        self.reference = reference
        self.kernel_worker = kernel_worker
        # Called right before the timed stages: a session lets the workers it started ahead finish
        # starting, since an interpreter importing torch beside a timed stage slows what is timed.
        self.before_timing: Callable[[], None] | None = None
        self._frozen_before: dict[str, float] = {}
        # Called once the reference is prepared and the kernel's worker is up (a session starts the
        # workers of its next scorings then).
        self.after_start: Callable[[], None] | None = None
        self._evidence = registry.Evidence(suite, task, device.type)
        self._channel: outside.ChannelWatch | None = None
        self._call_s: float | None = None  # a correctness call on the judge's clock
        self._first_library_work = 0  # what the first call asked of the library, judged on it (library_calls.py)
        self._repetitions_cut = ""
        self._memory_note = ""
        self._gpu_key: str | None = None
        self._scoring_pids: tuple[int, ...] = ()  # this scoring's kernel and reference workers
        prompt_gil_handoff()

    @contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.durations[name] = round(self.durations.get(name, 0.0) + time.perf_counter() - start, 4)
            log.debug("scorer stage done", extra={"stage": name, "seconds": self.durations[name]})

    def run(self) -> Score:
        start, waited_before = time.perf_counter(), waited_s()
        score = Score(suite=self.suite.name, task=self.task.id, verdict="passed")
        try:
            self._run_stages(score)
        except StageFailure as fail:
            # The crash decides the verdict (it scores 0 either way); findings recorded before it
            # stay in score.hacks as evidence for the audit.
            score.verdict, score.error = fail.verdict, fail.error
            if isinstance(fail, ProtocolBroken):
                self._record(score, [fail.finding])
        if score.verdict == "passed":
            self._apply_findings_verdict(score)
        # Inside the stages above: where concurrent scorings queue for the GPU.
        self.durations["gpu_lock_wait"] = round(waited_s() - waited_before, 4)
        self.durations["total"] = round(time.perf_counter() - start, 4)
        score.durations_s = dict(self.durations)
        log.debug("scored kernel", extra={"suite": score.suite, "task": score.task, "verdict": score.verdict})
        return score

    def _apply_findings_verdict(self, score: Score) -> None:
        if score.hacks:
            score.verdict = "hack_detected"
            score.error = "; ".join(f"{h['pattern']}: {h['evidence']}" for h in score.hacks)[:4000]
        elif score.correctness is not None and score.correctness.passed < score.correctness.trials:
            score.verdict = "incorrect"

    def _record(self, score: Score, findings: list[Finding]) -> None:
        for f in findings:
            entry = f.to_dict()
            bucket = score.hacks if f.severity == "reject" else score.flags
            if entry not in bucket:
                bucket.append(entry)

    def _run_stages(self, score: Score) -> None:
        with self._stage("source"):
            source = read_source(self.kernel_path)
        score.kernel_sha256 = source.sha256
        self._evidence.source, self._evidence.kernel_path = source.text, str(self.kernel_path)
        with self._stage("static"):
            self._record(score, registry.rule("source", self._evidence))
        will_time = not self.options.skip_timing and not score.hacks
        with _private_dir() as base:
            # Started now (or taken warm from a session's pool) so its interpreter start-up
            # overlaps the reference work; it loads no kernel until the reference is prepared.
            worker = self.kernel_worker or kernel_worker(WorkerDirs.create(base, "kernel"), self.options, self.device.type)
            ref = self.reference or ReferenceService(self.suite, self.task, self.device, self.options, self.overrides,
                                                     base, self.repetitions)
            before = dict(ref.durations)  # a session's reference has served other kernels
            try:
                if worker.proc is None:
                    worker.start()
                self._score_with(worker, ref, score, will_time)
            finally:
                # A dying CUDA context frees its memory on the GPU: not while another scorer times.
                with hold_gpu(ref.gpu_key() if ref.prepared is not None else None, shared=True):
                    worker.close()
                if self.reference is None:
                    ref.close()
                for stage, seconds in ref.durations.items():
                    if seconds - before.get(stage, 0.0) > 0:
                        self.durations[stage] = round(seconds - before.get(stage, 0.0), 4)

    def _score_with(self, worker: WorkerProcess, ref: ReferenceService, score: Score, will_time: bool) -> None:
        try:
            prepared = ref.prepare()
        except ReferenceUnfit as exc:
            raise StageFailure("runtime_error", f"reference: {exc}") from None
        score.environment = dict(prepared.environment)
        self._gpu_key = gpu_key = ref.gpu_key()
        self._scoring_pids = tuple(w.proc.pid for w in (worker, ref.worker) if w.proc is not None)
        self._ask(worker, "kernel_spawn", Ping(), None, self.options.load_s)
        self._check_wall(worker, score)
        if gpu_key:
            ensure_lock_files(gpu_key, score.isolation.get("uid"))
        if self.after_start is not None:
            self.after_start()
        baseline: tuple[TimingFigures, BatchClock] | None = None
        if will_time:
            # Timed before kernel.py is imported: no code of this scoring's kernel exists yet that
            # could slow the reference (stop it, starve it) while its baseline is measured.
            self._settle()
            baseline = self._watched_baseline(ref, score)
        # Building the task's models is host work; the worker locks the GPU itself for the hold.
        self._setup(worker, ref)
        # Importing kernel.py and building ModelNew on the host may compile extensions for a minute:
        # not under the lock (the model goes to the device in the correctness stage).
        self._load(worker, score)
        outcome = self._correctness(worker, ref)
        with self._stage("native_audit"):
            self._record(score, outcome.findings + registry.rule("correctness", self._evidence))
        score.correctness = outcome.result
        if outcome.failure:
            score.error = outcome.failure + self._memory_note
        if baseline is None or outcome.failure or score.hacks:
            return
        self._settle()
        base_figures, base_clock = baseline
        kernel = self._watched_kernel(worker, ref, score)
        score.timing = self._timing_result(base_figures, kernel)
        evidence = self._evidence
        evidence.timing, evidence.result = kernel, score.timing
        evidence.environment, evidence.contention = score.environment, score.contention
        evidence.observed = kernel.observed
        self._record(score, kernel.findings + registry.rule("timing", evidence))
        if score.hacks:
            return
        times = score.timing.kernel_times_ms
        with self._stage("judge_clock"):
            best: BatchClock | None = None
            for batch in range(_BATCH_TRIES):
                if batch:
                    ref.fresh_batch()
                clock, batch_findings = self._kernel_batch(worker, ref, score.timing.kernel_ms or 0.0,
                                                           kernel.availability, kernel.rep_cpu_ms)
                self._record(score, batch_findings)
                if batch_findings:
                    return
                best = clock if best is None or clock.bound_ms() < best.bound_ms() else best
                score.timing.judge_batches = batch + 1
                if not clock_findings(times, best, self.device.type):
                    break
        assert best is not None
        score.timing.judge_calls = best.calls
        score.timing.judge_bound_ms = best.bound_ms()
        score.timing.baseline_judge_bound_ms = base_clock.bound_ms()
        span = self._device_batches(worker, ref, score, best)
        if score.hacks:
            return
        evidence.clock, evidence.device_span = best, span
        self._record(score, registry.rule("clock", evidence))
        # The speedup never rests on the kernel's own clock alone: its time counts as at least the
        # judge's batch time a call over FLOOR_RATIO, so a forged clock the checks above let through
        # (their slack covers host-bound small kernels) gains at most that factor.
        floor_speedup(score.timing, best)

    def _settle(self) -> None:
        if self.before_timing is not None:
            with self._stage("settle"):
                self.before_timing()

    def _blame_memory(self, error: str) -> None:
        """An out-of-memory of the kernel's on a GPU that other processes crowded is not the kernel's
        verdict (scorer/gpu/crowding.py): ScorerBroken, and the sweep scores it again. Otherwise
        what the device held is kept (`_memory_note`) for the error text."""
        if self.device.type != "cuda" or not any(sign in error for sign in _OOM_SIGNS) or self._memory_note:
            return
        memory, why = crowding.read_device_memory(self._gpu_key, self._scoring_pids)
        if memory is None:
            self._memory_note = f" (whose memory filled the device is unknown: {why})"
            return
        if crowding.crowded_out(memory, crowding.requested_bytes(error)):
            raise ScorerBroken(f"the kernel ran out of device memory while other processes held more than the "
                               f"{1 - crowding.USABLE_SHARE:.0%} of it this scoring leaves them ({memory.describe()}): "
                               f"not the kernel's verdict; score it again with fewer scorings or programs on this GPU. "
                               f"The error: {error.strip()[-300:]}")
        self._memory_note = f" ({memory.describe()})"

    # --- kernel worker ----------------------------------------------------------------------
    def _ask(self, worker: WorkerProcess, stage: str, request: Request, payload: Any, timeout_s: float,
             answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
             watch: Callable[[], str | None] | None = None) -> Frame:
        """One request to the kernel's worker. Its reply is the kernel's process speaking: an error
        reply is parsed here, a success reply by the caller into its typed form."""
        if watch is None and self._channel is not None:
            watch = self._channel.violation
        with self._stage(stage):
            try:
                reply = worker.request(request.header(), payload, timeout_s, answer, watch)
            except WorkerFailure as exc:
                raise _failure_from_worker(exc, worker, stage) from None
        with _untrusted_reply(stage):
            if reply.header.get("ok") is not True:
                error = replies.ErrorReply.parse(reply.header)
                fail = _failure_from_reply({"kind": error.kind, "error": error.error}, stage)
                self._blame_memory(fail.error)
                fail.error += self._memory_note
                raise fail
            seconds = replies.worker_seconds(reply.header)
        if seconds is not None and stage != "kernel_spawn":
            # Time inside the worker's handler; the rest of a stage is spawn/transfer overhead.
            self.durations[f"{stage}_worker"] = round(seconds, 4)
        return reply

    def _check_wall(self, worker: WorkerProcess, score: Score) -> None:
        """The kernel worker's walls, read from outside while nothing of the kernel runs yet."""
        assert worker.proc is not None
        if not wall.enabled():
            score.isolation = {"walls": {}, "complete": False, "missing": list(wall.WALLS),
                               "error": f"turned off ({wall.ENV_SWITCH}=0)"}
        else:
            score.isolation = wall.inspect(wall.walled_pid(worker.proc.pid), tempfile.gettempdir(),
                                           worker.fd_allowance())
        if score.isolation["complete"]:
            return
        line = (f"the kernel's process is not fully walled in on this host (missing: "
                f"{', '.join(score.isolation['missing'])})")
        if self.options.require_isolation:
            raise ScorerUserError(f"{line}; score as root on a host with namespaces and seccomp "
                                  "(pip install pyseccomp), or pass --accept-weak-isolation to score anyway")
        log.warning("%s; the score records it", line)

    def _setup(self, worker: WorkerProcess, ref: ReferenceService) -> None:
        plan = ref.plan
        # A copy in the worker's own folder: behind its wall the kernel worker sees no other folder
        # of the judge's temp space, where a suite may live (KernelBench tasks are single files).
        task_copy = worker.dirs.workdir / "task" / Path(self.task.path).name
        task_copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(self.task.path, task_copy)
        setup = KernelSetup(task_path=str(task_copy), device=str(self.device), overrides=self.overrides,
                            alt_overrides=[a["overrides"] for a in plan.alt_shapes], init_seed=plan.init_seed,
                            policy=self.suite.policy.to_dict())
        reply = self._ask(worker, "kernel_setup", setup, None, self.options.load_s)
        # Read by the judge while the worker is still trusted (kernel.py not imported yet).
        assert worker.proc is not None
        pid = wall.walled_pid(worker.proc.pid)
        with _untrusted_reply("kernel_setup"):
            fingerprint = replies.SetupReply.parse(reply.header).timers
        self._evidence.native = NativeWatch(pid, fingerprint, native_audit.probe(pid), native_audit.mapped_objects(pid))
        self._channel = outside.ChannelWatch(pid, (worker.to_child, worker.from_child))
        self._channel.arm()

    def _load(self, worker: WorkerProcess, score: Score) -> None:
        kernel_copy = worker.dirs.workdir / "kernel.py"
        shutil.copyfile(self.kernel_path, kernel_copy)
        reply = self._ask(worker, "load", KernelLoad(str(kernel_copy)), None, self.options.load_s)
        if wall.enabled() and worker.proc is not None:
            # Again once the kernel has run: everything it holds came through its own wall.
            wall.record_descriptors(score.isolation, wall.fd_report(wall.walled_pid(worker.proc.pid),
                                                                    worker.fd_allowance(), loaded=True))
        with _untrusted_reply("load"):
            loaded = replies.LoadReply.parse(reply.header)
        self._evidence.observed = [loaded.observed]
        self._record(score, registry.rule("load", self._evidence))
        score.isolation["channel"] = "watched" if self._channel is not None and self._channel.readable else "unverified"

    def _judge_calls(self, parsed: replies.CorrectnessReply, alt_overrides: list[Any]) -> list[list[Finding]]:
        """Each call's findings: the judge's rulings on what the worker observed of it (its output
        object, the first call's launches, its library work)."""
        threshold = self.suite.policy.own_work_share
        first = parsed.calls[0].library
        self._first_library_work = total_library_work(first) if first is not None else 0
        by_call = []
        for i, c in enumerate(parsed.calls):
            found = lazy_findings(c.output) if c.output is not None else []
            found += ghost_findings(parsed.launches) if i == 0 else []
            if c.library is not None and i == 0:
                found += library_findings(c.library, threshold)
            elif c.library is not None and c.trial.startswith("alt-"):
                found += library_findings(c.library, threshold,
                                          where=f"at the alternative shape {alt_overrides[int(c.trial[4:])]}")
            elif c.library is not None:
                found += library_findings(c.library, threshold, self._first_library_work, f"on trial '{c.trial}'")
            by_call.append(found)
        return by_call

    def _correctness(self, worker: WorkerProcess, ref: ReferenceService) -> CorrectnessOutcome:
        prepared, plan = ref.prepare(), ref.plan
        # The worker takes the GPU lock itself, letting go while the kernel compiles (scorer/gpu/compile_gap.py).
        request = KernelCorrectness(output_specs=prepared.output_specs, seeds=plan.seeds,
                                    alt=[{"seed": a["seed"], "output_specs": specs}
                                         for a, specs in zip(plan.alt_shapes, prepared.alt_output_specs, strict=True)],
                                    gpu_lock=ref.gpu_key())
        reply = self._ask(worker, "correctness", request, None, self.options.correctness_s)
        with _untrusted_reply("correctness"):
            parsed = replies.CorrectnessReply.parse(reply.header, replies.correctness_trials(len(plan.seeds),
                                                                                             len(plan.alt_shapes)))
        self._evidence.observed = [parsed.observed]  # ruled with the stage's other checks (registry "correctness")
        by_call = self._judge_calls(parsed, [a["overrides"] for a in plan.alt_shapes])
        judged = [f for found in by_call for f in found]
        self._call_s = self.durations.get("correctness", 0.0) / max(1, len(parsed.calls))
        with self._stage("checks"):
            calls = [c.to_dict() for c in parsed.calls]
            for call in parsed.calls:
                self._blame_memory(call.error or "")
            self.durations["correctness_gpu_lock_wait_worker"] = parsed.gpu_lock_wait_s
            shipped, payload = _shipped(parsed.shared, reply)
            # The reference worker takes the lock itself, as the kernel's did for its trials.
            compare = ReferenceCompare(calls=calls, alt_shapes=[a["overrides"] for a in plan.alt_shapes],
                                       gpu_lock=ref.gpu_key(), shared=shipped)
            h = ref.ask("compare", compare, reference_replies.CompareReply, payload)
            for step, seconds in (h.steps_s or {}).items():
                self.durations[f"compare_{step}_worker"] = round(float(seconds), 4)
            # Read: the kernel's process frees them, so the baseline's timing on this GPU has that memory.
            with hold_gpu(ref.gpu_key(), shared=True):
                self._ask(worker, "release", KernelRelease(), None, self.options.correctness_s)
            if h.unreadable or h.outcome is None:
                # The judge's rulings stand: what made the outputs unreadable may be among them.
                return CorrectnessOutcome(CorrectnessResult(trials=len(plan.seeds), passed=0),
                                          f"the kernel's outputs could not be read: {h.unreadable}", judged)
            outcome = CorrectnessOutcome.from_dict(h.outcome)
            outcome.findings[:0] = judged
            digests = parsed.input_digests
            if outcome.failure and digests and digests != prepared.input_digests[: len(digests)]:
                outcome.failure += ("\n(the kernel worker drew other inputs than the reference worker from the same seeds: "
                                    "the task's get_inputs() is not reproducible under torch.manual_seed, or the kernel "
                                    "changed how inputs are drawn)")
        return outcome

    def _time_kernel(self, worker: WorkerProcess, ref: ReferenceService) -> TimingFigures:
        plan = ref.plan
        # On a CPU (Triton's interpreter: seconds a call) the stage's limit may not hold every planned
        # repetition; a GPU's first calls compile, so correctness says nothing there of a call's cost.
        call_s = self._call_s if self.device.type == "cpu" else None
        picked, self._repetitions_cut = timed_subset(len(plan.rep_seeds), plan.keep_reps, call_s, self.warmup,
                                                     self.options.timing_s)
        seeds = [plan.rep_seeds[i] for i in picked]
        keep = [j for j, i in enumerate(picked) if i in plan.keep_reps]
        request = KernelTime(warmup=self.warmup, repetitions=len(seeds), flush_l2=self.suite.timing.flush_l2,
                             warm_seed=plan.warm_seed)
        # The repetitions' seeds, and which outputs are kept, go out one repetition at a time.
        assert worker.proc is not None
        kernel_pid = wall.walled_pid(worker.proc.pid)
        # The scheduler's count serves the host-clock rule, which has device events to hold it against.
        feed = RepFeed(seeds, keep, kernel_pid if self.device.type == "cuda" else None)
        on_cpu = self.device.type == "cpu"
        stage_cpu = StageCpu(worker.proc.pid, kernel_pid) if on_cpu else None
        core_share = CoreShare(kernel_pid) if on_cpu else None
        beside: set[str] = set()

        def watch() -> str | None:
            # At every step of the timed loop: the channel, and processes beside the loop.
            beside.update(outside.processes_beside(kernel_pid))
            return self._channel.violation() if self._channel is not None else None

        with hold_gpu(ref.gpu_key()):
            reply = self._ask(worker, "timing", request, None, self.options.timing_s, feed, watch)
        spent = stage_cpu.spent_ms() if stage_cpu is not None else None
        rep_cpu_ms = None if spent is None else spent / (self.warmup + len(seeds))
        availability = core_share.share() if core_share is not None else None
        if not feed.finished:
            raise StageFailure("runtime_error", f"timing: the kernel worker's timed loop ended after repetition "
                                                f"{feed.done} of {len(seeds)}")
        with _untrusted_reply("timing"):
            h = replies.TimeReply.parse(reply.header, len(seeds), self.device.type == "cuda", sorted(feed.keep))
        findings = [f for k in h.kept for f in lazy_findings(k.output) + mutation_findings(k)]
        findings += library_findings(h.library, self.suite.policy.own_work_share, self._first_library_work, "while timed")
        if beside:
            findings.append(Finding("thread-injection", f"process(es) {sorted(beside)[:5]} of the kernel's worker ran "
                                                        "beside its timed loop (read by the judge from /proc)"))
        # The worker numbers the repetitions it ran; the reference knows them by the planned ones.
        planned = {f"rep-{j}": f"rep-{i}" for j, i in enumerate(picked)}
        shipped, payload = _renamed(_shipped(h.shared, reply), planned)
        with self._stage("timed_checks"), hold_gpu(ref.gpu_key(), shared=True):
            committed = {planned[f"rep-{k}"]: feed.digests[k] for k in sorted(feed.keep)}
            checked = ref.ask("compare_timed", ReferenceCompareTimed(committed, shipped), reference_replies.FindingsReply,
                              payload)
        findings += [Finding(**f) for f in checked.findings]
        return TimingFigures(h.timer, h.times_ms, h.host_times_ms, h.event_times_ms, findings, h.drain_ms,
                             h.idle_drain_ms, h.gate, h.gate_ms, feed.waited_ms(), rep_cpu_ms,
                             availability=availability, launch_window=h.launch_window, observed=[h.observed])

    def _watched_baseline(self, ref: ReferenceService, score: Score) -> tuple[TimingFigures, BatchClock]:
        """The baseline, watched for foreign compute on the device (before kernel.py exists, like
        the baseline itself). Where some ran it is measured once more on fresh rep seeds; the second
        is kept if it was clean, else the first stands, flagged contended. A baseline the session
        measured before is not watched again."""
        self._frozen_before = freeze.stats()
        score.contention = {"retimed": False, "windows": [], "frozen": {}}
        if ref.baseline is not None and ref.baseline_clock is not None:
            return ref.measure_baseline(self.warmup, self.repetitions, self.suite.timing.flush_l2)
        with contention.watch(self.device.type, ref.gpu_key()) as seen:
            first = ref.measure_baseline(self.warmup, self.repetitions, self.suite.timing.flush_l2)
        score.contention["windows"].append({"stage": "baseline", **seen.evidence()})
        if not seen.contended:
            return first
        score.contention["retimed"] = True
        ref.baseline = ref.baseline_clock = None
        ref.plan.rep_seeds = [secrets.randbits(31) for _ in ref.plan.rep_seeds]
        with contention.watch(self.device.type, ref.gpu_key()) as again:
            second = ref.measure_baseline(self.warmup, self.repetitions, self.suite.timing.flush_l2)
        score.contention["windows"].append({"stage": "baseline", **again.evidence()})
        if again.contended:
            score.contended = True
            ref.baseline, ref.baseline_clock = first
            return first
        return second

    def _watched_kernel(self, worker: WorkerProcess, ref: ReferenceService, score: Score) -> TimingFigures:
        """The kernel's timed stage, watched likewise; where foreign compute ran it is timed once
        more and the second timing is kept only when it was clean (a kernel that can cause
        contention gets no choice of its figures). The findings of both count."""
        with contention.watch(self.device.type, ref.gpu_key()) as seen:
            kernel = self._time_kernel(worker, ref)
        score.contention["windows"].append({"stage": "kernel", **seen.evidence()})
        if seen.contended:
            score.contention["retimed"] = True
            with contention.watch(self.device.type, ref.gpu_key()) as again:
                kernel2 = self._time_kernel(worker, ref)
            score.contention["windows"].append({"stage": "kernel", **again.evidence()})
            if again.contended:
                kernel.findings += kernel2.findings
                kernel.observed += kernel2.observed
                kernel.contended = score.contended = True
            else:
                kernel2.findings += kernel.findings
                kernel2.observed = kernel.observed + kernel2.observed
                kernel = kernel2
        score.contention["frozen"] = {k: round(v - self._frozen_before.get(k, 0.0), 4)
                                      for k, v in freeze.stats().items()}
        return kernel

    def _kernel_batch(self, worker: WorkerProcess, ref: ReferenceService, reported_ms: float,
                      timed_availability: float | None = None,
                      timed_cpu_ms_per_rep: float | None = None) -> tuple[BatchClock, list[Finding]]:
        """The kernel's batch on the first of the baseline batch's seeds (as many as its reported
        time asks for: a kernel that reports less than it takes only makes its batch longer); the
        judge's clock runs from the request until the reference worker has read every row at the
        secret positions."""
        plan, prepared = ref.plan, ref.prepare()
        assert worker.proc is not None
        on_cpu = self.device.type == "cpu"
        calls = min(len(plan.batch_seeds), batch_calls(self.device.type, reported_ms, prepared.output_bytes,
                                                       prepared.free_bytes))
        with _untrusted_reply("batch"), hold_gpu(ref.gpu_key()):
            reply = self._ask(worker, "batch_setup", KernelBatchSetup(calls=calls, warm_seed=plan.warm_seed,
                                                                      output_specs=prepared.output_specs),
                              None, self.options.timing_s)
            shipped = replies.BatchSetupReply.parse(reply.header).shared
            if shipped:
                ref.ask("batch_attach", ReferenceAttach(shipped), reference_replies.Empty)
            # The warm-up at setup left the GPU at its clock and the allocator warm; the batch
            # follows it at once, with the GPU held by this scoring alone.
            core_share = CoreShare(wall.walled_pid(worker.proc.pid)) if on_cpu else None
            t0 = time.perf_counter()
            reply = self._ask(worker, "batch", KernelBatch(plan.batch_seeds[:calls]), None,
                              self.options.timing_s)
            # On a CPU the slabs arrived with the reply, read into the judge's private memory: what the
            # batch produced is fixed here. On a GPU they stay in the kernel's memory until sampled.
            host_copy_ms = (time.perf_counter() - t0) * 1e3 if on_cpu else None
            availability = core_share.share() if core_share is not None else None
            sampled = ref.ask("batch_sample", ReferenceSample(calls), reference_replies.SampleReply, reply.payload)
            total_ms = host_copy_ms if host_copy_ms is not None else (time.perf_counter() - t0) * 1e3
        findings = self._batch_rulings(ref, sampled, reply, "judge-clocked batch")
        batch_cpu = core_share.ran_ms / calls if core_share is not None and core_share.ran_ms else None
        return BatchClock(calls, total_ms, ref.rtt_ms, 2, ref.overhead_ms_per_call, availability,
                          timed_availability, batch_cpu, timed_cpu_ms_per_rep), findings

    def _device_batches(self, worker: WorkerProcess, ref: ReferenceService, score: Score,
                        clock: BatchClock) -> DeviceSpan | None:
        """The fastest of up to _DEVICE_TRIES device-timed batches, each on fresh seeds: another is
        taken only where the first would find the kernel's times forged (another process's work on
        the device slows a span as it slows a batch; each span is real work, so the fastest still
        bounds)."""
        timing, best = score.timing, None
        assert timing is not None
        for _ in range(_DEVICE_TRIES):
            span = self._device_batch(worker, ref, score, clock)
            if span is None or score.hacks:
                break
            best = span if best is None or span.bound_ms() < best.bound_ms() else best
            if not device_findings(timing.kernel_times_ms, best):
                break
        if best is not None:
            timing.judge_device_ms, timing.judge_device_calls = best.bound_ms(), best.calls
            # What the span holds beyond the calls as their events read them (a figure: the
            # protocol's fixed cost, spread over the calls; the reported times are the kernel's word).
            timing.judge_device_fixed_ms = best.total_ms - best.round_trips * best.round_trip_ms - best.calls * (
                timing.kernel_ms or 0.0)
        return best

    def _device_batch(self, worker: WorkerProcess, ref: ReferenceService, score: Score,
                      clock: BatchClock) -> DeviceSpan | None:
        """The device-timed batch (GPU; scorer/gpu/release_gate.py) on fresh secret seeds: the
        kernel's worker enqueues its calls behind a gate, the reference worker copies the inputs in
        and opens it, and the judge's clock runs from that to the rows read at secret positions
        after the kernel's worker waited for its calls. None, with the reason in
        `timing.judge_device_note`, where the task's inputs cannot be slabbed."""
        timing = score.timing
        assert timing is not None
        if self.device.type != "cuda" or not release_gate.available():
            return None
        with self._stage("device_clock"):
            ref.fresh_batch()
            plan, prepared = ref.plan, ref.prepare()
            calls = device_calls(timing.kernel_ms or 0.0, len(plan.batch_seeds))  # the reference may fit fewer
            want = release_gate.flag_value(secrets.randbits(31))
            # Enqueueing a call took the honest worker less than its batch call: a few times that.
            after_s = min(5.0, max(0.02, 4 * calls * clock.work_ms() / max(1, clock.calls) / 1e3))
            with _untrusted_reply("device-timed batch"), hold_gpu(ref.gpu_key()):
                planned = ref.ask("gate_plan", ReferenceGatePlan(calls, plan.warm_seed), reference_replies.GatePlanReply)
                if not planned.calls:
                    timing.judge_device_note = f"no device-timed batch: {planned.why}"
                    return None
                calls = planned.calls
                reply = self._ask(worker, "gate_setup", KernelGateSetup(calls, plan.warm_seed, prepared.output_specs),
                                  None, self.options.timing_s)
                shared = replies.BatchSetupReply.parse(reply.header).shared
                setup = ref.ask("gate_setup", ReferenceGateSetup(shared), reference_replies.GateSetupReply)
                if setup.violation:
                    raise ProtocolBroken("device-timed batch", setup.violation)
                released: list[float] = []
                with ReleaseOnce(lambda: released.append(ref.ask("gate_release", ReferenceGateRelease(want),
                                                                  reference_replies.GateReleaseReply).release_ms),
                                 after_s) as release:
                    reply = self._ask(worker, "gate_enqueue", KernelGateEnqueue(want), None, self.options.timing_s)
                # The channel watch reads /proc for the worker's whole tree: after the clock stops.
                waited = self._ask(worker, "gate_wait", KernelGateWait(), None, self.options.timing_s,
                                   watch=_no_watch)
                sampled = ref.ask("batch_sample", ReferenceSample(calls), reference_replies.SampleReply)
                assert release.released_at is not None
                total_ms = (time.perf_counter() - release.released_at) * 1e3
                seen = self._channel.violation() if self._channel is not None else None
                if seen:
                    raise ProtocolBroken("device-timed batch", seen)
                replies.GateWaitReply.parse(waited.header)
            if released and released[0] > release_gate.RELEASE_VOID_MS:
                # The device ran the reference worker's release this late (no switch away from the
                # spinning gate): the gate may have given up first. Nothing of the kernel's did that.
                timing.judge_device_note = (f"no device-timed batch: the device ran the release {released[0]:.0f} ms "
                                            "after it was asked")
                return None
            if release.by_timer:
                timing.judge_device_note = (f"the gate opened after {after_s * 1e3:.0f} ms, before the kernel's worker "
                                            "had enqueued its calls (a forward that waits for the device)")
            self._record(score, self._batch_rulings(ref, sampled, reply, "device-timed batch"))
        return DeviceSpan(calls, total_ms, ref.rtt_ms)

    def _batch_rulings(self, ref: ReferenceService, sampled: reference_replies.SampleReply, reply: Frame,
                       what: str) -> list[Finding]:
        """Once the clock has stopped: the rows as the reference worker read them, the judge's
        rulings on the batch's library work and on what the kernel's turns saw, and the reference
        worker's on its outputs."""
        with _untrusted_reply(what):
            if sampled.violation:
                raise ProtocolBroken(what, sampled.violation)
            if sampled.error:
                raise StageFailure("runtime_error", f"{what}: {sampled.error}")
            with hold_gpu(ref.gpu_key(), shared=True):
                verdict = ref.ask("batch_verify", ReferenceVerifyBatch(), reference_replies.FindingsReply)
            batch = replies.BatchReply.parse(reply.header)
            findings = library_findings(batch.library, self.suite.policy.own_work_share, self._first_library_work,
                                        f"in the {what}")
            self._evidence.observed = [batch.observed]
            findings += registry.rule("batch", self._evidence)
            return findings + [Finding(**f) for f in verdict.findings]

    # --- timing figures ---------------------------------------------------------------------
    def _timing_result(self, baseline: TimingFigures, kernel: TimingFigures) -> TimingResult:
        base_ms, base_spread = median_and_spread(baseline.times_ms)
        kern_ms, kern_spread = median_and_spread(kernel.times_ms)
        return TimingResult(
            device=self.device.type, timer=kernel.timer, baseline_ms=base_ms, kernel_ms=kern_ms,
            speedup=base_ms / kern_ms if kern_ms > 0 else None, repetitions=len(kernel.times_ms),
            baseline_spread=base_spread, kernel_spread=kern_spread,
            baseline_times_ms=list(baseline.times_ms), kernel_times_ms=list(kernel.times_ms), gate=kernel.gate,
            launch_window=dict(kernel.launch_window), repetitions_cut=self._repetitions_cut,
        )



def score_kernel(suite: Suite, task_id: str, kernel_path: Path, *, device: str = "auto",
                 options: ScoreOptions | None = None) -> Score:
    """Scores one kernel file against one task of a suite; a failing kernel is a verdict, not an error."""
    options = options or ScoreOptions()
    _deny_same_user_access()
    task = suite.task(task_id)
    requested = device if device != "auto" else options.device
    return Judge(suite, task, Path(kernel_path), resolve_device(requested, task, suite), options).run()

