"""How much of forward's work the solution's own kernels did: the measured library-call rule.

A solution may use the library for glue and for a small part of the maths; it may not let the
library do the task. Which is which is measured, not read off a list of names:

* **Library work:** every torch op and tensor operator kernel.py's code calls in forward (seen by
  the `LibraryCallMonitor`, a TorchFunctionMode) costs its floating-point operations, roughly: a
  contraction (matmul, linear, bmm, einsum, conv) its multiply-adds, any other op one per element
  of its largest floating-point operand or result. Ops that touch no floating-point tensor
  (building row ids with `repeat_interleave`, `cumsum` of counts, index masks) are glue and cost
  nothing, like views, allocation and copies, which the monitor does not count at all.
* **Own work, CPU (Triton's interpreter):** the floating-point operations the solution's Triton
  kernels perform: elements of every floating-point arithmetic result, reduction inputs, and the
  multiply-adds of `tl.dot`, counted in the interpreter while forward runs. Loads, stores and
  integer arithmetic are not counted, so a kernel that only copies (a decoy launched to satisfy
  the launch census) does no work. The same unit as the library's, so the two add up.
* **Own work, GPU:** device time. A profile of the first forward splits kernel time into the
  solution's kernels (their names) and every other kernel, less copies and fills.

The share `own / (own + library)` must reach the suite's `[policy] own_work_share` (default 0.5:
the solution's kernels do at least half of forward's work). The finding gives both figures, the
threshold and the largest library ops, so it can be disputed with numbers.

Every watched call is judged on its own (`calls_findings`), never a sum over calls: the first call,
each correctness trial, each timed repetition and each call of the judge-clocked batch. Where the
solution's kernels are compiled and no profile runs (a GPU after the first call), a call's library
work beyond what the first call's measured share allowed is judged against the task's largest
tensor instead, the rule for unmeasured own work below.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from scorer.checks.catalog import Finding
from scorer.gpu.interpreter_bf16 import interpreting

try:
    from triton.runtime import interpreter as interp
except Exception:  # a Triton without its interpreter: the solution's work there is not counted
    interp = None

DEFAULT_OWN_WORK_SHARE = 0.5

# Contractions: cost = multiply-adds, from the operands' shapes.
_CONTRACTIONS = frozenset({"matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "linear", "einsum", "tensordot",
                           "__matmul__", "__rmatmul__", "dot", "vdot", "mv", "addmv", "inner", "outer", "ger",
                           "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                           "conv_transpose3d", "scaled_dot_product_attention",
                           # the ATen forms native code reaches (scorer/checks/aten_work.py)
                           "convolution", "_convolution", "_addmm_activation"})
# Device kernels that are data movement, not maths (GPU profile).
_DEVICE_GLUE = ("memcpy", "memset", "fill", "copy_", "copykernel", "unrolled_elementwise_kernel<at::native::copy",
                "direct_copy", "arange", "cat_", "catarraybatched")


def _tensors(obj: Any) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors(o)]
    return []


def op_work(name: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None, out: Any) -> int:
    """Floating-point operations an op does, approximately: a contraction its multiply-adds, any
    other op one per element of its largest floating-point operand or result (an elementwise op
    per output, a reduction per input). 0 when no floating-point tensor is involved (index glue)
    or every result is boolean (a check or a mask)."""
    results = _tensors(out)
    # The class's own getset descriptor, read directly: a subclass cannot answer for it. The stubs
    # type Tensor.dtype as the value it returns, not as the descriptor it is on the class.
    if results and all(torch.Tensor.dtype.__get__(t) is torch.bool for t in results):  # type: ignore[attr-defined]
        # A comparison, a finiteness check, a mask: it can steer the answer but not compute it,
        # and the floating-point op that uses it is counted (a transpose that first checked
        # `torch.isfinite(x).all()` read as 0% own work).
        return 0
    ins = [t for t in _tensors(args) + _tensors(kwargs or {}) if _floating(t)]
    outs = [t for t in results if _floating(t)]
    if not ins and not outs:
        return 0
    short = name.rsplit(".", 1)[-1]
    if short.startswith("_scaled_dot_product"):  # ATen's attention kernels
        short = "scaled_dot_product_attention"
    if short in _CONTRACTIONS and outs:
        return _multiply_adds(short, ins, outs)
    return max(torch.Tensor.numel(t) for t in ins + outs)


def _floating(t: torch.Tensor) -> bool:
    return torch.Tensor.is_floating_point(t) or torch.Tensor.is_complex(t)


def _multiply_adds(short: str, ins: list[torch.Tensor], outs: list[torch.Tensor]) -> int:
    out_n = sum(torch.Tensor.numel(t) for t in outs)
    if short.lstrip("_").startswith("conv") and len(ins) >= 2:
        w = ins[1]
        return out_n * max(1, torch.Tensor.numel(w) // max(1, w.shape[0] if w.dim() else 1))
    if short == "einsum":
        largest = max((torch.Tensor.numel(t) for t in ins), default=0)
        return max(out_n, largest) * max((t.shape[-1] for t in ins if t.dim()), default=1)
    if short == "scaled_dot_product_attention" and ins and ins[0].dim() >= 2:
        q = ins[0]
        keys = ins[1].shape[-2] if len(ins) > 1 and ins[1].dim() >= 2 else q.shape[-2]
        return 2 * torch.Tensor.numel(q) * keys
    # matmul family: the contracted length is the first operand's last dimension.
    operands = [t for t in ins if t.dim() >= 1]
    k = operands[-2].shape[-1] if len(operands) >= 2 else (operands[0].shape[-1] if operands else 1)
    return out_n * int(k)


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

    `calls`: one WorkShare per watched call (`LibraryCallMonitor.call_shares`), None for a call that
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


# --- own work in Triton's interpreter ----------------------------------------------------------

_COUNTER: dict[str, Any] = {"active": 0, "elements": 0}
_WRAPPED = [False]


def _install_interpreter_counts() -> bool:
    """Wrap the interpreter's floating-point arithmetic, dots and reductions once (class level);
    they count only while a monitor is active. Loads, stores and integer arithmetic (offsets,
    masks) are not work: a kernel that only copies does none. False when Triton is not
    interpreted here."""
    if _WRAPPED[0]:
        return True
    if not interpreting() or interp is None:
        return False
    cls = interp.InterpreterBuilder

    def floating(handle: Any) -> bool:
        try:
            dtype = getattr(handle.dtype, "scalar", handle.dtype)
            return bool(dtype.is_floating()) and np.asarray(handle.data).dtype != np.bool_
        except Exception:
            return False

    def counted(original: Any) -> Any:
        def wrapped(self: Any, *args: Any) -> Any:
            out = original(self, *args)
            if _COUNTER["active"] and floating(out):
                _COUNTER["elements"] += int(np.size(out.data))
            return out
        return wrapped

    for name in ("binary_op", "unary_op", "create_fma", "create_rsqrt", "create_erf", "create_fabs"):
        if hasattr(cls, name):
            setattr(cls, name, counted(getattr(cls, name)))
    dot = cls.create_dot

    def create_dot(self: Any, a: Any, b: Any, *rest: Any) -> Any:
        if _COUNTER["active"]:
            try:
                m, k = a.data.shape[-2], a.data.shape[-1]
                n = b.data.shape[-1]
                batch = max(1, int(a.data.size // max(1, m * k)))
                _COUNTER["elements"] += batch * m * n * k
            except Exception:
                pass
        return dot(self, a, b, *rest)

    cls.create_dot = create_dot
    for red_cls, names in ((interp.ReduceOps, ("sum", "min_max")), (interp.ScanOps, ("cumsum", "cumprod"))):
        for name in names:
            original = getattr(red_cls, name, None)
            if original is None:
                continue

            def reduction(self: Any, input: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                first = input[0] if isinstance(input, (tuple, list)) else input
                if _COUNTER["active"] and floating(getattr(first, "handle", None)):
                    _COUNTER["elements"] += int(np.size(first.handle.data))
                return _original(self, input, *args, **kwargs)

            setattr(red_cls, name, reduction)
    _WRAPPED[0] = True
    return True


class InterpreterWork:
    """Counts the interpreter's element operations while active (`with counter: forward()`)."""

    def __init__(self) -> None:
        self.available = _install_interpreter_counts()
        self.elements = 0

    def __enter__(self) -> InterpreterWork:
        self._start = _COUNTER["elements"]
        _COUNTER["active"] += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        _COUNTER["active"] -= 1
        self.elements += _COUNTER["elements"] - self._start


# --- own work on a GPU: device time --------------------------------------------------------------

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
