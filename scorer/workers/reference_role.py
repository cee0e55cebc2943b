"""The reference worker: the trusted holder of the reference and the place every comparison runs.

It builds the task's Model, draws the input sets from the judge's seeds on the scoring device,
computes the reference outputs and keeps them there (with a strided float64 sample for the
precision check), times the baseline, and runs the baseline's batch under the judge's clock. It
stays alive while the kernel is scored: the kernel's outputs come to it (CUDA IPC handles on a GPU,
spool files on the CPU) and it compares them on the device, so only verdicts and small summaries
cross a process boundary and no reference output ever reaches the kernel's process.
"""

from __future__ import annotations

import copy
import functools
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from scorer.checks.catalog import Finding
from scorer.checks.turns import Turns
from scorer.correctness.compare import Rule, compare_outputs
from scorer.correctness.evaluate import (
    ReferenceData,
    ReferenceSet,
    evaluate_correctness,
    fp64_sample,
    precision_bars,
    timed_output_findings,
    timed_precision_findings,
)
from scorer.correctness.index_ties import settle_ties
from scorer.gpu.compile_gap import between_pieces, no_pause, open_context, shared_gpu_work
from scorer.gpu.gate import make_gate
from scorer.gpu.lock import waited_s
from scorer.gpu.memory import seeds_that_fit, tensor_bytes
from scorer.gpu.timing import Clock, TimingPlan, time_forward
from scorer.tasks.load import as_output_list, build_model, input_digest, load_module, make_inputs, to_double
from scorer.tasks.suites import IndexOutput
from scorer.workers import batch as batch_mod
from scorer.workers import commitment
from scorer.workers import reference_gate as gate_side
from scorer.workers.device_share import ShareError, open_shared
from scorer.workers.environment import collect_environment, pin_cpu_threads
from scorer.workers.protocol import (
    ReferenceAttach,
    ReferenceBatch,
    ReferenceBatchCollect,
    ReferenceBatchSetup,
    ReferenceCompare,
    ReferenceCompareTimed,
    ReferenceEnvironment,
    ReferenceGatePlan,
    ReferenceGateRelease,
    ReferenceGateSetup,
    ReferencePrepare,
    ReferenceSample,
    ReferenceTime,
    ReferenceVerifyBatch,
)

FP64_SEEDS = 1
_SAMPLE_POSITIONS = 4096
_DENSE_TYPES = (torch.Tensor, torch.nn.Parameter)


@dataclass
class Variant:
    module: Any
    model: torch.nn.Module
    seeds: list[int]
    sets: list[ReferenceSet] = field(default_factory=list)


@dataclass
class BatchState:
    seeds: list[int]
    slabs: list[torch.Tensor] = field(default_factory=list)
    positions: list[torch.Tensor] = field(default_factory=list)
    expected: list[torch.Tensor] = field(default_factory=list)  # reference values at the positions
    challenge: dict[int, list[torch.Tensor]] = field(default_factory=dict)  # row -> reference outputs
    kernel_slabs: list[torch.Tensor] = field(default_factory=list)
    kernel_samples: list[torch.Tensor] = field(default_factory=list)
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # one call's output shapes


_MALFORMED = (TypeError, KeyError, AttributeError, ValueError, IndexError)


def _outputs_of(shared: dict[str, Any] | None, payload: Any, device: torch.device) -> dict[str, list[torch.Tensor]]:
    """The kernel's outputs as the judge forwarded them: IPC descriptors, or a payload on CPU.
    Whatever came from the kernel's process is checked here; a malformed part is a ShareError."""
    try:
        if shared is not None:
            return {str(k): open_shared(v, device) for k, v in dict(shared).items()}
        outputs = {str(k): list(v) if isinstance(v, (list, tuple)) else v for k, v in dict(payload or {}).items()}
    except _MALFORMED as exc:
        raise ShareError(f"malformed outputs from the kernel worker: {type(exc).__name__}: {exc}") from None
    for name, value in outputs.items():
        _dense_only(name, value)
    return outputs


def _dense_only(name: str, value: Any) -> None:
    """A kernel's output is a dense tensor: a sparse or other layout (a red-team kernel had the
    worker's own copy of its output come back sparse) would fail inside the comparison, as the
    reference worker's fault, instead of as the kernel's."""
    if isinstance(value, (list, tuple)):
        for item in value:
            _dense_only(name, item)
    elif isinstance(value, torch.Tensor) and (value.layout != torch.strided or type(value) not in _DENSE_TYPES):
        raise ShareError(f"output '{name}' is a {type(value).__name__} of layout {value.layout}: outputs must be "
                         f"dense (strided) tensors")


class Steps:
    """Seconds per step of one request, for the judge's durations (where a stage's time went)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.seconds: dict[str, float] = {}

    def __call__(self, step: str, work: Callable[[], Any]) -> Any:
        started = self.clock.perf_counter()
        try:
            return work()
        finally:
            self.add(step, self.clock.perf_counter() - started)

    def add(self, step: str, seconds: float) -> None:
        self.seconds[step] = self.seconds.get(step, 0.0) + seconds


class ReferenceRole:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.device = torch.device("cpu")
        self.main: Variant | None = None
        self.alts: list[Variant] = []
        self.timed_seeds: list[int] = []
        self.timed_expected: dict[int, list[torch.Tensor]] = {}
        self.bstate: BatchState | None = None
        self.gate = gate_side.GateSide()
        self.batch_turns = Turns.calibration()
        self.timed_model: Any = None  # what the baseline is timed as (eager, or torch.compile'd)
        self.continued = 0  # times this process was continued after a stop
        self._count_stops()
        self.rule = Rule(1e-5, 1e-8, False)
        self.task: dict[str, Any] = {}

    def _sync(self) -> None:
        if self.device.type == "cuda":
            self.clock.cuda_sync(self.device)

    def _on_continue(self, _signum: int, _frame: Any) -> None:
        self.continued += 1

    def _count_stops(self) -> None:
        """Counts every time this process is continued after a stop (SIGSTOP cannot be caught, but
        the SIGCONT that ends it can): a baseline timed while stopped reads slower than it is, and
        the judge re-times it or fails, instead of inflating the kernel's speedup."""
        try:
            signal.signal(signal.SIGCONT, self._on_continue)
        except ValueError:  # not the main thread (a test driving the role in-process)
            pass

    def _release(self) -> None:
        """Hands cached blocks back to the driver: the kernel's worker shares this GPU."""
        if self.device.type == "cuda":
            self.clock.cuda_sync(self.device)
            torch.cuda.empty_cache()

    @staticmethod
    def _build(task_path: Path, overrides: dict[str, Any], init_seed: int, name: str) -> tuple[Any, torch.nn.Module]:
        """The task's module and Model, built on the host (no GPU work: done outside the GPU lock)."""
        module = load_module(task_path, name, overrides)
        model, _ = build_model(module, init_seed)
        return module, model

    def _variant(self, built: tuple[Any, torch.nn.Module], seeds: list[int], fp64: bool,
                 between: Callable[[], object] = no_pause) -> Variant:
        module, model = built
        model = model.to(self.device)
        variant = Variant(module, model, list(seeds))
        # float64 on the task's device: as exact as on CPU (no TF32 in fp64) and far faster on a GPU;
        # only the strided sample the precision check reads is kept.
        model_fp64 = copy.deepcopy(model).double() if fp64 else None
        with torch.no_grad():
            for i, seed in enumerate(seeds):
                if i:
                    between()
                inputs = make_inputs(module, seed, self.device)
                outputs = [o.detach() for o in as_output_list(model(*inputs))]
                sample64 = None
                if model_fp64 is not None and i < FP64_SEEDS:
                    sample64 = [fp64_sample(o) for o in as_output_list(model_fp64(*to_double(inputs)))]
                digest = input_digest(inputs)
                del inputs
                variant.sets.append(ReferenceSet(self._regen(module, seed), outputs, sample64, digest))
        del model_fp64
        return variant

    def _regen(self, module: Any, seed: int) -> Any:
        # Inputs are drawn again when the failure evidence needs them, not kept: one input set of a
        # published-size task is gigabytes.
        return lambda: make_inputs(module, seed, self.device)

    def environment(self, request: ReferenceEnvironment, _payload: Any) -> tuple[dict[str, Any], Any]:
        """The device's identity (its UUID keys the GPU lock) before anything runs on it."""
        self.device = torch.device(request.device)
        pin_cpu_threads(self.device)
        return {"ok": True, "environment": collect_environment(self.device)}, None

    def prepare(self, request: ReferencePrepare, _payload: Any) -> tuple[dict[str, Any], Any]:
        """Builds the task's models on the host (the main shape's and the alternative shapes'), then,
        holding the GPU lock's shared side itself (the judge does not: the host-side build of a large
        model takes seconds that other scorers' timings need not wait for), draws the input sets and
        computes the reference outputs."""
        self.device = torch.device(request.device)
        pin_cpu_threads(self.device)
        self.task = dict(request.task)
        rule = request.rule
        self.rule = Rule(float(rule.get("rtol", 1e-5)), float(rule.get("atol", 1e-8)), bool(rule.get("exact", False)),
                         bool(rule.get("deterministic", True)),
                         tuple(IndexOutput.from_dict(io) for io in rule.get("index_outputs", ())))
        task_path = Path(request.task_path)
        overrides = request.overrides
        init_seed, fp64 = int(request.init_seed), bool(request.fp64)
        timed = Steps(self.clock)
        try:
            probe = timed("probe", lambda: load_module(task_path, "kernelarena_task_probe", overrides))
        except ModuleNotFoundError as exc:
            # The environment's gap, not the scorer's or any kernel's: the judge names the fix.
            return {"ok": False, "kind": "task_package", "module": (exc.name or "").split(".")[0],
                    "error": str(exc)}, None
        built = timed("build", lambda: self._build(task_path, overrides, init_seed, "kernelarena_task"))
        alts = [(alt, timed("build", functools.partial(self._build, task_path, alt["overrides"], init_seed,
                                                        f"kernelarena_task_alt{i}")))
                for i, alt in enumerate(request.alt_shapes)]
        # Host work (the meta-device sizes) and the CUDA context's creation, before the lock.
        open_context(self.device)
        n_seeds, problem = timed("fit", lambda: seeds_that_fit(probe, init_seed, len(request.seeds), self.device, fp64))
        if problem:
            return {"ok": False, "kind": "runtime_error", "error": problem}, None
        # One acquisition, let go while the hold kernel compiles and, between input sets, while a
        # timer waits.
        waited = waited_s()
        with shared_gpu_work(request.gpu_lock) as lock:
            between = between_pieces(lock, self._sync)
            try:
                # The lambda runs before the `del` below frees the model (ruff reads the del as unbound).
                self.main = timed("outputs", lambda: self._variant(built, request.seeds[:n_seeds], fp64, between))  # noqa: F821
                self.alts = []
                for alt, alt_built in alts:
                    between()
                    self.alts.append(timed("outputs", functools.partial(self._variant, alt_built, [alt["seed"]], False)))
            except torch.OutOfMemoryError as exc:
                return {"ok": False, "kind": "runtime_error", "error": self._oom_text(exc)}, None
            finally:
                del built, alts
            timed("release", self._release)
            if self.device.type == "cuda":
                # The timing's GPU-wide hold is compiled and tried now (unless the worker was started
                # warm), not at the start of the baseline's timing, which holds the GPU alone.
                timed("gate", lambda: make_gate(self.device, self.clock.hold_kernel))
            free = torch.cuda.mem_get_info(self.device)[0] if self.device.type == "cuda" else None
        timed.add("lock_wait", waited_s() - waited)
        first = self.main.sets[0].outputs
        env = timed("environment", lambda: collect_environment(self.device))
        return {"ok": True, "environment": env, "output_specs": [[list(t.shape), str(t.dtype)] for t in first],
                "alt_output_specs": [[[list(t.shape), str(t.dtype)] for t in a.sets[0].outputs] for a in self.alts],
                "input_digests": [s.digest for s in self.main.sets], "seeds_used": len(self.main.sets),
                "output_bytes": sum(tensor_bytes(t) for t in first),
                "free_bytes": free, "steps_s": timed.seconds}, None

    def _oom_text(self, exc: BaseException) -> str:
        free, total = torch.cuda.mem_get_info(self.device)
        return (f"out of memory: the reference does not fit on the device ({total / 1e9:.1f} GB, "
                f"{free / 1e9:.1f} GB free now): {str(exc).splitlines()[0][:300]}")

    # --- comparisons -----------------------------------------------------------------------
    def _reference_data(self) -> ReferenceData:
        assert self.main is not None
        return ReferenceData(self.main.sets, [{"sets": a.sets, "shape": {}} for a in self.alts])

    def compare(self, request: ReferenceCompare, payload: Any) -> tuple[dict[str, Any], Any]:
        """The correctness trials: every output the kernel produced, against the references. The
        worker holds the GPU lock's shared side itself (the judge passes its key), so that a
        waiting timer goes first between two trials' comparisons."""
        timed, waited = Steps(self.clock), waited_s()
        with shared_gpu_work(request.gpu_lock) as lock:
            try:
                outputs = timed("open", lambda: _outputs_of(request.shared, payload, self.device))
            except ShareError as exc:
                return {"ok": True, "unreadable": str(exc)}, None
            ref = self._reference_data()
            for j, alt in enumerate(request.alt_shapes):
                if j < len(ref.alt):
                    ref.alt[j]["shape"] = alt
            between = between_pieces(lock, self._sync)
            try:
                outcome = timed("evaluate", lambda: evaluate_correctness(
                    ref, list(request.calls), outputs, self.device.type, self.rule, self.task.get("dtype"),  # noqa: F821
                    self.task.get("category"), between))
            except _MALFORMED as exc:  # the call records came from the kernel's process
                return {"ok": True, "unreadable": f"malformed call records: {type(exc).__name__}: {exc}"}, None
            del outputs
            timed("release", self._release)
        timed.add("lock_wait", waited_s() - waited)
        return {"ok": True, "outcome": outcome.to_dict(), "steps_s": timed.seconds}, None

    def compare_timed(self, request: ReferenceCompareTimed, payload: Any) -> tuple[dict[str, Any], Any]:
        """The outputs of the timed repetitions the judge kept, against the reference for their seeds."""
        try:
            outputs = _outputs_of(request.shared, payload, self.device)
        except ShareError as exc:
            return {"ok": True, "findings": [Finding("caching-memoization", f"timed outputs unreadable: {exc}").to_dict()]}, None
        try:
            broken = [k for k in sorted(request.committed) if k not in outputs
                      or commitment.digest(list(outputs[k])) != request.committed[k]]
            if sorted(outputs) != sorted(request.committed) or broken:
                return {"ok": True, "findings": [Finding(
                    "protocol-violation", f"the kernel's worker shipped timed outputs {sorted(outputs)[:8]} for kept "
                    f"repetitions {sorted(request.committed)[:8]}; {len(broken)} differ from the digest it committed to "
                    f"before it was told they were kept (e.g. {broken[:3]})").to_dict()]}, None
            kept = {int(k.removeprefix("rep-")): v for k, v in outputs.items()}
            findings = timed_output_findings(kept, self.timed_expected, self.rule, self._timed_inputs)
            findings = findings or timed_precision_findings(
                kept, self.timed_expected, precision_bars(self._reference_data(), self.task.get("category")),
                self.task.get("dtype"))
        except _MALFORMED as exc:
            findings = [Finding("caching-memoization", f"timed outputs malformed: {type(exc).__name__}: {exc}")]
        return {"ok": True, "findings": [f.to_dict() for f in findings]}, None

    # --- timing ----------------------------------------------------------------------------
    def _timed_inputs(self, rep: int) -> list[Any]:
        assert self.main is not None
        return make_inputs(self.main.module, self.timed_seeds[rep], self.device)

    def time(self, request: ReferenceTime, _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.main is not None, "prepare must come before time"
        model: Any = self.main.model
        if request.baseline == "compile":
            model = torch.compile(model)
        self.timed_model = model
        self.timed_seeds = [int(s) for s in request.rep_seeds]
        keep = {int(r) for r in request.keep_reps}
        plan = TimingPlan(int(request.warmup), int(request.repetitions), bool(request.flush_l2))
        self.timed_expected = {}

        def on_output(rep: int, out: Any) -> Any:
            if rep in keep:
                self.timed_expected[rep] = [o.detach().clone() for o in as_output_list(out)]
            return None

        warm = make_inputs(self.main.module, self.main.seeds[0], self.device)
        continued = self.continued
        with torch.no_grad():
            run = time_forward(model, warm, self._timed_inputs, plan, self.device, self.clock, on_output)
        return {"ok": True, "timer": run.timer, "times_ms": run.times_ms, "host_times_ms": run.host_times_ms,
                "continued_before": continued, "continued": self.continued}, None

    # --- the judge-clocked batch -----------------------------------------------------------
    def batch_setup(self, request: ReferenceBatchSetup, _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.main is not None
        calls = int(request.calls)
        specs = [(list(t.shape), t.dtype) for t in self.main.sets[0].outputs]
        self.bstate = BatchState([int(s) for s in request.seeds][:calls], shapes=[tuple(shape) for shape, _ in specs])
        self.bstate.slabs = batch_mod.make_slabs(calls, specs, self.device)
        module, seed = self.main.module, self.main.seeds[0]
        # The batches' watch (below) restarts here, as the kernel worker's does at its set-up.
        forward = self.batch_turns.kernel_call(self.timed_model or self.main.model)
        with self.batch_turns.scorer_turn("calibration set-up"):
            batch_mod.warm_up(forward, lambda: make_inputs(module, seed, self.device), self._sync, self.device.type)
        return {"ok": True}, None

    def batch(self, request: ReferenceBatch, _payload: Any) -> tuple[dict[str, Any], Any]:
        """The baseline's batch (`forward`), or the calibration of drawing inputs and copying
        outputs alone (`regen`); the judge's clock brackets this request."""
        assert self.main is not None and self.bstate is not None
        module, seeds = self.main.module, self.bstate.seeds
        forward = (self.timed_model or self.main.model) if request.mode == "forward" else None
        # Bookkept as the kernel worker's batch is: under the same profile, off in forward.
        turns = self.batch_turns
        with turns.scorer_turn("calibration", restart=False):
            batch_mod.run_batch(forward and turns.kernel_call(forward), lambda i: make_inputs(module, seeds[i], self.device),
                                self.bstate.slabs, self._sync)
        if self.device.type == "cpu":
            # On a CPU the kernel's batch reaches the judge as a payload file inside its clock; the
            # calibration ships the same slabs, so that transfer is not counted as the kernel's work.
            return {"ok": True, "continued": self.continued}, {"slabs": self.bstate.slabs}
        return {"ok": True, "continued": self.continued}, None

    def batch_collect(self, request: ReferenceBatchCollect, _payload: Any) -> tuple[dict[str, Any], Any]:
        """After the baseline's batch: the secret positions, the reference values there, and the
        full reference outputs of the challenged rows; the slabs are freed."""
        assert self.bstate is not None
        gen = torch.Generator(device="cpu").manual_seed(int(request.positions_seed))
        # Drawn with replacement: a permutation of a published-size output (1.6G elements) takes
        # over a minute on the host, and repeated positions weaken nothing.
        self.bstate.positions = [torch.randint(max(1, s[0].numel()), (_SAMPLE_POSITIONS if s[0].numel() else 0,),
                                               generator=gen).to(self.device)
                                for s in self.bstate.slabs]
        self.bstate.expected = batch_mod.gather(self.bstate.slabs, self.bstate.positions)
        self.bstate.challenge = {int(r): [s[int(r)].clone() for s in self.bstate.slabs] for r in request.challenge}
        self.bstate.slabs = []
        self._release()
        return {"ok": True}, None

    def attach(self, request: ReferenceAttach, payload: Any) -> tuple[dict[str, Any], Any]:
        """Opens the kernel's batch slabs before its batch starts (outside the judge's clock)."""
        assert self.bstate is not None
        try:
            self.bstate.kernel_slabs = list(_outputs_of(request.shared, payload, self.device).get("slabs", []))
        except ShareError as exc:
            return {"ok": False, "kind": "runtime_error", "error": f"batch slabs unreadable: {exc}"}, None
        return {"ok": True}, None

    def sample(self, request: ReferenceSample, payload: Any) -> tuple[dict[str, Any], Any]:
        """Reads the secret positions of every row of the kernel's batch; the judge's clock stops
        when this returns, so whatever the rows hold now is what the batch produced in time."""
        assert self.bstate is not None
        if payload is not None:
            self.bstate.kernel_slabs = list(dict(payload).get("slabs", []))
        slabs = self.bstate.kernel_slabs
        layout = next(iter(self.bstate.challenge.values()), None)
        # Exactly the rows the judge asked for: its clock divides the batch's time by that count.
        if not isinstance(slabs, list) or len(slabs) != len(self.bstate.positions) or any(
                not isinstance(k, torch.Tensor) or k.dtype != r.dtype or tuple(k.shape[1:]) != tuple(r.shape)
                or k.shape[0] != request.calls or request.calls > len(self.bstate.seeds)
                for k, r in zip(slabs, layout or [], strict=False)):  # no layout: the count above decides
            return {"ok": True, "violation": f"the kernel's batch returned slabs of another layout than the "
                                             f"{request.calls} rows of each output the judge asked for"}, None
        try:
            self.bstate.kernel_samples = batch_mod.gather(slabs, self.bstate.positions)
            self._sync()
        except (RuntimeError, IndexError) as exc:
            return {"ok": True, "error": f"the kernel's batch slabs could not be read: {exc}"}, None
        return {"ok": True}, None

    def verify_batch(self, _request: ReferenceVerifyBatch, _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.main is not None and self.bstate is not None
        module, seeds = self.main.module, self.bstate.seeds
        findings = batch_findings(self.bstate, self.rule, lambda i: make_inputs(module, seeds[i], self.device))
        self.bstate.kernel_slabs, self.bstate.kernel_samples = [], []
        self._release()
        self.bstate = BatchState(self.bstate.seeds, positions=self.bstate.positions, expected=self.bstate.expected,
                                challenge=self.bstate.challenge, shapes=self.bstate.shapes)
        return {"ok": True, "findings": [f.to_dict() for f in findings]}, None


    # --- the device-timed batch (scorer/workers/reference_gate.py) --------------------------------
    def gate_plan(self, request: ReferenceGatePlan, _payload: Any) -> tuple[dict[str, Any], Any]:
        """Outside the clock: the fresh batch's first input sets, as many as fit beside the kernel's
        slabs of them and of the outputs, staged in this worker's memory."""
        assert self.main is not None and self.bstate is not None
        module, seeds = self.main.module, self.bstate.seeds
        warm = make_inputs(module, int(request.warm_seed), self.device)
        per_call = 2 * sum(tensor_bytes(a) for a in warm if isinstance(a, torch.Tensor)) + sum(
            tensor_bytes(t) for t in self.main.sets[0].outputs)
        free = torch.cuda.mem_get_info(self.device)[0] if self.device.type == "cuda" else 0
        calls = min(int(request.calls), len(seeds), gate_side.calls_that_fit(per_call, free))
        if calls < 1:
            return {"ok": True, "calls": 0, "why": f"one call's inputs and outputs ({per_call / 2**30:.2f} GiB, the inputs "
                                                   f"twice) take more than {gate_side.MEMORY_SHARE:.0%} of the free memory"}, None
        staged, why = gate_side.draw(calls, lambda i: make_inputs(module, seeds[i], self.device), warm)
        if why:
            return {"ok": True, "calls": 0, "why": why}, None
        self.gate = gate_side.GateSide(staged=staged)
        self._sync()
        return {"ok": True, "calls": calls}, None

    def gate_setup(self, request: ReferenceGateSetup, _payload: Any) -> tuple[dict[str, Any], Any]:
        """The kernel's shares opened and checked against the staged inputs."""
        assert self.bstate is not None
        slabs, violation = gate_side.setup(self.gate, request.shared, self.device)
        if violation:
            return {"ok": True, "violation": violation}, None
        self.bstate.kernel_slabs = slabs
        return {"ok": True}, None

    def gate_release(self, request: ReferenceGateRelease, _payload: Any) -> tuple[dict[str, Any], Any]:
        release_ms = gate_side.release(self.gate, int(request.want))
        self.gate = gate_side.GateSide()  # the kernel's output slabs stay open in the batch state
        return {"ok": True, "release_ms": release_ms}, None


def batch_findings(state: BatchState, rule: Rule,
                   inputs_for: Callable[[int], list[Any]] | None = None) -> list[Finding]:
    """Every row at the secret positions, the challenged rows in full, and the challenged rows'
    positions read again (a row rewritten after the clock stopped differs from what was read).
    `inputs_for(row)` draws a row's inputs again where an index output differs (ties)."""
    rows = state.kernel_samples[0].shape[0] if state.kernel_samples else 0
    if not rows or len(state.kernel_samples) != len(state.expected):
        return [Finding("timer-patching", "the judge could not read the kernel's batch outputs, so its clock bound "
                        "cannot be checked")]
    for j, (got, exp) in enumerate(zip(state.kernel_samples, state.expected, strict=True)):
        exp = exp[:rows]
        cmp = compare_outputs([got], [exp], rule)
        if not cmp.ok:
            bad = [i for i in range(rows) if not compare_outputs([got[i]], [exp[i]], rule).ok]
            bad = [i for i in bad if not _tie_only(state, rule, j, i, inputs_for)]
            if not bad:
                continue
            return [Finding("caching-memoization", f"in the judge-timed batch of {rows} back-to-back calls on fresh "
                            f"inputs, {len(bad)} call(s) (e.g. {bad[:5]}) returned output {j} that is wrong at the "
                            f"judge's secret positions: work skipped, cached or finished after the batch")]
    for row, expected in sorted(state.challenge.items()):
        if row >= rows:
            continue
        row_out = [s[row] for s in state.kernel_slabs]
        again = (lambda r=row: inputs_for(r)) if inputs_for is not None else None
        cmp = compare_outputs(row_out, expected, rule, again)
        if not cmp.ok:
            return [Finding("caching-memoization", f"judge-timed batch call {row}: {cmp.reason}")]
        again_read = [g.reshape(-1)[p] for g, p in zip(row_out, state.positions, strict=True)]
        before = [s[row] for s in state.kernel_samples]
        if any(not torch.equal(a, b) for a, b in zip(again_read, before, strict=True)):
            return [Finding("timer-patching", f"judge-timed batch call {row} changed after the judge's clock stopped: "
                            "its output was finished after the batch returned")]
    return []


def _tie_only(state: BatchState, rule: Rule, output: int, row: int,
              inputs_for: Callable[[int], list[Any]] | None) -> bool:
    """Whether row `row` of index output `output` differs at the secret positions only where its
    index points at a value equal to the one the reference's index points at."""
    declared = [io for io in rule.index_outputs if io.output == output]
    if not declared or inputs_for is None or output >= len(state.shapes):
        return False
    shape = state.shapes[output]
    args = inputs_for(row)
    source = args[declared[0].input] if declared[0].input < len(args) else None
    if not isinstance(source, torch.Tensor):
        return False
    got, exp = state.kernel_samples[output][row], state.expected[output][row]
    settled = settle_ties(got, exp, source.to(exp.device), declared[0].dim, state.positions[output], shape)
    return compare_outputs([settled], [exp], rule).ok
