"""The kernel worker: imports the untrusted kernel.py, runs it on inputs the judge sends, and
returns its raw outputs and timings. It never holds a reference output; the judge compares.

Everything the kernel could tamper with once imported (input snapshots, the clock) is captured at
import of this module, which happens before kernel.py is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import torch

from scorer import dynamic_checks
from scorer.catalog import Finding
from scorer.census import LaunchCensus, ghost_findings, install_census, profile_device_kernels
from scorer.device_gate import make_gate
from scorer.guard import RuntimeGuard
from scorer.poison import poison_memory
from scorer.suites import LibraryPolicy
from scorer.taskload import as_output_list, to_device
from scorer.timing import Clock, TimingPlan, time_forward

_SHA256 = hashlib.sha256
_AS_PLAIN = torch.Tensor.as_subclass
_CLONE = torch.Tensor.clone
_EQUAL = torch.equal
_CHECK_OUTPUT = dynamic_checks.check_output_object
KERNEL_MODULE = "kernelarena_solution"


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


def _plain_cpu(t: torch.Tensor) -> torch.Tensor:
    # A copy, so a kernel that later reuses its output buffer cannot change what we return.
    return _AS_PLAIN(t, torch.Tensor).detach().to("cpu", copy=True)


def _is_compile_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        name, module = type(seen).__name__, type(seen).__module__
        if "CompilationError" in name or module.startswith("triton.compiler") or "Error building extension" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _error(kind: str, text: str) -> tuple[dict[str, Any], None]:
    return {"ok": False, "kind": kind, "error": text[-6000:]}, None


def _findings(items: list[Finding]) -> list[dict[str, str]]:
    return [f.to_dict() for f in items]


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
    findings: list[Finding] = field(default_factory=list)

    def meta(self) -> dict[str, Any]:
        return {"trial": self.trial, "devices": self.devices, "mutated": self.mutated, "error": self.error,
                "compile_failure": self.compile_failure, "findings": _findings(self.findings)}


class KernelRole:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.device = torch.device("cpu")
        self.init_seed = 0
        self.guard: RuntimeGuard | None = None
        self.model_cls: type | None = None
        self.model: torch.nn.Module | None = None
        self.census: LaunchCensus | None = None
        self.pristine: list[list[Any]] = []
        self.policy = LibraryPolicy()

    def _sync(self) -> None:
        if self.device.type == "cuda" and self.clock.cuda_sync is not None:
            self.clock.cuda_sync(self.device)

    def _build(self, init_inputs: list[Any], state_dict: dict[str, torch.Tensor]) -> tuple[torch.nn.Module, bool]:
        assert self.model_cls is not None
        torch.manual_seed(self.init_seed)
        model = self.model_cls(*init_inputs)
        own = model.state_dict()
        loaded = bool(state_dict) and set(own) == set(state_dict) and all(
            own[k].shape == state_dict[k].shape for k in own)
        if loaded:
            model.load_state_dict(state_dict)
        return model.to(self.device), loaded

    def load(self, header: dict[str, Any], payload: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        kernel_path = Path(header["kernel_path"])
        self.device = torch.device(header["device"])
        self.init_seed = int(header["init_seed"])
        self.policy = LibraryPolicy.from_dict(header.get("policy"))
        source = kernel_path.read_text(encoding="utf-8", errors="replace")
        if self.device.type == "cuda":
            # Compiled before kernel.py runs, so the hold comes from Triton's in-memory cache and not
            # from a cache folder the kernel can write to.
            make_gate(self.device, self.clock.hold_kernel)
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
        try:
            self.model, loaded = self._build(payload["init_inputs"], payload["state_dict"])
        except Exception:
            return _error("compile_error", "ModelNew(*init_inputs) failed:\n" + traceback.format_exc())
        return {"ok": True, "state_dict_loaded": loaded, "findings": _findings(self.guard.check("load")),
                "triton_kernels": self.census.triton_names, "cuda_kernels": self.census.cuda_names}, None

    def _call(self, model: torch.nn.Module, args: list[Any], specs: list[tuple[list[int], torch.dtype]],
              trial: str, around: Callable[[Callable[[], Any]], Any] | None = None) -> CallRecord:
        record = CallRecord(trial)
        before = [_snapshot(a) for a in args]
        # After the snapshot: the snapshot's own allocations would otherwise take the poisoned blocks.
        poison_memory(self.device, specs)
        try:
            with torch.no_grad():
                out = around(lambda: model(*args)) if around else model(*args)
        except Exception as exc:
            record.error = f"forward() raised on trial '{trial}':\n" + traceback.format_exc()
            record.compile_failure = _is_compile_failure(exc)
            return record
        record.findings = list(_CHECK_OUTPUT(out))
        try:
            self._sync()
            outputs = as_output_list(out)
            record.devices = [str(t.device) for t in outputs]
            record.outputs = [_plain_cpu(t) for t in outputs]
        except Exception:
            record.error = f"reading the outputs of trial '{trial}' failed:\n" + traceback.format_exc()
        record.mutated = [i for i, (a, b) in enumerate(zip(args, before)) if not _unchanged(b, a)]
        return record

    def _first_call(self, args: list[Any], specs: list[tuple[list[int], torch.dtype]]) -> CallRecord:
        """The first forward also takes the ghost-kernel census (and, on CUDA, a profile)."""
        assert self.model is not None and self.census is not None
        self.census.reset()
        device_kernels: list[str] | None = None

        def profiled(fn: Callable[[], Any]) -> Any:
            nonlocal device_kernels
            out, device_kernels = profile_device_kernels(fn)
            return out

        use_profiler = self.device.type == "cuda" and bool(self.census.cuda_names)
        # Library compute reached through names no static rule can fold (getattr with a computed
        # name, eval) still passes through torch's function dispatch on the first call.
        assert self.guard is not None
        monitor = dynamic_checks.LibraryCallMonitor(self.guard.kernel_files, self.policy)

        def watched(fn: Callable[[], Any]) -> Any:
            with monitor:
                return profiled(fn) if use_profiler else fn()

        record = self._call(self.model, args, specs, "seed-0", watched)
        if record.error is None:
            record.findings += ghost_findings(self.census, device_kernels if use_profiler else None)
            record.findings += monitor.findings(_largest_elements(args, (shape for shape, _ in specs)))
        return record

    def correctness(self, header: dict[str, Any], payload: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        assert self.model is not None and self.guard is not None
        specs = _specs(header["output_specs"])
        sets = [to_device(s, self.device) for s in payload["sets"]]
        self.pristine = [[a.clone() if isinstance(a, torch.Tensor) else a for a in s] for s in sets]
        records = [self._first_call(sets[0], specs)]
        if records[0].error and records[0].compile_failure:
            return _error("compile_error", records[0].error)
        for i, args in enumerate(sets[1:], start=1):
            records.append(self._call(self.model, args, specs, f"seed-{i}"))
        first_error = next((r.error for r in records if r.error), None)
        if first_error:
            return _error("runtime_error", first_error)
        records.append(self._call(self.model, sets[0], specs, "repeat-0"))
        if len(sets) > 1:
            for target, source in zip(sets[0], self.pristine[1]):
                if isinstance(target, torch.Tensor):
                    target.copy_(source)
            records.append(self._call(self.model, sets[0], specs, "refill-0-with-1"))
        for j, alt in enumerate(payload.get("alt", [])):
            records.append(self._alt_call(j, alt))
        outputs = {r.trial: r.outputs for r in records}
        header_out = {"ok": True, "calls": [r.meta() for r in records],
                      "findings": _findings(self.guard.check("correctness"))}
        return header_out, outputs

    def _alt_call(self, j: int, alt: dict[str, Any]) -> CallRecord:
        try:
            model, _ = self._build(alt["init_inputs"], alt["state_dict"])
        except Exception:
            return CallRecord(f"alt-{j}", error="ModelNew(*init_inputs) failed for an alternative shape:\n"
                              + traceback.format_exc())
        args = to_device(alt["inputs"], self.device)
        return self._call(model, args, _specs(alt["output_specs"]), f"alt-{j}")

    def time(self, header: dict[str, Any], _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.model is not None and self.guard is not None
        plan = TimingPlan(int(header["warmup"]), int(header["repetitions"]), bool(header["flush_l2"]),
                          tuple(int(r) for r in header.get("keep_reps", ())),
                          tuple(int(r) for r in header.get("watch_reps", ())))
        findings: list[Finding] = []
        keep = set(plan.keep_reps)
        # The first forward ran under the library-call monitor; these calls, among the timed
        # repetitions, show whether a later call (one the kernel might guess is timed) differs.
        monitor = dynamic_checks.LibraryCallMonitor(self.guard.kernel_files, self.policy)
        watched_elements: list[int] = []

        def watch(call: Callable[[], Any]) -> None:
            with monitor:
                out = call()
            shapes = [t.shape for t in as_output_list(out) if isinstance(t, torch.Tensor)]
            watched_elements.append(_largest_elements(sets[0], shapes))

        def on_output(rep: int, out: Any) -> Any:
            if rep in keep:
                findings.extend(_CHECK_OUTPUT(out))
                return [_plain_cpu(t) for t in as_output_list(out)]
            return None

        sets = self.pristine[: max(1, int(header["input_sets"]))]
        with torch.no_grad():
            run = time_forward(self.model, sets, plan, self.device, self.clock, on_output, watch)
        findings += [Finding(f.pattern, f"while timed: {f.evidence}", f.severity)
                     for f in monitor.findings(sum(watched_elements))]
        findings += self.guard.check("timing")
        if "INCOMPLETE" in run.gate:
            findings.append(Finding("timer-patching", f"the GPU-wide hold before each start event did not run in full ({run.gate})"))
        header_out = {"ok": True, "timer": run.timer, "times_ms": run.times_ms, "host_times_ms": run.host_times_ms,
                      "event_times_ms": run.event_times_ms, "drain_ms": run.drain_ms,
                      "idle_drain_ms": run.idle_drain_ms, "gate": run.gate, "gate_ms": run.gate_ms,
                      "findings": _findings(findings)}
        return header_out, {"kept": {int(k): v for k, v in run.kept_outputs.items()}}
