"""The kernel worker: imports the untrusted kernel.py, runs it on inputs it draws from the judge's
seeds, and hands its raw outputs on (CUDA IPC handles on a GPU, spool payloads on the CPU) to the
reference worker, which compares. It never holds a reference output.

What must be right before the kernel can interfere (the task's weights, the clock, the timers'
fingerprint) is made in `setup`, before kernel.py is imported; everything after the import runs in
a process the kernel owns, which is why the judge bounds the reported times with its own clock.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from scorer.checks import dynamic as dynamic_checks
from scorer.checks import launch_window, native_audit, residency
from scorer.checks.census import LaunchCensus, install_census, observe_launches, profile_device_time, stop_counting, warm_profiler
from scorer.checks.guard import RuntimeGuard
from scorer.checks.poison import poison_memory
from scorer.checks.turns import Turns
from scorer.gpu import interpreter_bf16
from scorer.gpu.compile_gap import between_pieces, no_pause, shared_gpu_work
from scorer.gpu.gate import locked_gate
from scorer.gpu.lock import waited_s
from scorer.gpu.release_gate import WARM_FLAG, FlagGate
from scorer.gpu.release_gate import available as flag_gate_available
from scorer.gpu.timing import Clock, TimingPlan, time_forward
from scorer.tasks.load import as_output_list, build_model, input_digest, load_module, make_inputs
from scorer.tasks.suites import LibraryPolicy
from scorer.workers import batch as batch_mod
from scorer.workers import commitment
from scorer.workers.device_share import share
from scorer.workers.environment import pin_cpu_threads
from scorer.workers.protocol import (
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
    TimedNext,
    TimedStep,
)

_SHA256 = hashlib.sha256
_AS_PLAIN = torch.Tensor.as_subclass
_CLONE = torch.Tensor.clone
_EQUAL = torch.equal
_OBSERVE_OUTPUT = dynamic_checks.observe_output
_DIGEST = commitment.digest
_NO_TORCH_FUNCTION = torch._C.DisableTorchFunction
_NO_PYTHON_DISPATCH = torch._C._DisableTorchDispatch


@contextmanager
def _scorer_ops() -> Iterator[None]:
    """The worker's own operations on inputs and outputs (copies, hashes, poisoning, sharing), past
    any torch mode kernel.py left active: a TorchDispatchMode that made the worker's clone of an
    output sparse broke the output's sharing on a GPU, and the crash decided the verdict
    (runtime_error) before the mode was reported. The mode is still reported (the library-call
    monitor sees it around every call: harness-introspection); the scorer just never runs
    kernel.py's code in its own reads. Taken at import, before kernel.py can replace them."""
    with _NO_TORCH_FUNCTION(), _NO_PYTHON_DISPATCH():
        yield


KERNEL_MODULE = "kernelarena_solution"
_SLAB_ROW = object()  # in the device-timed batch's arguments: this input is the call's row of its slab


_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _snapshot(obj: Any) -> Any:
    """A private copy of one input (on its own device: no host round trip for big tensors)."""
    if isinstance(obj, torch.Tensor):
        return _CLONE(_AS_PLAIN(obj, torch.Tensor).detach())
    return _SHA256(repr(obj).encode()).hexdigest()


def _unchanged(before: Any, obj: Any) -> bool:
    """Bitwise equality (NaN payloads included), so any write into an input is seen."""
    if not isinstance(obj, torch.Tensor):
        return before == _SHA256(repr(obj).encode()).hexdigest()
    now = _AS_PLAIN(obj, torch.Tensor).detach()
    if now.shape != before.shape or now.dtype != before.dtype:
        return False
    if now.is_floating_point() or now.is_complex():
        size = now.element_size() if not now.is_complex() else now.element_size() // 2
        now = torch.view_as_real(now) if now.is_complex() else now
        before = torch.view_as_real(before) if before.is_complex() else before
        now, before = now.view(_INT_OF_SIZE[size]), before.view(_INT_OF_SIZE[size])
    return bool(_EQUAL(now, before))


def _kept(t: torch.Tensor) -> torch.Tensor:
    # A copy where the output is (its device), so a kernel that reuses its output buffer cannot
    # change what is compared, and the copy comes from torch's allocator, which CUDA IPC needs.
    return _CLONE(_AS_PLAIN(t, torch.Tensor).detach())


def _is_compile_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        name, module = type(seen).__name__, type(seen).__module__
        if "CompilationError" in name or module.startswith("triton.compiler") or "Error building extension" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _native_dirs(kernel_path: Path) -> tuple[str, ...]:
    """Where the kernel's own compiled modules load from: its folder and torch's extension build
    folders (load_inline), never the interpreter's or torch's own installation."""
    roots = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(torch.__file__)))}
    kernel_dir = os.path.realpath(kernel_path.parent)
    own = [] if any(r.startswith(os.path.join(kernel_dir, "")) or r == kernel_dir for r in roots) else [kernel_dir]
    extensions = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions")
    return (*own, extensions)


def _triton_cache_dirs() -> tuple[str, ...]:
    """Where Triton keeps the launcher modules it generates (the worker's TRITON_CACHE_DIR, else
    Triton's default), read before kernel.py can change the environment."""
    default = os.path.join(os.path.expanduser("~"), ".triton", "cache")
    return tuple({os.environ.get("TRITON_CACHE_DIR") or default, default})


def _error(kind: str, text: str) -> tuple[dict[str, Any], None]:
    return {"ok": False, "kind": kind, "error": text[-6000:]}, None


def _largest_elements(args: Sequence[Any], output_shapes: Iterable[Sequence[int]]) -> int:
    """The element count of the largest input or output tensor."""
    sizes = [a.numel() for a in args if isinstance(a, torch.Tensor)] + [math.prod(shape) for shape in output_shapes]
    return max(sizes, default=0)


def _specs(raw: list[list[Any]]) -> list[tuple[list[int], torch.dtype]]:
    return [(list(shape), getattr(torch, str(dtype).removeprefix("torch."))) for shape, dtype in raw]


@dataclass
class CallRecord:
    trial: str
    outputs: list[torch.Tensor] | None = None
    devices: list[str] = field(default_factory=list)
    mutated: list[int] = field(default_factory=list)
    error: str | None = None
    compile_failure: bool = False
    output: dict[str, Any] | None = None  # what forward returned (replies.OutputObservation)
    library: dict[str, Any] | None = None  # the library-call monitor's view (replies.LibraryObservation)

    def meta(self) -> dict[str, Any]:
        return {"trial": self.trial, "devices": self.devices, "mutated": self.mutated, "error": self.error,
                "output": self.output, "library": self.library if self.error is None else None}


@dataclass
class TaskVariant:
    """The task's module and the reference Model's weights, made before kernel.py is imported."""
    module: Any
    init_inputs: list[Any]
    state_dict: dict[str, torch.Tensor]


def _window_since(before: tuple[int, int]) -> dict[str, int]:
    """Triton launches of the timed stage in the launch window and under the modes
    (scorer/checks/launch_window.py)."""
    opened, watched = launch_window.counts()
    return {"open": opened - before[0], "watched": watched - before[1]}


class KernelRole:
    def __init__(self, clock: Clock, ask: Callable[[TimedStep], TimedNext] | None = None) -> None:
        self.clock = clock
        # A message to the judge, and its answer, in the middle of a request (the timed loop's).
        self.ask = ask
        self.device = torch.device("cpu")
        self.init_seed = 0
        self.guard: RuntimeGuard | None = None
        self.model_cls: type | None = None
        self.model: torch.nn.Module | None = None
        self.census: LaunchCensus | None = None
        self.launches: dict[str, Any] | None = None  # the first call's census (replies.LaunchObservation)
        self.turns = Turns(frozenset())  # the real one once kernel.py's files are known (load)
        self.draw_dtype = torch.get_default_dtype()
        self.generated_dirs: tuple[str, ...] = ()
        self.policy = LibraryPolicy()
        self.main: TaskVariant | None = None
        self.alts: list[TaskVariant] = []
        self.alt_overrides: list[dict[str, Any]] = []
        self.shipped: list[torch.Tensor] = []  # alive until the reference worker has read them
        self._between_trials: Callable[[], Any] = no_pause
        self.slabs: list[torch.Tensor] = []
        self.fingerprint: dict[str, Any] = {}
        # The device-timed batch (scorer/gpu/release_gate.py): its gate, input slabs and the other
        # arguments of every call.
        self.flag_gate: FlagGate | None = None
        self.gate_inputs: list[torch.Tensor] = []
        self.gate_args: list[Any] = []

    def _variant(self, task_path: Path, overrides: dict[str, Any], name: str) -> TaskVariant:
        module = load_module(task_path, name, overrides)
        model, init_inputs = build_model(module, self.init_seed)
        return TaskVariant(module, init_inputs, {k: v.detach().clone() for k, v in model.state_dict().items()})

    def _inputs(self, variant: TaskVariant, seed: int) -> list[Any]:
        # Drawn with the default dtype the reference worker draws with: a kernel that set float16
        # at import had its worker draw half-precision inputs from the same seeds (a red-team
        # GEMM ran on fp16 operands and passed under the contraction bar).
        kernel_dtype = torch.get_default_dtype()
        torch.set_default_dtype(self.draw_dtype)
        try:
            return make_inputs(variant.module, int(seed), self.device)
        finally:
            torch.set_default_dtype(kernel_dtype)

    def _ship(self, outputs: dict[str, list[torch.Tensor]]) -> tuple[dict[str, Any], Any]:
        """(header part, payload) carrying outputs to the reference worker through the judge."""
        with _scorer_ops():
            if self.device.type == "cuda":
                self.shipped = [t for ts in outputs.values() for t in ts]
                return {"shared": {k: share(v) for k, v in outputs.items()}}, None
            return {}, {k: [t.to("cpu") for t in v] for k, v in outputs.items()}

    def _release(self) -> None:
        """Drops what the reference worker has read, and hands the cached blocks back to the
        driver: the reference worker on the same GPU needs that memory next."""
        self.shipped = []
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def release(self, _request: KernelRelease, _payload: Any) -> tuple[dict[str, Any], Any]:
        """The reference worker has read the shipped outputs: they are freed now."""
        with self.turns.scorer_turn("release"):
            self._release()
        return {"ok": True}, None

    def setup(self, request: KernelSetup, _payload: Any) -> tuple[dict[str, Any], Any]:
        """Everything that must not be touched by the kernel, before kernel.py is imported."""
        self.device = torch.device(request.device)
        pin_cpu_threads(self.device)
        self.init_seed = int(request.init_seed)
        self.policy = LibraryPolicy.from_dict(request.policy)
        task_path = Path(request.task_path)
        self.main = self._variant(task_path, request.overrides, "kernelarena_task")
        self.alt_overrides = list(request.alt_overrides)
        self.alts = [self._variant(task_path, o, f"kernelarena_task_alt{i}")
                     for i, o in enumerate(self.alt_overrides)]
        self.draw_dtype = torch.get_default_dtype()  # as the task left it, before kernel.py can change it
        self.generated_dirs = _triton_cache_dirs()
        if self.device.type == "cuda":
            # Compiled before kernel.py runs, so the hold comes from Triton's in-memory cache and not
            # from a cache folder the kernel can write to.
            locked_gate(self.device, self.clock.hold_kernel)
            if flag_gate_available():
                self.flag_gate = FlagGate(self.device)
                self.flag_gate.warm(WARM_FLAG)
            residency.settle()
            warm_profiler()
        # After CUDA is up (its libraries are loaded) and before the kernel can run: the bytes the
        # judge reads back from outside this process once the kernel has run (scorer/checks/native_audit.py).
        self.fingerprint = native_audit.timer_fingerprint()
        # Triton's CPU interpreter computes bf16 on raw bits; honest bf16 kernels need real bf16 maths.
        interpreter_bf16.install()
        return {"ok": True, "timers": self.fingerprint}, None

    def _sync(self) -> None:
        if self.device.type == "cuda" and self.clock.cuda_sync is not None:
            self.clock.cuda_sync(self.device)

    def _build(self, init_inputs: list[Any], state_dict: dict[str, torch.Tensor], place: bool = True) -> torch.nn.Module:
        """ModelNew, with the reference's weights where its state dict has the same names and
        shapes; on the device where `place`."""
        assert self.model_cls is not None
        torch.manual_seed(self.init_seed)
        model = self.model_cls(*init_inputs)
        own = model.state_dict()
        loaded = bool(state_dict) and set(own) == set(state_dict) and all(
            own[k].shape == state_dict[k].shape for k in own)
        if loaded:
            model.load_state_dict(state_dict)
        return model.to(self.device) if place else model

    def load(self, request: KernelLoad, _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.main is not None, "setup must come before load"
        kernel_path = Path(request.kernel_path)
        source = kernel_path.read_text(encoding="utf-8", errors="replace")
        launch_window.install()  # wraps Triton's own launch, before kernel.py can patch it
        self.guard = RuntimeGuard(kernel_path)
        self.guard.arm()
        try:
            spec = importlib.util.spec_from_file_location(KERNEL_MODULE, str(kernel_path))
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[KERNEL_MODULE] = module
            spec.loader.exec_module(module)
        except Exception:
            return _error("compile_error", "importing kernel.py failed:\n" + traceback.format_exc())
        model_cls = getattr(module, "ModelNew", None)
        if not isinstance(model_cls, type):
            return _error("no_kernel", "kernel.py defines no class ModelNew")
        self.model_cls = model_cls
        self.census = install_census(module, source)
        self.turns = Turns(self.guard.kernel_files, _native_dirs(kernel_path), self.generated_dirs)
        try:
            # On the host: `load` runs outside the GPU lock (its import may compile extensions for a
            # minute); `correctness`, under the lock, moves the model to the device.
            self.model = self._build(self.main.init_inputs, self.main.state_dict, place=False)
        except Exception:
            return _error("compile_error", "ModelNew(*init_inputs) failed:\n" + traceback.format_exc())
        return {"ok": True, "guard": self.guard.check("load")}, None

    def _call(self, model: torch.nn.Module, args: list[Any], specs: list[tuple[list[int], torch.dtype]],
              trial: str, around: Callable[[Callable[[], Any]], Any] | None = None) -> CallRecord:
        record = CallRecord(trial)
        with _scorer_ops():
            before = [_snapshot(a) for a in args]
            # After the snapshot: the snapshot's own allocations would otherwise take the poisoned blocks.
            poison_memory(self.device, specs)
        try:
            with torch.no_grad():
                kernel = self.turns.kernel_call(model)
                out = around(lambda: kernel(*args)) if around else kernel(*args)
        except Exception as exc:
            record.error = f"forward() raised on trial '{trial}':\n" + traceback.format_exc()
            record.compile_failure = _is_compile_failure(exc)
            return record
        record.output = _OBSERVE_OUTPUT(out)
        with _scorer_ops():
            try:
                self._sync()
                outputs = as_output_list(out)
                record.devices = [str(t.device) for t in outputs]
                record.outputs = [_kept(t) for t in outputs]
            except Exception:
                record.error = f"reading the outputs of trial '{trial}' failed:\n" + traceback.format_exc()
            record.mutated = [i for i, (a, b) in enumerate(zip(args, before, strict=True)) if not _unchanged(b, a)]
        return record

    def _monitor(self) -> dynamic_checks.LibraryCallMonitor:
        assert self.guard is not None
        # ATen ops from native code are counted on CPU, where the interpreter counts own work and
        # nothing else sees them (on a GPU the first call's profile does); custom ops' bodies
        # are watched everywhere (scorer/checks/aten_work.py).
        return dynamic_checks.LibraryCallMonitor(self.guard.kernel_files, self.policy,
                                                 bool(self.census and self.census.cuda_names),
                                                 watch_aten=self.device.type == "cpu")

    def _watched_call(self, model: torch.nn.Module, args: list[Any], specs: list[tuple[list[int], torch.dtype]],
                      trial: str) -> CallRecord:
        """A correctness trial after the first, under the library-call monitor like every call of
        forward (no profile: on a GPU its library work beyond the first call's is judged against
        the task's data, as for a timed call). A kernel honest only on the calls it can guess are
        watched (the first, a repeat of inputs it has met) shows here on a fresh input set."""
        monitor = self._monitor()

        def watched(fn: Callable[[], Any]) -> Any:
            with monitor:
                return fn()

        record = self._call(model, args, specs, trial, watched)
        record.library = monitor.observe(_largest_elements(args, (shape for shape, _ in specs)))
        return record

    def _first_call(self, args: list[Any], specs: list[tuple[list[int], torch.dtype]]) -> CallRecord:
        """The first forward also takes the ghost-kernel census (and, on CUDA, a profile)."""
        assert self.model is not None and self.census is not None
        self.census.reset()
        device_times: dict[str, float] | None = None

        def profiled(fn: Callable[[], Any]) -> Any:
            nonlocal device_times
            out, device_times = profile_device_time(fn)
            return out

        # On a GPU the profile also measures how much of forward's device time the solution's own
        # kernels took (the library-call rule, scorer/checks/work.py).
        use_profiler = self.device.type == "cuda"
        # Library compute reached through names no static rule can fold (getattr with a computed
        # name, eval) still passes through torch's function dispatch on the first call.
        monitor = self._monitor()

        def watched(fn: Callable[[], Any]) -> Any:
            with monitor:
                return profiled(fn) if use_profiler else fn()

        record = self._call(self.model, args, specs, "seed-0", watched)
        stop_counting()
        if record.error is None:
            device_kernels = sorted(device_times) if device_times is not None else None
            self.launches = observe_launches(self.census, device_kernels)
            record.library = monitor.observe(_largest_elements(args, (shape for shape, _ in specs)), device_times,
                                             self.census.triton_names + self.census.cuda_names)
        return record

    def correctness(self, request: KernelCorrectness, _payload: Any) -> tuple[dict[str, Any], Any]:
        # The worker takes the lock's shared side itself (the judge passes its key), so that it can
        # let go while the kernel's first calls compile.
        waited = waited_s()
        with shared_gpu_work(request.gpu_lock) as lock:
            # Between trials a waiting timer goes first: it waits for one call, not for all of them.
            self._between_trials = between_pieces(lock, self._sync)
            try:
                with self.turns.scorer_turn("correctness"):
                    reply, payload = self._correctness(request)
            finally:
                self._between_trials = no_pause
            try:
                self._sync()  # nothing of the kernel's may still run once the lock is let go
            except Exception:
                pass  # a faulted device: the trials that met it carry the error already
        reply["gpu_lock_wait_s"] = round(waited_s() - waited, 4)
        return reply, payload

    def _correctness(self, request: KernelCorrectness) -> tuple[dict[str, Any], Any]:
        assert self.model is not None and self.guard is not None and self.main is not None
        try:
            self.model = self.turns.kernel_call(self.model.to)(self.device)
        except Exception:
            return _error("runtime_error", "moving ModelNew to the device failed:\n" + traceback.format_exc())
        self.shipped = []
        specs = _specs(request.output_specs)
        seeds = request.seeds
        # Drawn one at a time (set 0 stays: the repeat and refill trials reuse its buffers), so a
        # published-size task holds two input sets here, not one per seed.
        first = self._inputs(self.main, seeds[0])
        digests = [input_digest(first)]
        records = [self._first_call(first, specs)]
        if records[0].error and records[0].compile_failure:
            return _error("compile_error", records[0].error)
        self._between_trials()
        for i, seed in enumerate(seeds[1:], start=1):
            args = self._inputs(self.main, seed)
            digests.append(input_digest(args))
            records.append(self._watched_call(self.model, args, specs, f"seed-{i}"))
            del args
            self._between_trials()
        first_error = next((r.error for r in records if r.error), None)
        if first_error:
            return _error("runtime_error", first_error)
        records.append(self._watched_call(self.model, first, specs, "repeat-0"))
        self._between_trials()
        if len(seeds) > 1:
            # The same buffers refilled in place with set 1's data: a result cached by pointer,
            # shape or object is stale now.
            fresh = self._inputs(self.main, seeds[1])
            for target, source in zip(first, fresh, strict=True):
                if isinstance(target, torch.Tensor):
                    target.copy_(source)
            del fresh
            records.append(self._watched_call(self.model, first, specs, "refill-0-with-1"))
        del first
        # An error on the repeat or the refill is the kernel's runtime error, with its text (and,
        # out of memory on a crowded GPU, the scorer's: scoring.py); read as missing outputs it
        # was a caching-memoization verdict on an H100 under 8 scorings.
        extra_error = next((r.error for r in records[len(seeds):] if r.error), None)
        if extra_error:
            return _error("runtime_error", extra_error)
        for j, alt in enumerate(request.alt):
            self._between_trials()
            records.append(self._alt_call(j, alt))
        ship_header, payload = self._ship({r.trial: r.outputs for r in records if r.outputs is not None})
        header_out = {"ok": True, "calls": [r.meta() for r in records], "input_digests": digests, "launches": self.launches,
                      "guard": self.guard.check("correctness"), "turns": self.turns.take_observed(),
                      **ship_header}
        return header_out, payload

    def _alt_call(self, j: int, alt: dict[str, Any]) -> CallRecord:
        variant = self.alts[j]
        try:
            model = self.turns.kernel_call(self._build)(variant.init_inputs, variant.state_dict)
        except Exception:
            return CallRecord(f"alt-{j}", error="ModelNew(*init_inputs) failed for an alternative shape:\n"
                              + traceback.format_exc())
        args = self._inputs(variant, alt["seed"])
        specs = _specs(alt["output_specs"])
        # A kernel that hands unseen shapes to the library shows it only here: the share is
        # measured on this call too (on a GPU by its profile).
        assert self.census is not None
        monitor = self._monitor()
        device_times: dict[str, float] | None = None

        def watched(fn: Callable[[], Any]) -> Any:
            nonlocal device_times
            with monitor:
                if self.device.type != "cuda":
                    return fn()
                out, device_times = profile_device_time(fn)
                return out

        record = self._call(model, args, specs, f"alt-{j}", watched)
        record.library = monitor.observe(_largest_elements(args, (shape for shape, _ in specs)), device_times,
                                         self.census.triton_names + self.census.cuda_names)
        return record

    def time(self, request: KernelTime, payload: Any) -> tuple[dict[str, Any], Any]:
        with self.turns.scorer_turn("timing"):
            return self._time(request, payload)

    def _time(self, request: KernelTime, _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.model is not None and self.guard is not None and self.main is not None
        assert self.ask is not None, "the timed loop asks the judge for each repetition's seed"
        ask = self.ask
        plan = TimingPlan(int(request.warmup), int(request.repetitions), bool(request.flush_l2))
        kept_observed: list[dict[str, Any]] = []  # replies.KeptRepObservation
        # Every timed call runs under the library-call monitor (the first forward ran under it too),
        # and each is judged on its own: a kernel that computes honestly only on the calls it can
        # tell are watched has no unwatched timed call left to fall back on, and its honest calls
        # do not dilute the others.
        monitor = self._monitor()
        watched_elements: list[int] = []
        main = self.main
        current: list[Any] = []
        next_seed: list[int | None] = [None]
        current_seed: list[int] = [0]

        def step(done: int, committed: str | None = None) -> bool:
            """Tells the judge repetition `done` returned, committing to its outputs; the answer
            says whether that output is kept and gives the next repetition's seed (each secret
            arrives once it can no longer be used ahead of its repetition)."""
            answer = ask(TimedStep(done, committed))
            next_seed[0] = answer.seed
            return bool(answer.keep)

        def inputs_for(rep: int) -> list[Any]:
            current.clear()  # first, so the new set can take the freed memory (one set held at a time)
            if rep == 0:
                step(-1)
            seed = next_seed[0]
            if seed is None:
                raise RuntimeError(f"the judge sent no seed for timed repetition {rep}")
            current_seed[0] = int(seed)
            current.extend(self._inputs(main, int(seed)))
            return current

        def watched(call: Callable[[], Any]) -> Any:
            with monitor:
                return call()

        def on_output(rep: int, out: Any) -> Any:
            shapes = [t.shape for t in as_output_list(out) if isinstance(t, torch.Tensor)]
            watched_elements.append(_largest_elements(current, shapes))
            if not step(rep, _DIGEST(as_output_list(out))):
                return None
            seen = _OBSERVE_OUTPUT(out)
            kept = [_kept(t) for t in as_output_list(out)]
            kept_observed.append({"rep": rep, "output": seen,
                                  "changed_inputs": self._changed_inputs(current, current_seed[0])})
            return kept

        self._release()
        window_before = launch_window.counts()
        with torch.no_grad():
            run = time_forward(self.turns.kernel_call(self.model), self._inputs(main, request.warm_seed), inputs_for, plan,
                               self.device, self.clock, on_output, watched)
        ship_header, payload = self._ship({f"rep-{k}": v for k, v in run.kept_outputs.items()})
        header_out = {"ok": True, "timer": run.timer, "times_ms": run.times_ms, "host_times_ms": run.host_times_ms,
                      "event_times_ms": run.event_times_ms, "drain_ms": run.drain_ms,
                      "idle_drain_ms": run.idle_drain_ms, "gate": run.gate, "gate_ms": run.gate_ms,
                      "launch_window": _window_since(window_before), "kept": kept_observed,
                      "library": monitor.observe(watched_elements), "guard": self.guard.check("timing"),
                      "turns": self.turns.take_observed(), **ship_header}
        return header_out, payload

    def _changed_inputs(self, args: list[Any], seed: int) -> list[int]:
        """A kept repetition's inputs that differ bitwise from the same seed drawn again (the judge
        rules: scorer/judge/rulings/input_hashes.py)."""
        assert self.main is not None
        redrawn = self._inputs(self.main, seed)
        # Tensors only: a drawn object's repr may hold its address, and nothing else is written in place.
        return [i for i, (now, fresh) in enumerate(zip(args, redrawn, strict=True))
                if isinstance(fresh, torch.Tensor) and not _unchanged(fresh, now)]

    # --- the judge-clocked batch (scorer/workers/batch.py) -----------------------------------------
    def batch_setup(self, request: KernelBatchSetup, payload: Any) -> tuple[dict[str, Any], Any]:
        with self.turns.scorer_turn("the batch's set-up"):
            return self._batch_setup(request, payload)

    def _batch_setup(self, request: KernelBatchSetup, _payload: Any) -> tuple[dict[str, Any], Any]:
        self._release()
        self.slabs = batch_mod.make_slabs(int(request.calls), _specs(request.output_specs), self.device)
        for slab in self.slabs:
            slab.fill_(float("nan") if slab.is_floating_point() else 0)
        assert self.model is not None and self.main is not None
        main, warm_seed, model = self.main, int(request.warm_seed), self.model
        monitor = self._monitor()  # unjudged: the warm-up runs the batch's code path, not its calls

        def forward(*args: Any) -> Any:
            with monitor:
                return model(*args)

        batch_mod.warm_up(self.turns.kernel_call(forward), lambda: self._inputs(main, warm_seed), self._sync, self.device.type,
                          self.clock.perf_counter)
        if self.device.type == "cuda":
            return {"ok": True, "shared": {"slabs": share(self.slabs)}}, None
        return {"ok": True}, None

    def batch(self, request: KernelBatch, payload: Any) -> tuple[dict[str, Any], Any]:
        # No restart: the set-up's turn restarted right before it, and the warm-up ran this path.
        with self.turns.scorer_turn("the judge-clocked batch", restart=False):
            return self._batch(request, payload)

    def _batch_forward(self, model: torch.nn.Module, monitor: dynamic_checks.LibraryCallMonitor,
                       elements: list[int]) -> Callable[..., Any]:
        """forward under the library-call monitor, noting the first call's largest element count
        (every call of a batch has the task's shapes) for the monitor's observation."""
        def forward(*args: Any) -> Any:
            with monitor:
                out = model(*args)
            if not elements:
                elements.append(_largest_elements(args, (s.shape[1:] for s in self.slabs)))
            return out

        return forward

    # --- the device-timed batch (scorer/gpu/release_gate.py) ---------------------------------------
    def gate_setup(self, request: KernelGateSetup, payload: Any) -> tuple[dict[str, Any], Any]:
        with self.turns.scorer_turn("the device-timed batch's set-up"):
            return self._gate_setup(request, payload)

    def _gate_setup(self, request: KernelGateSetup, _payload: Any) -> tuple[dict[str, Any], Any]:
        """Slabs for `calls` calls' tensor inputs (the reference worker fills them once the gate is
        armed) and outputs, and a warm-up on their first rows: a row's address may specialize the
        kernel's launch differently from a whole tensor's, and a compile must not fall in the batch."""
        assert self.model is not None and self.main is not None and self.flag_gate is not None
        self._release()
        self.slabs = []
        calls = int(request.calls)
        with _scorer_ops():
            warm = self._inputs(self.main, int(request.warm_seed))
            tensors = [a for a in warm if isinstance(a, torch.Tensor)]
            self.gate_inputs = [a.unsqueeze(0).expand(calls, *a.shape).contiguous() for a in tensors]
            self.gate_args = [_SLAB_ROW if isinstance(a, torch.Tensor) else a for a in warm]
            self.slabs = batch_mod.make_slabs(calls, _specs(request.output_specs), self.device)
            for slab in self.slabs:
                slab.fill_(float("nan") if slab.is_floating_point() else 0)
        monitor, model = self._monitor(), self.model

        def forward(*args: Any) -> Any:
            with monitor:
                return model(*args)

        call = self.turns.kernel_call(forward)
        with torch.no_grad():
            for row in range(min(2, calls)):
                call(*self._gate_call_args(row))
        self.flag_gate.flag.zero_()
        self._sync()
        with _scorer_ops():
            shared = {"inputs": share(self.gate_inputs), "slabs": share(self.slabs), "flag": share([self.flag_gate.flag])}
        return {"ok": True, "shared": shared}, None

    def _gate_call_args(self, row: int) -> list[Any]:
        slabs = iter(self.gate_inputs)
        return [next(slabs)[row] if a is _SLAB_ROW else a for a in self.gate_args]

    def gate_enqueue(self, request: KernelGateEnqueue, payload: Any) -> tuple[dict[str, Any], Any]:
        with self.turns.scorer_turn("the device-timed batch", restart=False):
            return self._gate_enqueue(request, payload)

    def _gate_enqueue(self, request: KernelGateEnqueue, _payload: Any) -> tuple[dict[str, Any], Any]:
        """The gate, then every call on its slab row, each output copied into its slab: all enqueued
        before the reference worker opens the gate (a forward that waits for the device waits for
        that, and its calls after it then run at the host's pace)."""
        assert self.model is not None and self.flag_gate is not None
        monitor = self._monitor()
        elements: list[int] = []
        calls = self.slabs[0].shape[0] if self.slabs else 0
        call = self.turns.kernel_call(self._batch_forward(self.model, monitor, elements))
        self.flag_gate(int(request.want))
        with torch.no_grad():
            for row in range(calls):
                outputs = as_output_list(call(*self._gate_call_args(row)))
                with _scorer_ops():
                    for slab, out in zip(self.slabs, outputs, strict=False):
                        slab[row].copy_(out)
        return {"ok": True, "turns": self.turns.take_observed(),
                "library": monitor.observe(elements[0] if elements else 0)}, None

    def gate_wait(self, _request: KernelGateWait, _payload: Any) -> tuple[dict[str, Any], Any]:
        with self.turns.scorer_turn("the device-timed batch's wait", restart=False):
            self._sync()
        return {"ok": True}, None

    def _batch(self, request: KernelBatch, _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.model is not None and self.main is not None
        main, seeds, model = self.main, [int(s) for s in request.seeds], self.model
        # Each call of the judge-clocked batch runs under the library-call monitor as a timed call
        # does (the batch's time bounds the reported times, so its work counts as theirs), judged
        # call by call in the judge. Its observation is made inside the judge's clock, but it holds
        # only the calls that asked the library for work: none for an honest Triton kernel.
        monitor = self._monitor()
        elements: list[int] = []
        forward = self._batch_forward(model, monitor, elements)
        # The monitor's entry and exit are in the kernel's turn with forward: the reference
        # worker's calibration of the per-call bookkeeping (under the same profile) has no monitor.
        batch_mod.run_batch(self.turns.kernel_call(forward), lambda i: self._inputs(main, seeds[i]), self.slabs, self._sync)
        reply = {"ok": True, "turns": self.turns.take_observed(),
                 "library": monitor.observe(elements[0] if elements else 0)}
        if self.device.type == "cuda":
            return reply, None
        return reply, {"slabs": self.slabs}
