"""The checks that run beside the kernel in its own worker, bound before kernel.py is imported and
verified after every phase. Their findings arrive typed in the worker's replies; the judge accepts
only patterns these checks can find (anything else is the kernel's process speaking: a protocol
violation). In-process evidence raises an attack's cost; each such attack also meets the static
dialect and the judge's and outside layers."""

from __future__ import annotations

from scorer.judge.registry import Check, register


@register
class RuntimeGuard(Check):
    id = "runtime-guard"
    layer = "in-process"
    worker_findings = True
    patterns = ("timer-patching", "harness-introspection", "thread-injection", "cache-residency")
    what = ("identities of the clock, torch and the scorer's functions, module-table entries and code; audit events "
            "raised by kernel code; threads the kernel started; the device's persisting-L2 state (scorer/checks/guard.py)")


@register
class KernelTurns(Check):
    id = "kernel-turns"
    layer = "in-process"
    worker_findings = True
    patterns = ("harness-introspection",)
    what = "calls into the kernel's code during the scorer's own steps (scorer/checks/turns.py)"


@register
class GpuHold(Check):
    id = "gpu-hold"
    layer = "in-process"
    worker_findings = True
    patterns = ("timer-patching",)
    what = "the GPU-wide hold before each start event ran in full (scorer/gpu/gate.py)"
