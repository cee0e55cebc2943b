"""Ghost-kernel census: which of the solution's own kernels launched during a forward?

Triton kernels are counted where every launch ends up: `run` of the leaf kernel classes
(`JITFunction`, the interpreter's `InterpretedFunction`), wrapped once at class level, counting
only kernels whose Python function was written in kernel.py. Autotuned/heuristics kernels reach
that leaf too, and so do kernels a solution keeps in dicts, class attributes, factories or custom
ops, which a scan of module globals alone would call "no kernel". CUDA kernels from `load_inline`
/ custom ops are matched by their `__global__` names against the device kernels the profiler saw.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

try:
    from triton.runtime.jit import JITFunction, KernelInterface
except ImportError:  # triton missing: only CUDA kernels can be counted
    JITFunction = KernelInterface = None
try:
    from triton.runtime.interpreter import InterpretedFunction
except ImportError:
    InterpretedFunction = None

_GLOBAL_FN = re.compile(r"__global__\s+(?:[\w:<>,\s\*&]+?\s+)?(\w+)\s*\(")
# A Triton kernel written in the source, however it is stored afterwards (decorator or call).
_TRITON_JIT = re.compile(r"(?:@\s*(?:triton\s*\.\s*)?jit\b|\bjit\s*\()")


def _kernel_interface() -> type | None:
    return KernelInterface


def _leaf_kernel_classes() -> list[type]:
    """The classes whose `run` actually launches (wrappers such as Autotuner call into these)."""
    if JITFunction is None:
        return []
    return [JITFunction] + ([InterpretedFunction] if InterpretedFunction is not None else [])


def _triton_kernels(module: ModuleType) -> dict[str, Any]:
    """Kernel objects in module globals, one container level down, and in module-level classes."""
    interface = _kernel_interface()
    if interface is None:
        return {}
    found: dict[str, Any] = {}
    for name, obj in list(vars(module).items()):
        if isinstance(obj, interface):
            found[name] = obj
        elif isinstance(obj, dict):
            found.update({f"{name}[{k!r}]": v for k, v in list(obj.items()) if isinstance(v, interface)})
        elif isinstance(obj, (list, tuple)):
            found.update({f"{name}[{i}]": v for i, v in enumerate(obj) if isinstance(v, interface)})
        elif isinstance(obj, type) and getattr(obj, "__module__", None) == module.__name__:
            found.update({f"{name}.{k}": v for k, v in list(vars(obj).items()) if isinstance(v, interface)})
    return found


def _python_fn(kernel: Any) -> Any:
    """The innermost Python function of a (possibly wrapped) Triton kernel object."""
    fn = kernel
    for _ in range(8):
        inner = getattr(fn, "fn", None)
        if inner is None:
            break
        fn = inner
    return fn


def _defined_in(kernel: Any, filename: str) -> bool:
    code = getattr(_python_fn(kernel), "__code__", None)
    return code is not None and code.co_filename == filename


def _kernel_name(kernel: Any) -> str:
    return str(getattr(_python_fn(kernel), "__qualname__", None) or getattr(kernel, "__name__", "kernel"))


def cuda_global_names(source: str) -> list[str]:
    return sorted(set(_GLOBAL_FN.findall(source)))


@dataclass
class LaunchCensus:
    triton_names: list[str]
    cuda_names: list[str]
    counts: dict[str, int] = field(default_factory=dict)
    triton_in_source: bool = False

    def reset(self) -> None:
        self.counts = {name: 0 for name in self.triton_names}

    def count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


# One census is live per process (the worker loads one kernel.py); the class-level wrappers
# forward to it, so installing twice never stacks wrappers.
_LIVE: dict[str, Any] = {}


def _wrap_leaf_class(cls: type) -> None:
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_kernelarena_census", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        census = _LIVE.get("census")
        if census is None:
            return original(self, *args, **kwargs)
        filename = _LIVE.get("filename")
        if filename and _defined_in(self, filename):
            census.count(_kernel_name(self))
        return original(self, *args, **kwargs)

    run._kernelarena_census = True  # type: ignore[attr-defined]  # a function takes any attribute; the stubs declare none
    try:
        cls.run = run  # type: ignore[attr-defined]  # Triton's launcher class, typed `type`: it has `run` (read above)
    except (AttributeError, TypeError):
        pass


def install_census(module: ModuleType, source: str) -> LaunchCensus:
    kernels = _triton_kernels(module)
    filename = str(getattr(module, "__file__", "") or "")
    names = sorted({_kernel_name(k) for k in kernels.values() if not filename or _defined_in(k, filename)})
    census = LaunchCensus(names, cuda_global_names(source), triton_in_source=bool(_TRITON_JIT.search(source)))
    census.reset()
    _LIVE.update(census=census, filename=filename)
    for cls in _leaf_kernel_classes():
        _wrap_leaf_class(cls)
    return census


def stop_counting() -> None:
    """After the first forward: launches go straight to Triton again. The census has what it needs,
    and a launch-bound forward (one kernel per time step) would otherwise be timed with the
    wrapper's per-launch lookups in it."""
    _LIVE["census"] = None


def warm_profiler() -> None:
    """Starts and stops the profiler once with nothing to record: its first start loads and sets up
    CUPTI (host work of about a second), which otherwise falls inside the first call's hold of the
    GPU lock. Runs before kernel.py is imported, outside the lock."""
    with profile(activities=[ProfilerActivity.CUDA]):
        pass


def profile_device_time(fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """Runs `fn` once under the profiler; returns its result and device time (us) per kernel name."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        out = fn()
        torch.cuda.synchronize()
    times: dict[str, float] = {}
    for evt in prof.events():
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            us = float(getattr(evt, "device_time_total", 0.0) or 0.0)
            times[evt.name] = times.get(evt.name, 0.0) + us
    return out, times


def observe_launches(census: LaunchCensus, device_kernels: list[str] | None) -> dict[str, Any]:
    """What the first call showed (replies.LaunchObservation); the judge rules on it
    (scorer/judge/rulings/launch_census.py)."""
    return {"triton_defined": list(census.triton_names), "cuda_defined": list(census.cuda_names),
            "triton_in_source": census.triton_in_source, "triton_launched": dict(census.counts),
            "device_kernels": device_kernels}
