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

Every watched call is judged on its own, never a sum over calls: the first call, each correctness
trial, each timed repetition and each call of the judge-clocked batch. Where the solution's kernels
are compiled and no profile runs (a GPU after the first call), a call's library work beyond what
the first call's measured share allowed is judged against the task's largest tensor instead.

This module counts, in the kernel's worker; the rule (the share, the threshold, the device-time
split, the findings) runs in the judge on what was counted: scorer/judge/rulings/library_calls.py.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import torch

from scorer.gpu.interpreter_bf16 import interpreting

try:
    from triton.runtime import interpreter as interp
except Exception:  # a Triton without its interpreter: the solution's work there is not counted
    interp = None


# Contractions: cost = multiply-adds, from the operands' shapes.
_CONTRACTIONS = frozenset({"matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "linear", "einsum", "tensordot",
                           "__matmul__", "__rmatmul__", "dot", "vdot", "mv", "addmv", "inner", "outer", "ger",
                           "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                           "conv_transpose3d", "scaled_dot_product_attention", "multi_dot", "chain_matmul",
                           "cdist", "matrix_power", "addr", "kron",
                           # the ATen forms native code reaches (scorer/checks/aten_work.py)
                           "convolution", "_convolution", "_addmm_activation"})
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
    # torch.linalg's functions are named `linalg_<op>` in C (torch.linalg.multi_dot, .matmul).
    short = name.rsplit(".", 1)[-1].removeprefix("linalg_")
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
    if short in ("multi_dot", "chain_matmul"):
        # A chain, multiplied left to right: each product's rows x its inner x its columns. Priced
        # as one element each, a red-team matmul through multi_dot read N^2 for N^3 (2026-12-08).
        chain = [t for t in ins if t.dim() in (1, 2)]
        total, rows = 0, (chain[0].shape[0] if chain and chain[0].dim() == 2 else 1)
        for a, b in pairwise(chain):
            inner = a.shape[-1]
            cols = b.shape[-1] if b.dim() == 2 else 1
            total += int(rows) * int(inner) * int(cols)
        return max(total, out_n)
    if short == "kron":
        return out_n
    # matmul family: the contracted length is the first operand's last dimension.
    operands = [t for t in ins if t.dim() >= 1]
    k = operands[-2].shape[-1] if len(operands) >= 2 else (operands[0].shape[-1] if operands else 1)
    return out_n * int(k)


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
