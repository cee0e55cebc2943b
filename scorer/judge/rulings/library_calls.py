"""baseline-library-call (and a displaced or lingering monitor: harness-introspection), ruled in the
judge on what the worker's library-call monitor saw (replies.LibraryObservation), with the suite's
threshold: the measured rule whose counts scorer/checks/work.py describes, applied call by call."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from scorer.checks.catalog import Finding
from scorer.checks.dynamic import HOST_EXPORTS
from scorer.judge.registry import Check, register
from scorer.workers.replies import LibraryCall, LibraryObservation

# Operator arithmetic in PyTorch over at least this share of the task's largest tensor (summed over
# forward's operators) is the task's work done by the library, however it is split into pieces:
# operators are unary or binary, so any computation of the answer from all of an N-element input
# produces about N elements or more (a pairwise tree alone makes N/2 + N/4 + ...). Half leaves
# room for honest side arithmetic such as per-block scales (N/16 per operator).
ARITHMETIC_SHARE = 0.5
_HOST_EXPORT_KEYS = frozenset(f"torch.Tensor.{name}" for name in HOST_EXPORTS)


# Device kernels that are data movement, not maths (GPU profile).
_DEVICE_GLUE = ("memcpy", "memset", "fill", "copy_", "copykernel", "unrolled_elementwise_kernel<at::native::copy",
                "direct_copy", "arange", "cat_", "catarraybatched")


@dataclass
class WorkShare:
    """Forward's work split between the solution's kernels and the library (one unit per run)."""

    own: float = 0.0
    library: float = 0.0
    unit: str = "floating-point operations"
    measured: bool = True  # False: the solution's kernels could not be measured here
    by_op: dict[str, float] = field(default_factory=dict)
    by_kernel: dict[str, float] = field(default_factory=dict)

    @property
    def share(self) -> float:
        total = self.own + self.library
        return self.own / total if total > 0 else 1.0


def share_findings(work: WorkShare, threshold: float, data_elements: int = 0) -> list[Finding]:
    """baseline-library-call when the library did more of forward's work than the suite allows."""
    if work.library <= 0:
        return []
    ops = ", ".join(f"{k} {_fmt(v)}" for k, v in sorted(work.by_op.items(), key=lambda kv: -kv[1])[:5])
    if not work.measured:
        # The solution's own kernels cannot be measured here (a C++ extension on CPU): judge the
        # library's work against the task's data instead; any computation of the answer from all
        # of an N-element input costs about N or more.
        if data_elements > 0 and work.library >= threshold * data_elements:
            return [Finding("baseline-library-call",
                            f"library ops inside forward did {_fmt(work.library)} {work.unit}, "
                            f"{work.library / data_elements:.0%} of the task's largest tensor ({data_elements} "
                            f"elements; threshold {threshold:.0%}; the solution's own kernels cannot be "
                            f"measured on this device): {ops}; write it as a kernel")]
        return []
    if work.share >= threshold:
        return []
    kernels = ", ".join(f"{k} {_fmt(v)}" for k, v in sorted(work.by_kernel.items(), key=lambda kv: -kv[1])[:3])
    return [Finding("baseline-library-call",
                    f"the solution's own kernels did {work.share:.1%} of forward's work "
                    f"(threshold {threshold:.0%}, suite [policy] own_work_share): own {_fmt(work.own)} "
                    f"{work.unit} ({kernels or 'none counted'}), library {_fmt(work.library)} ({ops}); "
                    f"write the library's part as a kernel")]


def _badness(work: WorkShare, data_elements: int) -> float:
    """How far the library went, to pick the worst of several calls: the library's share of a
    measured call, the library's work per element of the task's data where it is not measured."""
    if work.measured:
        return 1.0 - work.share
    return work.library / data_elements if data_elements > 0 else 0.0


def calls_findings(calls: Sequence[WorkShare | None], threshold: float, data_elements: Sequence[int] | int = 0,
                   judged_library_work: float = 0.0) -> list[Finding]:
    """baseline-library-call judged call by call. Every watched forward is held to the rule on its
    own: summed over many calls, a kernel that computes honestly on the calls it guesses are watched
    and lets the library do the work on the others is diluted by its honest calls (one library call
    in 20 timed repetitions is 5% of the sum), whereas any one of those calls breaks the rule.

    `calls`: one WorkShare per watched call (`_share`), None for a call that
    asked the library for no work (it cannot break the rule; a batch of thousands of honest calls
    is judged without building a share for each). `data_elements`: the
    task's largest input or output for each call (or one figure for all); `judged_library_work`:
    library work per call already judged where the share was measured (the first call's profile on
    a GPU), taken off each call whose own kernels cannot be measured (compiled kernels)."""
    failing: list[tuple[float, int, list[Finding]]] = []
    for i, work in enumerate(calls):
        if work is None:
            continue
        if isinstance(data_elements, int):
            data = data_elements
        else:
            data = int(data_elements[i]) if i < len(data_elements) else 0
        if not work.measured and judged_library_work:
            work = replace(work, library=max(0.0, work.library - judged_library_work))
        found = share_findings(work, threshold, data)
        if found:
            failing.append((_badness(work, data), i, found))
    if not failing:
        return []
    _, worst, found = max(failing, key=lambda item: (item[0], -item[1]))
    if len(calls) == 1:
        return found
    return [Finding(f.pattern, f"{len(failing)} of {len(calls)} watched calls broke the rule; the worst "
                               f"(call {worst + 1}): {f.evidence}", f.severity) for f in found]


def _fmt(v: float) -> str:
    if v >= 1e6 or (0 < v < 1e-2):
        return f"{v:.3g}"
    return f"{v:.4g}" if not float(v).is_integer() else str(int(v)) if math.isfinite(v) else str(v)


def device_work(kernel_times_us: dict[str, float], own_names: list[str]) -> WorkShare:
    """Split a profile's device kernel time into the solution's kernels and the library's."""
    work = WorkShare(unit="us of device time")
    # The census names a kernel by its qualified name ("_make_row_sum.<locals>.kernel" for one a
    # factory builds); Triton names the compiled kernel by the function's own name ("kernel").
    bare = [own.rsplit(".", 1)[-1] for own in own_names]
    for name, us in kernel_times_us.items():
        low = name.lower()
        if any(own and re.search(rf"(?<![A-Za-z0-9_]){re.escape(own)}(?![A-Za-z0-9_])", name) for own in bare):
            work.own += us
            work.by_kernel[name[:60]] = work.by_kernel.get(name[:60], 0.0) + us
        elif not any(g in low for g in _DEVICE_GLUE):
            work.library += us
            work.by_op[name[:60]] = work.by_op.get(name[:60], 0.0) + us
    return work


@register
class LibraryCallMonitor(Check):
    id = "library-call-monitor"
    layer = "in-process"
    patterns = ("baseline-library-call", "harness-introspection")
    what = ("the library work each call of forward asked torch for, against the solution's own, observed in the worker "
            "(scorer/checks/dynamic.py), ruled in the judge with the suite's threshold")


def total_library_work(seen: LibraryObservation) -> int:
    return sum(n for call in seen.library_calls for n in call.library.values())


def _share(seen: LibraryObservation, call: LibraryCall) -> WorkShare:
    work = WorkShare(own=float(call.own), library=float(sum(call.library.values())),
                     measured=seen.own_counted and (call.own > 0 or not seen.native_kernels),
                     by_op={k: float(v) for k, v in call.library.items()})
    if call.own:
        work.by_kernel["Triton kernels (interpreted)"] = float(call.own)
    return work


def _host_export_findings(seen: LibraryObservation, data_elements: int) -> list[Finding]:
    """On a GPU the share is device time, and what the host computes from exported data takes none:
    there, data handed out of torch is judged against the task's largest tensor instead (an
    operator-only numpy forward on an H100 passed with its decoy's device time as all the work)."""
    exported: dict[str, int] = {}
    for call in seen.library_calls:
        for key, n in call.library.items():
            if key.split(" ", 1)[0] in _HOST_EXPORT_KEYS:
                exported[key] = exported.get(key, 0) + n
    total = sum(exported.values())
    if not data_elements or total < ARITHMETIC_SHARE * data_elements:
        return []
    where = ", ".join(f"{key} {n}" for key, n in sorted(exported.items(), key=lambda kv: -kv[1]))
    return [Finding("baseline-library-call",
                    f"forward handed {total} floating-point elements out of torch ({where}), against "
                    f"{data_elements} in the task's largest tensor: what host code computes from them is no "
                    "kernel of the solution's and takes no device time; compute it in a kernel")]


def library_findings(seen: LibraryObservation, threshold: float, judged_library_work: float = 0.0,
                     where: str = "") -> list[Finding]:
    """With a profile (GPU) the one watched call is split by device time; else each watched call is
    judged on its own (calls_findings). `judged_library_work`: library work per call already
    judged on the first call: where the share cannot be measured (compiled kernels after the first
    call), only library work beyond it is judged. `where`: the call(s) it came from, before the evidence."""
    if seen.device_times_us is not None:
        data = seen.data_elements if isinstance(seen.data_elements, int) else max(seen.data_elements, default=0)
        found = share_findings(device_work(seen.device_times_us, seen.own_names), threshold, data)
        found += _host_export_findings(seen, data)
    else:
        shares: list[WorkShare | None] = [None] * seen.calls
        for call in seen.library_calls:
            shares[call.call] = _share(seen, call)
        found = calls_findings(shares, threshold, seen.data_elements, judged_library_work)
    if seen.displaced:
        found.append(Finding("harness-introspection", "the scorer's library-call monitor (a TorchFunctionMode, and "
                             "its TorchDispatchMode) was popped or buried under another mode during forward and "
                             "not restored"))
    if seen.lingering:
        modes = ", ".join(f"{name} ({when} a call)" for name, when in seen.lingering.items())
        found.append(Finding("harness-introspection", f"torch mode(s) active outside forward: {modes}; every "
                             "operation the scorer does on inputs and outputs between calls (drawing, copying, "
                             "comparing, the cache flush) would run through kernel.py's code"))
    return [Finding(f.pattern, f"{where}: {f.evidence}", f.severity) for f in found] if where else found
