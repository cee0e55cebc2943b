"""The judge: scores one kernel without ever importing it.

Stages, each a small function returning a typed result: source (no_kernel), static checks,
reference worker (inputs, reference outputs, baseline timing), kernel worker (load, correctness
trials, timing), verdict. The kernel runs only in its own child process; the judge holds the
reference outputs and does every comparison.
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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import torch

from scorer import dynamic_checks, static_checks
from scorer.catalog import Finding
from scorer.compare import Rule
from scorer.errors import ScorerBroken, ScorerUserError
from scorer.evaluate import CorrectnessOutcome, ReferenceData, ReferenceSet, evaluate_correctness, timed_output_findings
from scorer.gpu_lock import hold_gpu
from scorer.options import ScoreOptions
from scorer.score import Score, TimingResult
from scorer.suites import Suite, Task
from scorer.timing import median_and_spread
from scorer.workerproc import WorkerDirs, WorkerFailure, WorkerProcess

log = logging.getLogger("kernelarena.scorer")
_PR_SET_DUMPABLE = 4
# Timed repetitions followed by a call under the library-call monitor. A kernel that switches to
# library compute on a share f of the timed calls goes unseen with probability (1 - f) ** N; to move
# the median f must be at least 1/2, so 6 calls leave it under 2%.
_WATCHED_REPS = 6
_OOM_SIGNS = ("MemoryError", "out of memory", "can't allocate memory", "OutOfMemoryError")


class StageFailure(Exception):
    """Ends scoring early with a verdict (no_kernel, compile_error, runtime_error, timeout)."""

    def __init__(self, verdict: str, error: str) -> None:
        super().__init__(error)
        self.verdict = verdict
        self.error = error


@dataclass
class Source:
    text: str
    sha256: str


@dataclass
class TimingFigures:
    timer: str
    times_ms: list[float]
    host_times_ms: list[float]
    event_times_ms: list[float] | None = None
    findings: list[Finding] = field(default_factory=list)
    drain_ms: list[float] | None = None
    idle_drain_ms: list[float] | None = None
    gate: str = ""
    gate_ms: list[float] | None = None


def _floats(header: dict[str, Any], key: str) -> list[float] | None:
    """An optional list of times from an untrusted reply header (None where the worker gave none)."""
    return [float(t) for t in header[key]] if header.get(key) is not None else None


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
    """The kernel's process could forge a well-framed but ill-formed reply: that is its failure."""
    try:
        yield
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
        raise StageFailure("runtime_error", f"{stage}: the kernel worker sent a malformed reply ({type(exc).__name__}: {exc})") from None


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


class Judge:
    def __init__(self, suite: Suite, task: Task, kernel_path: Path, device: torch.device, options: ScoreOptions) -> None:
        self.suite, self.task, self.kernel_path = suite, task, kernel_path
        self.device, self.options = device, options
        self.rule = Rule(task.tolerance.rtol, task.tolerance.atol, task.tolerance.exact, task.tolerance.deterministic)
        use_test = options.use_test_shapes if options.use_test_shapes is not None else device.type == "cpu"
        self.overrides: dict[str, Any] = dict(task.test_shapes) if use_test else {}
        self.warmup = options.warmup if options.warmup is not None else suite.timing.warmup
        self.repetitions = options.repetitions if options.repetitions is not None else suite.timing.repetitions
        self.input_sets = max(1, min(suite.timing.input_sets, options.seeds))
        self.durations: dict[str, float] = {}

    @contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.durations[name] = round(time.perf_counter() - start, 4)
            log.debug("scorer stage done", extra={"stage": name, "seconds": self.durations[name]})

    def run(self) -> Score:
        start = time.perf_counter()
        score = Score(suite=self.suite.name, task=self.task.id, verdict="passed")
        try:
            self._run_stages(score)
        except StageFailure as fail:
            # The crash decides the verdict (it scores 0 either way); findings recorded before it
            # stay in score.hacks as evidence for the audit.
            score.verdict, score.error = fail.verdict, fail.error
        if score.verdict == "passed":
            self._apply_findings_verdict(score)
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
        with self._stage("static"):
            self._record(score, static_checks.analyze_source(source.text, str(self.kernel_path), self.suite.policy,
                                                                task_dtype=self.task.dtype))
        will_time = not self.options.skip_timing and not score.hacks
        with _private_dir() as base:
            limit = self.options.memory_limit_bytes if self.device.type == "cpu" else None
            # Started now so its interpreter start-up overlaps the reference work; it touches no
            # device and loads no kernel until the reference worker has exited.
            with WorkerProcess("kernel", WorkerDirs.create(base, "kernel"), memory_limit_bytes=limit) as worker:
                ref, baseline = self._reference(base, will_time)
                score.environment = ref.environment
                outcome, kernel_timing = self._kernel(worker, source, ref, score, will_time)
        score.correctness = outcome.result
        if outcome.failure:
            score.error = outcome.failure
        if kernel_timing is not None and baseline is not None:
            score.timing = self._timing_result(baseline, kernel_timing)
            self._record(score, self._timing_findings(kernel_timing, score.timing, ref))

    # --- reference worker -------------------------------------------------------------------
    def _reference(self, base: Path, will_time: bool) -> tuple[ReferenceData, TimingFigures | None]:
        init_seed = secrets.randbits(31)
        variants = self.task.full_alt_shapes if not self.overrides and self.task.full_alt_shapes else self.task.alt_shapes
        alt_shapes = [{**self.overrides, **alt} for alt in variants] if self.options.alt_shapes else []
        header = {
            "op": "prepare", "task_path": str(self.task.path), "device": str(self.device),
            "overrides": self.overrides, "init_seed": init_seed,
            "seeds": [secrets.randbits(31) for _ in range(max(2, self.options.seeds))],
            "alt_shapes": [{"overrides": o, "seed": secrets.randbits(31)} for o in alt_shapes],
            "fp64": self.task.dtype in (None, "float32"),
        }
        worker = WorkerProcess("reference", WorkerDirs.create(base, "reference"))
        with worker:
            try:
                with self._stage("reference_spawn"):
                    worker.request({"op": "ping"}, None, self.options.reference_s)
                with self._stage("reference"):
                    reply = worker.request(header, None, self.options.reference_s)
                self._note_worker_time("reference", reply.header)
                if not reply.header.get("ok"):
                    raise ScorerBroken(f"reference for task '{self.task.id}' failed: {reply.header.get('error')}")
                ref = self._reference_data(reply.header, reply.payload, alt_shapes, init_seed)
                baseline = self._time_baseline(worker, ref) if will_time else None
            except WorkerFailure as exc:
                raise ScorerBroken(f"reference worker for task '{self.task.id}' failed: {_worker_text(exc, worker)}") from None
        return ref, baseline

    @staticmethod
    def _reference_data(header: dict[str, Any], payload: dict[str, Any], alt_shapes: list[dict[str, Any]],
                        init_seed: int) -> ReferenceData:
        def sets(raw: list[dict[str, Any]]) -> list[ReferenceSet]:
            return [ReferenceSet(s["inputs"], s["outputs"], s.get("outputs_fp64")) for s in raw]

        main = payload["main"]
        alts = [{"init_inputs": a["init_inputs"], "state_dict": a["state_dict"], "sets": sets(a["sets"]), "shape": shape}
                for a, shape in zip(payload["alt"], alt_shapes)]
        env = dict(header.get("environment", {}))
        env["init_seed"] = init_seed
        return ReferenceData(main["init_inputs"], main["state_dict"], sets(main["sets"]), alts, env)

    def _gpu_key(self, env: dict[str, Any]) -> str | None:
        if self.device.type != "cuda":
            return None
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
        return str(env.get("gpu_uuid") or f"cuda-{visible}")

    def _time_baseline(self, worker: WorkerProcess, ref: ReferenceData) -> TimingFigures:
        header = {"op": "time", "warmup": self.warmup, "repetitions": self.repetitions,
                  "flush_l2": self.suite.timing.flush_l2, "input_sets": self.input_sets, "baseline": self.suite.baseline}
        with self._stage("baseline_timing"), hold_gpu(self._gpu_key(ref.environment)):
            reply = worker.request(header, None, self.options.timing_s)
        self._note_worker_time("baseline_timing", reply.header)
        if not reply.header.get("ok"):
            raise ScorerBroken(f"baseline timing for task '{self.task.id}' failed: {reply.header.get('error')}")
        return TimingFigures(reply.header["timer"], reply.header["times_ms"], reply.header["host_times_ms"])

    # --- kernel worker ----------------------------------------------------------------------
    def _kernel(self, worker: WorkerProcess, source: Source, ref: ReferenceData, score: Score,
                will_time: bool) -> tuple[CorrectnessOutcome, TimingFigures | None]:
        kernel_copy = worker.dirs.workdir / "kernel.py"
        shutil.copyfile(self.kernel_path, kernel_copy)
        self._ask(worker, "kernel_spawn", {"op": "ping"}, None, self.options.load_s)
        with hold_gpu(self._gpu_key(ref.environment), shared=True):
            self._load(worker, kernel_copy, ref, score)
            outcome = self._correctness(worker, ref)
        self._record(score, outcome.findings)
        if not will_time or outcome.failure or score.hacks:
            return outcome, None
        return outcome, self._time_kernel(worker, ref)

    def _ask(self, worker: WorkerProcess, stage: str, header: dict[str, Any], payload: Any, timeout_s: float) -> Any:
        with self._stage(stage):
            try:
                reply = worker.request(header, payload, timeout_s)
            except WorkerFailure as exc:
                raise _failure_from_worker(exc, worker, stage) from None
        if not reply.header.get("ok"):
            raise _failure_from_reply(reply.header, stage)
        self._note_worker_time(stage, reply.header)
        return reply

    def _note_worker_time(self, stage: str, header: dict[str, Any]) -> None:
        """Time spent inside the worker's handler; the rest of a stage is spawn/transfer overhead."""
        worker_s = header.get("worker_s")
        if isinstance(worker_s, (int, float)) and stage != "kernel_spawn":
            self.durations[f"{stage}_worker"] = round(float(worker_s), 4)

    def _load(self, worker: WorkerProcess, kernel_copy: Path, ref: ReferenceData, score: Score) -> None:
        header = {"op": "load", "kernel_path": str(kernel_copy), "device": str(self.device),
                  "init_seed": ref.environment["init_seed"], "policy": self.suite.policy.to_dict()}
        reply = self._ask(worker, "load", header, {"init_inputs": ref.init_inputs, "state_dict": ref.state_dict},
                          self.options.load_s)
        with _untrusted_reply("load"):
            self._record(score, [Finding(**f) for f in reply.header.get("findings", [])])

    def _correctness(self, worker: WorkerProcess, ref: ReferenceData) -> CorrectnessOutcome:
        def specs(outputs: list[torch.Tensor]) -> list[list[Any]]:
            return [[list(t.shape), str(t.dtype)] for t in outputs]

        header = {"op": "correctness", "output_specs": specs(ref.sets[0].outputs)}
        payload = {
            "sets": [s.inputs for s in ref.sets],
            "alt": [{"init_inputs": a["init_inputs"], "state_dict": a["state_dict"], "inputs": a["sets"][0].inputs,
                     "output_specs": specs(a["sets"][0].outputs)} for a in ref.alt],
        }
        reply = self._ask(worker, "correctness", header, payload, self.options.correctness_s)
        with self._stage("checks"), _untrusted_reply("correctness"):
            outcome = evaluate_correctness(ref, list(reply.header.get("calls", [])), dict(reply.payload or {}),
                                           self.device.type, self.rule, self.task.dtype, self.task.category)
            outcome.findings += [Finding(**f) for f in reply.header.get("findings", [])]
        return outcome

    def _time_kernel(self, worker: WorkerProcess, ref: ReferenceData) -> TimingFigures:
        chance = secrets.SystemRandom()
        keep = sorted(chance.sample(range(self.repetitions), min(2, self.repetitions)))
        watch = sorted(chance.sample(range(self.repetitions), min(_WATCHED_REPS, self.repetitions)))
        header = {"op": "time", "warmup": self.warmup, "repetitions": self.repetitions,
                  "flush_l2": self.suite.timing.flush_l2, "input_sets": self.input_sets, "keep_reps": keep,
                  "watch_reps": watch}
        with hold_gpu(self._gpu_key(ref.environment)):
            reply = self._ask(worker, "timing", header, None, self.options.timing_s)
        h = reply.header
        with _untrusted_reply("timing"):
            findings = [Finding(**f) for f in h.get("findings", [])]
            kept = dict(dict(reply.payload or {}).get("kept", {}))
            if sorted(kept) != keep:
                findings.append(Finding("caching-memoization", f"timed outputs of repetitions {keep} were not all returned (got {sorted(kept)})"))
            findings += timed_output_findings(kept, ref, self.input_sets, self.rule)
            times = [float(t) for t in h["times_ms"]]
            host = [float(t) for t in h["host_times_ms"]]
            return TimingFigures(str(h["timer"]), times, host, _floats(h, "event_times_ms"), findings,
                                 _floats(h, "drain_ms"), _floats(h, "idle_drain_ms"), str(h.get("gate", "")),
                                 _floats(h, "gate_ms"))

    # --- timing figures ---------------------------------------------------------------------
    def _timing_result(self, baseline: TimingFigures, kernel: TimingFigures) -> TimingResult:
        base_ms, base_spread = median_and_spread(baseline.times_ms)
        kern_ms, kern_spread = median_and_spread(kernel.times_ms)
        return TimingResult(
            device=self.device.type, timer=kernel.timer, baseline_ms=base_ms, kernel_ms=kern_ms,
            speedup=base_ms / kern_ms if kern_ms > 0 else None, repetitions=len(kernel.times_ms),
            baseline_spread=base_spread, kernel_spread=kern_spread,
            baseline_times_ms=list(baseline.times_ms), kernel_times_ms=list(kernel.times_ms), gate=kernel.gate,
        )

    def _timing_findings(self, kernel: TimingFigures, timing: TimingResult, ref: ReferenceData) -> list[Finding]:
        findings = list(kernel.findings)
        if kernel.event_times_ms is not None:
            findings += dynamic_checks.timing_findings(kernel.event_times_ms, kernel.host_times_ms,
                                                       kernel.drain_ms, kernel.idle_drain_ms, kernel.gate_ms)
        if timing.kernel_ms is not None:
            device_name = ref.environment.get("gpu") or "cpu"
            findings += dynamic_checks.roofline_findings(timing.kernel_ms, self.task.flops, self.task.bytes_moved, device_name)
        return findings


def score_kernel(suite: Suite, task_id: str, kernel_path: Path, *, device: str = "auto",
                 options: ScoreOptions | None = None) -> Score:
    """Scores one kernel file against one task of a suite; a failing kernel is a verdict, not an error."""
    options = options or ScoreOptions()
    _deny_same_user_access()
    task = suite.task(task_id)
    requested = device if device != "auto" else options.device
    return Judge(suite, task, Path(kernel_path), resolve_device(requested, task, suite), options).run()
