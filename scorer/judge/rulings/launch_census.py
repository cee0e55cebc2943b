"""ghost-kernel, ruled in the judge on the first call's launch census (replies.LaunchObservation):
the worker observes which of the solution's kernels launched; whether that is a ghost is decided
here, where the kernel's code cannot reach the rule."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, register
from scorer.workers.replies import LaunchObservation


@register
class LaunchCensus(Check):
    id = "launch-census"
    layer = "in-process"
    patterns = ("ghost-kernel",)
    what = ("the solution's own kernels launched by the first call, observed in the worker (scorer/checks/census.py), "
            "ruled in the judge")


def ghost_findings(seen: LaunchObservation) -> list[Finding]:
    if not (seen.triton_defined or seen.cuda_defined or seen.triton_in_source):
        return [Finding("ghost-kernel", "kernel.py defines no Triton or CUDA kernel")]
    device_kernels = seen.device_kernels
    if any(seen.triton_launched.values()) or any(n in k for n in seen.cuda_defined for k in device_kernels or ()):
        return []
    if not (seen.triton_defined or seen.triton_in_source) and device_kernels is None:
        return []  # CUDA-only solution on a CPU run: nothing could launch here, nothing to judge
    launched = ", ".join(device_kernels[:12]) if device_kernels else "no device kernels recorded"
    defined = ", ".join(seen.triton_defined + seen.cuda_defined) or "Triton kernels written in kernel.py"
    return [Finding("ghost-kernel", f"none of the solution's kernels ({defined}) launched during forward; "
                                    f"launched: {launched}")]
