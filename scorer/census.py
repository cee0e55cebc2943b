"""Ghost-kernel census: did the solution's own kernels launch during a forward?

Triton kernels are counted by wrapping `run` on every Triton kernel object in the solution
module's globals (works for compiled and TRITON_INTERPRET kernels, autotuned or not). CUDA
kernels from `load_inline` / custom ops are matched by their `__global__` names against the
device kernels the profiler saw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

import torch

from scorer.catalog import Finding

_GLOBAL_FN = re.compile(r"__global__\s+(?:[\w:<>,\s\*&]+?\s+)?(\w+)\s*\(")


def _triton_kernels(module: ModuleType) -> dict[str, Any]:
    try:
        from triton.runtime.jit import KernelInterface
    except ImportError:  # triton missing: only CUDA kernels can be counted
        return {}
    return {name: obj for name, obj in vars(module).items() if isinstance(obj, KernelInterface)}


def cuda_global_names(source: str) -> list[str]:
    return sorted(set(_GLOBAL_FN.findall(source)))


@dataclass
class LaunchCensus:
    triton_names: list[str]
    cuda_names: list[str]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def defines_kernels(self) -> bool:
        return bool(self.triton_names or self.cuda_names)

    def reset(self) -> None:
        self.counts = {name: 0 for name in self.triton_names}


def install_census(module: ModuleType, source: str) -> LaunchCensus:
    kernels = _triton_kernels(module)
    census = LaunchCensus(sorted(kernels), cuda_global_names(source))
    census.reset()
    for name, obj in kernels.items():
        original = obj.run

        def counted(*args: Any, _name: str = name, _run: Callable[..., Any] = original, **kwargs: Any) -> Any:
            census.counts[_name] = census.counts.get(_name, 0) + 1
            return _run(*args, **kwargs)

        try:
            obj.run = counted
        except (AttributeError, TypeError):
            continue
    return census


def profile_device_kernels(fn: Callable[[], Any]) -> tuple[Any, list[str]]:
    """Runs `fn` once under the profiler; returns its result and the device kernel names."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        out = fn()
        torch.cuda.synchronize()
    names = sorted({evt.name for evt in prof.events() if evt.device_type == torch.autograd.DeviceType.CUDA})
    return out, names


def ghost_findings(census: LaunchCensus, device_kernels: list[str] | None) -> list[Finding]:
    if not census.defines_kernels:
        return [Finding("ghost-kernel", "kernel.py defines no Triton or CUDA kernel")]
    triton_launched = {n: c for n, c in census.counts.items() if c}
    cuda_launched = [n for n in census.cuda_names if any(n in k for k in device_kernels or ())]
    if triton_launched or cuda_launched:
        return []
    if not census.triton_names and device_kernels is None:
        return []  # CUDA-only solution on a CPU run: nothing could launch here, nothing to judge
    seen = ", ".join(device_kernels[:12]) if device_kernels else "no device kernels recorded"
    defined = ", ".join(census.triton_names + census.cuda_names)
    return [Finding("ghost-kernel", f"none of the solution's kernels ({defined}) launched during forward; launched: {seen}")]
