"""Data-driven anti-hack checks the judge and worker call at fixed points. Each returns evidence
as `Finding`s and never raises for a bad kernel (an odd object is itself evidence).

Thresholds are calibrated from measurements written up in docs/HACKS.md; the constants below
carry the numbers they came from.
"""

from __future__ import annotations

import math
import re
import statistics
import types
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack

from scorer.checks import launch_window
from scorer.checks.aten_work import COMPUTE, AtenMode, run_kernel_watched, run_subclass_watched, solution_op, torch_counterpart
from scorer.checks.catalog import Finding
from scorer.checks.modes import lingering_modes, top_dispatch_mode
from scorer.checks.poison import PERTURB_BYTES
from scorer.checks.static import is_denied_name
from scorer.checks.static import rules as static_rules
from scorer.checks.work import (
    InterpreterWork,
    op_work,
)

is_fake: Callable[[torch.Tensor], bool] | None
try:
    from torch._subclasses.fake_tensor import is_fake
except ImportError:  # older torch: _is_fake falls back to the mode marker
    is_fake = None

_PLAIN_TENSOR = torch.Tensor
_INT_VIEWS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
              torch.bfloat16: torch.int16}
# Below this share of correct elements, a poisoned output was not written at all (on CPU the
# allocator reuses parts of freed blocks for its own bookkeeping, so poison alone is not "all").
_WRITTEN_SHARE = 0.05
_GARBAGE_FACTOR = 1e12

# --- precision-downgrade --------------------------------------------------------------------------
# Norm-wise relative error against float64 on the demo tasks (CPU, 3 seeds, worst case):
#   fp32 compute 4.5e-8..5e-7; TF32-rounded inputs (Triton's default tl.dot) 2.1e-4..3.0e-4 for
#   matmuls (1.6e-3 for softmax, which never uses tl.dot); fp16 end to end 3.7e-4..1.6e-3;
#   bf16 end to end 2.3e-3..1.1e-2.
# A TF32 matmul must pass, so the error bar sits above TF32's worst case with a margin; below it,
# fp16/bf16 are caught by their fingerprint instead (see _HALF_FINGERPRINT).
# On the H200 (fp32 tasks, Triton tl.dot in TF32 with fp32 accumulation) honest solutions measured
# 1.5e-3 (GQA decode, SwiGLU MLP) to 2.5e-3 (MLA, two chained contractions and a softmax), above
# the CPU calibration; the bar keeps 2x over that. bf16 operands with fp32 accumulation can land in
# the same band: those are caught by the fingerprint below (bf16-rounded outputs) or flagged statically.
_ERROR_FLOOR = 5e-3
# Tasks with no contraction (no tl.dot, so no TF32) get a far lower bar: honest fp32 kernels
# there measure 4.5e-8..5e-7 (fast-math exp/rsqrt included), bf16 exponentials alone 9e-4, fp16
# exponentials 8.9e-5..2.0e-4 (demo softmax, 400 seeds): a 1e-4 floor let 1.25% of fp16 ones pass.
# 2e-5 is 40x over honest fp32 and 4.5x under the least fp16 error seen.
_STRICT_ERROR_FLOOR = 2e-5
_NO_CONTRACTION_CATEGORIES = frozenset({"activation", "elementwise", "memory", "normalization", "pooling",
                                        "reduction", "scan", "softmax"})
# An fp32 kernel may sum in another order than the reference; 100x the reference's own error
# still separates fp32 (ratio ~1-10) from reduced precision (ratio 1e3-1e5).
_ERROR_RATIO = 100.0
# A value that went through fp16 (or bf16) and back has its low 13 (16) mantissa bits zero. An
# fp32 result has that with probability 2^-13 per element: measured 0.000-0.001 on the demo tasks,
# 1.000 for fp16/bf16 compute. Require most elements, and a reference without the pattern.
_HALF_FINGERPRINT = 0.9
_MIN_ELEMENTS = 32
_FINGERPRINT_SAMPLE = 1 << 16
_ERROR_SAMPLE = 1 << 20
_HALF_TASK_DTYPES = {"float16", "bfloat16", "half", "fp16", "bf16", "float8_e4m3fn", "float8_e5m2"}

# --- timing --------------------------------------------------------------------------------------
# The host clock brackets forward() + a device-wide synchronize; the events bracket what forward
# put on the caller's stream. Launch and sync overhead makes the host a little slower, never
# several times slower, unless work runs outside what the events see.
_HOST_OVER_EVENT_RATIO = 1.5
_HOST_OVER_EVENT_MARGIN_MS = 0.05
# Events cannot legitimately measure more than the host clock that encloses them.
_EVENT_OVER_HOST_MARGIN_MS = 0.05
_EVENT_OVER_HOST_RATIO = 1.2
# End event to the event after the device-wide synchronize (settled: scorer/gpu/timing.py,
# settled_drain_ms), beyond what it is with no forward at all: work still running on other streams
# when the caller's stream was done. Medians, because the score is the median time: hidden work that
# lowers the median time must run in at least half the repetitions, which moves the median drain
# by as much. The margin is the larger of a floor (what the idle and timed host paths may still
# differ by; honest kernels measured -0.004..+0.003 ms on the H200 with the host waiting first) and
# the idle calibration's own spread (its 90th percentile above its median: a busy host widens
# it), plus a share of the time timed (hidden work that small changes the score less than noise).
_DRAIN_EXCESS_MARGIN_MS = 0.02
_DRAIN_EXCESS_RATIO = 0.1
_DRAIN_IDLE_QUANTILE = 0.9

# --- roofline ------------------------------------------------------------------------------------
# (peak bytes/s, peak fp32 non-tensor FLOP/s, peak dense bf16 tensor FLOP/s) from vendor data
# sheets. The floor uses the *most generous* compute rate (tensor cores), so a kernel is only
# flagged when it beats what the device can possibly do.
_DEVICE_PEAKS: tuple[tuple[str, float, float, float], ...] = (
    ("H200", 4.8e12, 67e12, 990e12),
    ("H100 PCIe", 2.0e12, 51e12, 756e12),
    ("H100", 3.35e12, 67e12, 990e12),
    ("H800", 3.35e12, 67e12, 990e12),
    ("GH200", 4.0e12, 67e12, 990e12),
    ("A100-SXM4-80GB", 2.04e12, 19.5e12, 312e12),
    ("A100", 1.56e12, 19.5e12, 312e12),
    ("L40S", 0.864e12, 91.6e12, 362e12),
    ("MI300X", 5.3e12, 163e12, 1307e12),
    ("MI325X", 6.0e12, 163e12, 1307e12),
)
_ROOFLINE_SAFETY = 0.8


def observe_output(obj: Any) -> dict[str, Any]:
    """What forward()'s raw return value is (replies.OutputObservation), read in the worker before
    the end event; the judge rules on it (scorer/judge/rulings/output_object.py, lazy-evaluation)."""
    try:
        return {"items": _observe_output(obj), "error": None}
    except Exception as exc:  # a hostile object whose attributes raise: what it raised is the observation
        return {"items": [], "error": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _observe_output(obj: Any) -> list[dict[str, Any]]:
    outer = type(obj)
    items = list(enumerate(obj)) if outer is tuple or outer is list else [(None, obj)]
    observed = []
    for index, item in items:
        kind = type(item)
        # Each fact only once the earlier ones allow reading it: a proxy's attributes are its code,
        # a meta or fake tensor has no data to point at.
        fact = {"where": "output" if index is None else f"output {index}",
                "type": f"{kind.__module__}.{kind.__qualname__}"[:1000],
                "plain": kind is _PLAIN_TENSOR or kind is torch.nn.Parameter, "device": "", "fake": False, "numel": 0,
                "null_data": False, "storage_bytes": 0, "needed_bytes": 0}
        observed.append(fact)
        if not fact["plain"]:
            continue
        fact["device"] = _PLAIN_TENSOR.device.__get__(item).type
        if fact["device"] == "meta":
            continue
        fact["fake"] = _is_fake(item)
        if fact["fake"]:
            continue
        fact["numel"] = numel = _PLAIN_TENSOR.numel(item)
        fact["null_data"] = bool(numel) and _PLAIN_TENSOR.data_ptr(item) == 0
        if numel and not fact["null_data"]:
            fact["storage_bytes"] = _PLAIN_TENSOR.untyped_storage(item).nbytes()
            fact["needed_bytes"] = ((_PLAIN_TENSOR.storage_offset(item) + _max_offset(item) + 1)
                                    * _PLAIN_TENSOR.element_size(item))
    return observed


def _is_fake(t: torch.Tensor) -> bool:
    if is_fake is None:
        return hasattr(t, "fake_mode")
    try:
        return bool(is_fake(t))
    except Exception:
        return True


def _max_offset(t: torch.Tensor) -> int:
    return sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True) if size > 0)


# The mismatch and constant-output evidence are shares and patterns, which an evenly strided sample
# shows as well as the whole tensor; the sample is what moves to the host (4M elements at most).
_EVIDENCE_SAMPLE = 1 << 22


def host_sample(t: torch.Tensor) -> torch.Tensor:
    """An evenly strided sample of `t` on the host; tensors of the same size get the same positions."""
    step = max(1, t.numel() // _EVIDENCE_SAMPLE)
    flat = t.detach().reshape(-1)
    return (flat[::step] if step > 1 else flat).to("cpu")


def explain_mismatch(output: Any, expected: Any, inputs: Sequence[Any]) -> list[Finding]:
    """identity-kernel / noop-kernel evidence for an output that failed the comparison."""
    if not isinstance(output, torch.Tensor) or not isinstance(expected, torch.Tensor):
        return []
    try:
        shape = tuple(expected.shape)
        if tuple(output.shape) != shape:
            return []
        out, exp = host_sample(output), host_sample(expected)
    except Exception:
        return []
    findings: list[Finding] = []
    if out.is_floating_point() and out.shape == exp.shape and out.numel():
        poison = _poison_mask(out) & torch.isfinite(exp)
        # Uninitialised memory read as floats: magnitudes no computation on these inputs makes
        # (pointers and integers reinterpreted give 1e25..1e38).
        scale = float(exp.double().abs().max()) if exp.numel() else 0.0
        garbage = torch.isfinite(out) & (out.double().abs() > _GARBAGE_FACTOR * (scale + 1.0))
        # Zero-initialised outputs (and fresh pages) show unwritten elements as exact zeros.
        unwritten = poison | garbage | ((out == 0) & (exp != 0))
        close = torch.isclose(out.double(), exp.double(), rtol=1e-3, atol=1e-3) & ~unwritten
        matching = float(close.float().mean())
        n_bad, n = int(unwritten.sum()), out.numel()
        if (int(poison.sum()) or int(garbage.sum())) and matching < _WRITTEN_SHARE:
            return [Finding("stale-memory-reuse",
                            f"only {matching:.1%} of {n} output elements match the reference and {n_bad} hold the "
                            f"scorer's NaN poison or uninitialised garbage (|value| up to "
                            f"{float(out.double().abs().nan_to_num(0.0).max()):.3g} where the reference is at most "
                            f"{scale:.3g}): forward() returned memory it never wrote")]
        if n_bad and matching >= _WRITTEN_SHARE and n_bad >= 0.5 * (n - int(close.sum())):
            return [Finding("noop-kernel",
                            f"{n_bad} of {n} output elements ({n_bad / n:.1%}) were never written (NaN poison, "
                            f"garbage or zero) where the reference is not; {matching:.1%} are correct")]
    if out.numel() and out.shape == exp.shape and bool((out == 0).all()) and not bool((exp == 0).all()):
        return [Finding("noop-kernel", f"output is all zeros ({output.numel()} elements) where the reference is not")]
    for i, arg in enumerate(inputs):
        if not isinstance(arg, torch.Tensor) or tuple(arg.shape) != shape or arg.dtype != out.dtype or not out.numel():
            continue
        a = host_sample(arg)
        if _same(out, a) and not _same(exp, a):
            findings.append(Finding("identity-kernel",
                                    f"output equals input {i} (shape {shape}) while the reference differs "
                                    f"from it (max |ref - input| = {float((exp.double() - a.double()).abs().max()):.3g})"))
            break
    return findings


def _poison_mask(t: torch.Tensor) -> torch.Tensor:
    """NaNs with the exact bit pattern of the scorer's fill (torch's canonical NaN), and elements
    whose every byte is glibc's MALLOC_PERTURB_ fill (fresh malloc or freed memory). Arithmetic
    NaNs differ (x86 yields 0xFFC00000, CUDA 0x7FFFFFFF), so a kernel whose math overflows is
    not mistaken for one that never wrote its output."""
    if t.dtype in _INT_VIEWS:
        view = _INT_VIEWS[t.dtype]
        bits = t.contiguous().view(view)
        mask = bits == torch.full((1,), float("nan"), dtype=t.dtype).view(view)
        for byte in PERTURB_BYTES:
            mask |= bits == _repeated_byte(byte, view)
        return mask
    return torch.isnan(t)


def _repeated_byte(byte: int, dtype: torch.dtype) -> torch.Tensor:
    size = torch.empty((), dtype=dtype).element_size()
    return torch.tensor([byte] * size, dtype=torch.uint8).view(dtype)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_floating_point():
        return bool(torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(torch.equal(a, b))


def _norm_rel(out: torch.Tensor, exp64: torch.Tensor) -> float:
    denom = float(exp64.norm())
    diff = float((out.double() - exp64).norm())
    return diff / denom if denom > 0 else (0.0 if diff == 0 else math.inf)


def _half_fraction(t: torch.Tensor, low_bits: int) -> tuple[float, int]:
    """Share of finite non-zero normal fp32 values whose low mantissa bits are all zero (on an
    evenly strided sample: the share, not every element, is what matters)."""
    t = t.detach().to("cpu", torch.float32).reshape(-1)
    if t.numel() > _FINGERPRINT_SAMPLE:
        t = t[:: t.numel() // _FINGERPRINT_SAMPLE]
    t = t.contiguous()
    mask = torch.isfinite(t) & (t.abs() >= torch.finfo(torch.float16).tiny)
    # Integers and small dyadic values are exact in every format: they carry no signal.
    mask &= t != torch.round(t)
    n = int(mask.sum())
    if n == 0:
        return 0.0, 0
    bits = t.view(torch.int32)[mask]
    return float(((bits & ((1 << low_bits) - 1)) == 0).float().mean()), n


def precision_findings(output: Any, expected_fp64: Any, reference_output: Any, task_dtype: str | None,
                       category: str | None = None) -> list[Finding]:
    """precision-downgrade: the kernel's error against float64 versus the reference's own.
    `category` (the task's, optional) selects the strict bar for tasks without a contraction;
    unknown categories get the TF32-tolerant bar."""
    if (task_dtype or "float32").lower() in _HALF_TASK_DTYPES:
        return []
    if not all(isinstance(t, torch.Tensor) for t in (output, expected_fp64, reference_output)):
        return []
    if output.dtype != torch.float32 or output.shape != expected_fp64.shape or output.numel() < _MIN_ELEMENTS:
        return []
    try:
        # An evenly strided sample keeps the judge's cost flat for 100M-element outputs; norm-wise
        # error and the fingerprint share are statistics, which a 1M sample estimates well.
        out, ref, exp64 = _error_sample(output, reference_output, expected_fp64.double())
        if not bool(torch.isfinite(out).all()):
            return []
        fingerprint = _fingerprint_finding(out, ref, "")
        if fingerprint is not None:
            return [fingerprint]
        kernel_err = _norm_rel(out, exp64)
        ref_err = _norm_rel(ref, exp64)
        bar = precision_bar(ref_err, category)
        if kernel_err > bar:
            return [Finding("precision-downgrade",
                            f"norm-wise relative error vs float64 is {kernel_err:.2e}, the fp32 reference's is "
                            f"{ref_err:.2e} (allowed: {bar:.2e} for a '{category or 'unknown'}' task): reduced-precision "
                            f"arithmetic, or an approximation of the task's function (a tanh GELU for an erf one)")]
    except Exception:
        return []
    return []


def _error_sample(*tensors: torch.Tensor, offset: int = 0) -> list[torch.Tensor]:
    """The same evenly strided sample of each (at most about _ERROR_SAMPLE elements, from `offset`
    within the first stride), on the host."""
    step = max(1, tensors[0].numel() // _ERROR_SAMPLE)
    return [t.detach().to("cpu").reshape(-1)[offset % step::step] for t in tensors]


def precision_bar(ref_err: float, category: str | None) -> float:
    """The norm-wise relative error against float64 a kernel may have: the category's floor, or
    _ERROR_RATIO times the fp32 reference's own."""
    floor = _STRICT_ERROR_FLOOR if (category or "").lower() in _NO_CONTRACTION_CATEGORIES else _ERROR_FLOOR
    return max(floor, _ERROR_RATIO * ref_err)


def reference_bar(reference_output: Any, expected_fp64: Any, category: str | None) -> float | None:
    """precision_bar for the fp32 reference's output against float64 (sampled as
    precision_findings samples them); None where they cannot be compared."""
    if not isinstance(reference_output, torch.Tensor) or not isinstance(expected_fp64, torch.Tensor) \
            or reference_output.shape != expected_fp64.shape or reference_output.numel() < _MIN_ELEMENTS:
        return None
    ref, exp64 = _error_sample(reference_output, expected_fp64.double())
    return precision_bar(_norm_rel(ref, exp64), category)


def _fingerprint_finding(out: torch.Tensor, ref: torch.Tensor, where: str) -> Finding | None:
    for low_bits, fmt in ((16, "bfloat16"), (13, "float16")):
        frac, n = _half_fraction(out, low_bits)
        ref_frac, _ = _half_fraction(ref, low_bits)
        if n >= _MIN_ELEMENTS and frac >= _HALF_FINGERPRINT and ref_frac < 0.5:
            return Finding("precision-downgrade",
                           f"{where}{frac:.1%} of {n} non-integer output values are exactly representable in {fmt} "
                           f"(reference: {ref_frac:.1%}; fp32 arithmetic gives ~0.01%): the result went through {fmt}")
    return None


def precision_consistency(output: Any, reference_output: Any, bar: float | None, task_dtype: str | None,
                          where: str, offset: int = 0) -> list[Finding]:
    """precision-downgrade on a call the float64 check does not read (the other seeds, the timed
    repetitions the judge kept): the bf16/fp16 fingerprint, and the error against the fp32
    reference above twice the bar the float64 seed was held to (the fp32 reference's own error
    is in this one). A red-team kernel rounded to fp16 on every call but the first and passed.
    `offset`: where the strided sample starts, drawn by the caller where the kernel cannot see it."""
    if (task_dtype or "float32").lower() in _HALF_TASK_DTYPES:
        return []
    if not all(isinstance(t, torch.Tensor) for t in (output, reference_output)):
        return []
    if output.dtype != torch.float32 or output.shape != reference_output.shape or output.numel() < _MIN_ELEMENTS:
        return []
    try:
        out, ref = _error_sample(output, reference_output, offset=offset)
        if not bool(torch.isfinite(out).all()):
            return []
        fingerprint = _fingerprint_finding(out, ref, f"{where}: ")
        if fingerprint is not None:
            return [fingerprint]
        err = _norm_rel(out, ref.double())
        if bar is not None and err > 2 * bar:
            return [Finding("precision-downgrade",
                            f"{where}: norm-wise relative error vs the fp32 reference is {err:.2e}, above twice the "
                            f"bar the float64-checked call was held to ({2 * bar:.2e}): reduced-precision arithmetic "
                            f"on calls the float64 check does not read")]
    except Exception:
        return []
    return []


def timing_findings(event_times_ms: Sequence[float], host_times_ms: Sequence[float],
                    drain_ms: Sequence[float] | None = None, idle_drain_ms: Sequence[float] | None = None,
                    gate_ms: Sequence[float] | None = None, waited_ms: Sequence[float] | None = None,
                    host_rule: bool = True) -> list[Finding]:
    """stream-injection / timer-patching: device-event times versus host-clock times per
    repetition, and the device's drain time after the end event versus an idle device's. The host
    clock starts while the GPU is still held before the start event (`gate_ms`), so it may exceed
    the events by that hold. It also runs while the timing thread waits for a CPU on a loaded host
    (`waited_ms`, the scheduler's count per repetition, read by the judge): that time is taken off
    before the host clock is held against the events. On an H100 with other scorings' judges
    running beside it, an honest swish read 2.63 ms on the host against 0.18 ms of events.
    `host_rule=False` leaves the host clock's excess unjudged: the judge says so where the timing
    ran beside foreign compute on the device, which the host clock also waits for."""
    # One finite, non-negative event and host time per repetition: TimeReply.parse refuses any
    # other count or value as a protocol violation before a ruling sees them.
    pairs = list(zip(event_times_ms, host_times_ms, strict=True))
    if not pairs:
        return []
    events = [e for e, _ in pairs]
    hosts = [h for _, h in pairs]
    ev_med, host_med = statistics.median(events), statistics.median(hosts)
    if ev_med > host_med * _EVENT_OVER_HOST_RATIO + _EVENT_OVER_HOST_MARGIN_MS:
        return [Finding("timer-patching",
                        f"device events claim {ev_med:.4g} ms per repetition but the enclosing host clock saw "
                        f"{host_med:.4g} ms (median of {len(pairs)}): the event times are not real")]
    drained = _drain_finding(ev_med, drain_ms, idle_drain_ms)
    if drained:
        return drained
    if not host_rule:
        return []
    gates = list(gate_ms or ())
    gate_med = statistics.median(gates) if gates else 0.0
    waits = list(waited_ms or ())
    waited = ""
    if waits and len(waits) == len(pairs):
        host_med = statistics.median(max(e, h - w) for (e, h), w in zip(pairs, waits, strict=True))
        waited = f" after {statistics.median(waits):.3g} ms a repetition waiting for a CPU"
    if host_med > _HOST_OVER_EVENT_RATIO * ev_med + gate_med + _HOST_OVER_EVENT_MARGIN_MS:
        held = f" + the {gate_med:.3g} ms hold before the start event" if gates else ""
        return [Finding("stream-injection",
                        f"host clock {host_med:.4g} ms{waited} vs device events {ev_med:.4g} ms per repetition "
                        f"(median of {len(pairs)}; allowed {_HOST_OVER_EVENT_RATIO}x + {_HOST_OVER_EVENT_MARGIN_MS} ms"
                        f"{held}): work runs where the timing events do not see it")]
    return []


def _drain_finding(ev_med: float, drain_ms: Sequence[float] | None,
                   idle_drain_ms: Sequence[float] | None) -> list[Finding]:
    drains, idles = list(drain_ms or ()), list(idle_drain_ms or ())
    if not drains or not idles:
        return []
    drain_med, idle_med = statistics.median(drains), statistics.median(idles)
    idle_spread = _upper_quantile(idles, _DRAIN_IDLE_QUANTILE) - idle_med
    allowed = max(_DRAIN_EXCESS_MARGIN_MS, idle_spread) + _DRAIN_EXCESS_RATIO * ev_med
    if drain_med - idle_med > allowed:
        return [Finding("stream-injection",
                        f"the device was still busy {drain_med - idle_med:.4g} ms after the caller's stream finished "
                        f"(drain {drain_med:.4g} ms vs {idle_med:.4g} ms when idle, medians of {len(drains)} and "
                        f"{len(idles)}; timed {ev_med:.4g} ms; allowed {allowed:.3g} ms): work runs on a stream the "
                        "timing events do not see")]
    return []


def _upper_quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) < 2:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def device_peaks(device_name: str) -> tuple[float, float, float] | None:
    """(bytes/s, fp32 FLOP/s, tensor FLOP/s) for a device name as torch reports it, or None."""
    norm = re.sub(r"[\s_]+", " ", device_name or "").upper()
    for key, bw, fp32, tensor in _DEVICE_PEAKS:
        if key.upper().replace("-", " ") in norm.replace("-", " "):
            return bw, fp32, tensor
    return None


def roofline_floor_ms(flops: float | None, bytes_moved: float | None, device_name: str | None) -> float | None:
    """The task's roofline floor on this device: max(bytes / peak bandwidth, FLOPs / peak tensor
    rate), in ms; None without the task's counts or a device whose peaks are known."""
    peaks = device_peaks(device_name or "")
    if peaks is None or (not flops and not bytes_moved):
        return None
    bw, _fp32, tensor = peaks
    return max((bytes_moved or 0) / bw, (flops or 0) / tensor) * 1e3


def roofline_findings(kernel_ms: float, flops: float | None, bytes_moved: float | None, device_name: str) -> list[Finding]:
    """impossible-speed: faster than the task's roofline floor on this device (a flag)."""
    floor_ms = roofline_floor_ms(flops, bytes_moved, device_name)
    if floor_ms is None:
        return []
    if floor_ms > 0 and kernel_ms < _ROOFLINE_SAFETY * floor_ms:
        bw, _fp32, tensor = device_peaks(device_name) or (0.0, 0.0, 0.0)
        return [Finding("impossible-speed",
                        f"{kernel_ms:.4g} ms is below {_ROOFLINE_SAFETY} x the roofline floor {floor_ms:.4g} ms on "
                        f"{device_name} ({bytes_moved or 0:.3g} B at {bw:.3g} B/s, {flops or 0:.3g} FLOP at {tensor:.3g} FLOP/s)",
                        "flag")]
    return []


def constant_output_findings(outputs: Sequence[Any]) -> list[Finding]:
    """degenerate-output: the kernel's outputs do not change across different inputs (a flag)."""
    tensors = [host_sample(t) for t in outputs if isinstance(t, torch.Tensor) and t.numel()]
    if len(tensors) < 2:
        return []
    first = tensors[0]
    if all(t.shape == first.shape and t.dtype == first.dtype and torch.equal(t, first) for t in tensors[1:]):
        return [Finding("degenerate-output", f"identical outputs for {len(tensors)} different input sets", "flag")]
    # A single-element output (a 0-d loss) is constant across its elements by construction.
    if first.is_floating_point() and all(t.numel() > 1 for t in tensors):
        for t in tensors:
            if not bool(torch.isfinite(t).all()):
                return []
            lo, hi = torch.aminmax(t)
            scale = max(abs(float(lo)), abs(float(hi)), 1e-30)
            if float(hi) - float(lo) > 1e-6 * scale:
                return []
        return [Finding("degenerate-output",
                        f"each of {len(tensors)} outputs is constant across its elements "
                        f"(relative spread <= 1e-6)", "flag")]
    return []


# --- library calls seen at run time ---------------------------------------------------------------
# Static analysis cannot see a method name computed at run time (`getattr(y, name)()`), eval'd
# strings or C-level indirection (functools.partial, operator.methodcaller). A TorchFunctionMode
# around one forward sees every torch function and Tensor method however it was reached; a call
# counts when kernel.py's code made it (the walk up from the op reaches kernel.py through code that
# only passes the call on; see _SELF_ACTING).
_GETFRAME = __import__("sys")._getframe
_NO_FUNCTION_MODES = torch._C.DisableTorchFunction
_METHOD_WRAPPER = types.MethodWrapperType
# Deep enough for any real stack: a limit is a place to hide (twelve nested nn.Sequential took an
# RMSNorm past the 30 frames the walk once gave up at, 2026-12-08).
_MAX_CALL_FRAMES = 2000


# What Python operators dispatch to: `a * b` reaches the mode as Tensor.mul, `2 - a` as
# Tensor.__rsub__, `a[i]` as __getitem__. One operator on a tensor is not a library call (offsets,
# masks, a scale), so operators are not named one by one; their total size is judged instead
# (scorer/judge/rulings/library_calls.py), which a decoy launch cannot hide.
_OPERATOR_METHODS = frozenset({
    "mul", "mul_", "add", "add_", "sub", "sub_", "rsub", "div", "div_", "true_divide", "true_divide_",
    "floor_divide", "floor_divide_", "remainder", "remainder_", "pow", "pow_", "neg", "abs", "eq", "ne",
    "lt", "le", "gt", "ge", "bitwise_and", "bitwise_and_", "bitwise_or", "bitwise_or_", "bitwise_xor",
    "bitwise_xor_", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "fmod", "positive",
})


_OPERATOR_DUNDERS = frozenset(
    f"__{prefix}{op}__" for op in ("add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "and",
                                    "or", "xor", "lshift", "rshift", "matmul") for prefix in ("", "r", "i")
) | {"__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"}
# Tensor methods that hand a tensor's data to code outside torch (numpy, a Python list, any DLPack
# consumer). What is computed there is out of every monitor's sight, so the floating-point
# elements handed over in forward count as library work: numpy's matmul of exported operands is
# the library's answer whatever name or operator reached it. Integer and boolean data stay glue.
HOST_EXPORTS = frozenset({"numpy", "__array__", "__dlpack__", "tolist"})
# Tensor methods the static rules leave to glue only because Python's containers share the name
# (`list.sort`); called on a tensor they are compute (a red-team top-k gating ran its selection
# through `logits.sort()` unseen, 2026-12-08).
_SHARED_NAME_COMPUTE = frozenset({"sort"})


# Glue calls that run code the function mode cannot see: inside their handler the mode is popped,
# and autograd's engine computes the graph's gradients and calls the hooks kernel.py registered. A
# red-team row sum ran as the gradient of an `expand`, and a softmax inside a gradient hook, both
# unseen (2026-12-08). Their ATen ops are judged at the dispatcher instead, each on its own rule (the
# dispatch mode is pushed for the call where it is not on already).
_RUNS_CALLBACKS = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)


def _is_operator(func: Any) -> bool:
    name = getattr(func, "__name__", None)
    return isinstance(name, str) and (name in _OPERATOR_METHODS or name in _OPERATOR_DUNDERS)


def _library_compute_name(func: Any, policy: Any) -> str | None:
    """The dotted name of a denied op (static rules and suite policy), or None for glue."""
    name = getattr(func, "__name__", None)
    qualname = str(getattr(func, "__qualname__", "") or "")
    module = str(getattr(func, "__module__", "") or "")
    tensor_method = qualname.startswith(("Tensor.", "TensorBase.", "_TensorBase.")) or module == "torch._tensor"
    if tensor_method and name in HOST_EXPORTS:
        return f"torch.Tensor.{name}"
    if not isinstance(name, str) or name.startswith("__") or name in _OPERATOR_METHODS:
        return None
    if tensor_method:
        full = f"torch.Tensor.{name}"
        verdict = static_rules._policy_verdict(full, policy) if policy is not None else None
        if verdict is not None:
            return full if verdict else None
        return full if name in static_rules._TENSOR_COMPUTE_METHODS or name in _SHARED_NAME_COMPUTE else None
    if not module.startswith("torch"):
        return None
    full = f"{module}.{name}" if module != "torch._C._VariableFunctions" else f"torch.{name}"
    return full if is_denied_name(full, policy) else None


_MODE_CLASS: list[type] = []


def _monitor_mode_class() -> type:
    """The TorchFunctionMode every monitor pushes (one class for all: a class per monitor would be
    made, and left to the cyclic collector, for each watched trial)."""
    if not _MODE_CLASS:
        class _Mode(TorchFunctionMode):
            def __init__(self, monitor: LibraryCallMonitor) -> None:
                super().__init__()
                self.monitor = monitor

            def __torch_function__(self, func, types, args=(), kwargs=None):
                return self.monitor._watch(func, args, kwargs)

        _MODE_CLASS.append(_Mode)
    return _MODE_CLASS[0]


class LibraryCallMonitor:
    """Records the library work kernel.py's code asked torch for while active (`with monitor:
    forward()`), and the work the solution's own Triton kernels did meanwhile (interpreted runs),
    in total and for each call it watched (one `with` block is one call); `observe` sends it to the
    judge, which judges each call's share on its own (scorer/judge/rulings/library_calls.py)."""

    def __init__(self, kernel_files: frozenset[str], policy: Any = None, native_kernels: bool = False,
                 watch_aten: bool = False) -> None:
        """`native_kernels`: the solution's kernels are C++/CUDA (load_inline), whose work the
        interpreter cannot count. `watch_aten`: count, through a dispatch mode around the call,
        the ATen ops that native code and the bodies of custom ops run (scorer/checks/aten_work.py);
        without it a custom op is glue, as any call the function mode judges whole."""
        self.kernel_files = kernel_files
        self.policy = policy
        self.calls: dict[str, int] = {}
        self.work: dict[str, int] = {}  # "torch.softmax (kernel.py:24)" -> element operations
        # Per watched call: (its library work by op, its own kernels' element operations).
        self.per_call: list[tuple[dict[str, int], int]] = []
        self._call_work: dict[str, int] = {}
        self._own_before = 0
        self.displaced = False  # set on exit: forward left the mode popped or buried
        self.lingering: dict[str, str] = {}  # mode class -> "before"/"after" the first call it was seen around
        self.own = InterpreterWork()
        self.native_kernels = native_kernels
        # What each torch function counts as, resolved once per function (the same for every call;
        # a timed or judge-clocked call should not pay for the lookup again). Keyed by identity,
        # the function kept alive beside its name, so no object's __hash__ or __eq__ is consulted.
        self._names: dict[Any, tuple[Any, str | None]] = {}
        self._aten_names: dict[int, tuple[Any, str | None]] = {}  # the same for ops at the dispatcher
        self._mode = _monitor_mode_class()(self)
        self.watch_aten = watch_aten
        self._aten = AtenMode(self)
        # Calls the function mode is running: ATen ops that arrive meanwhile are theirs, unless
        # kernel.py's code runs between (`_cover_frames`: the innermost call's frame of `_watch`).
        self._covered = 0
        self._cover_frames: list[Any] = []
        # kernel.py's line of the autograd call running (`_RUNS_CALLBACKS`): the line its ops count
        # at where the engine runs them in a thread of its own, with no frame of the kernel's.
        self._engine_line: int | None = None
        self._in_launch = False  # inside a launch window (scorer/checks/launch_window.py)

    def _counted_name(self, func: Any) -> str | None:
        # An attribute read (`x.shape`) arrives as a method-wrapper made for that one access: it is
        # cached by the descriptor it wraps, or every read would be resolved again (about 8 us each,
        # in every watched call).
        anchor = func.__self__ if type(func) is _METHOD_WRAPPER else func
        key = (id(anchor), getattr(func, "__name__", "")) if anchor is not func else id(func)
        entry = self._names.get(key)
        if entry is not None and entry[0] is anchor:
            return entry[1]
        # The solution's own custom op is glue as a call (on CPU its body is watched instead).
        name = None if solution_op(func) else _library_compute_name(func, self.policy)
        if name is None and _is_operator(func):
            name = func.__name__.strip("_")
        self._names[key] = (anchor, name)
        return name

    def _watch(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
        """One torch function call while active: run it, and count it if kernel.py asked for work."""
        key = None
        try:
            name = self._counted_name(func)
            if name is not None:
                # Three frames up: past this method and the mode's __torch_function__.
                line = _kernel_caller_line(self.kernel_files, depth=3)
                if line is not None:
                    key = f"{name} (kernel.py:{line})"
        except Exception:
            pass  # never let the monitor break the call it watches
        if self.watch_aten and solution_op(func):
            # Not one call: its body is watched at the dispatcher (scorer/checks/aten_work.py).
            return func(*args, **(kwargs or {}))
        if any(func is runner for runner in _RUNS_CALLBACKS):
            return self._run_engine(func, args, kwargs)
        self._covered += 1
        self._cover_frames.append(_GETFRAME(0))
        try:
            out = func(*args, **(kwargs or {}))
        finally:
            self._covered -= 1
            self._cover_frames.pop()
        if key is not None:
            self._record(key, args, kwargs, out)
        return out

    def _run_engine(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
        """An autograd call (`_RUNS_CALLBACKS`), uncovered, under the dispatch mode."""
        outer = self._engine_line
        try:
            self._engine_line = _kernel_caller_line(self.kernel_files, depth=4)
        except Exception:
            self._engine_line = None
        try:
            if self.watch_aten:
                return func(*args, **(kwargs or {}))
            with self._aten:
                return func(*args, **(kwargs or {}))
        finally:
            self._engine_line = outer

    def _record(self, key: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None, out: Any) -> None:
        try:
            cost = op_work(key.split(" ", 1)[0], args, kwargs, out)
            if cost:  # ops on integers and booleans only (index construction) are glue
                self.calls[key] = self.calls.get(key, 0) + 1
                self.work[key] = self.work.get(key, 0) + cost
                self._call_work[key] = self._call_work.get(key, 0) + cost
        except Exception:
            pass

    def _watch_aten(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One op at the dispatcher: counted when no call the function mode watches is running (it
        came from native code or a custom op's body), under its ATen name and its torch
        counterpart's glue rule."""
        if types and isinstance(func, torch._ops.OpOverload):
            # A tensor subclass's __torch_dispatch__ is Python code of the solution's, run for any op
            # on it: a one-element carrier's `neg` could hide a whole task inside. What it runs is
            # not the op's own (which was counted, or judged glue, where it was called).
            covered, self._covered = self._covered, 0
            try:
                return run_subclass_watched(self._aten, func, types, args, kwargs)
            finally:
                self._covered = covered
        inside = self._kernel_inside_cover() if self._covered and isinstance(func, torch._ops.OpOverload) else None
        if (self._covered and inside is None) or not isinstance(func, torch._ops.OpOverload):
            with _NO_FUNCTION_MODES():
                return func(*args, **kwargs)  # the watched call's own ops, or a higher-order op
        if solution_op(func):
            return run_kernel_watched(self._aten, func, args, kwargs)
        key = None
        try:
            name = self._aten_name(func)
            if name is not None:
                # Past this method, the mode's handler and torch's dispatch plumbing.
                line = inside or _kernel_caller_line(self.kernel_files, depth=3)
                if line is None and self._engine_line is not None \
                        and _kernel_line_below(self.kernel_files, _GETFRAME(1), None) is None:
                    # No frame of kernel.py's on this thread: the autograd engine's own (a CPU
                    # graph's engine runs on the caller's thread, which holds them).
                    line = self._engine_line
                if line is not None:
                    key = f"{name} (kernel.py:{line})"
        except Exception:
            pass
        # Below the function mode, which native code leaves active: it would count the op again.
        with _NO_FUNCTION_MODES():
            out = func(*args, **kwargs)
        if key is not None:
            self._record(key, args, kwargs, out)
        if self._in_launch and _copied_to_host(func, args, out):
            # A launch copies nothing to the host; what reaches it there is out of every monitor's
            # sight, as data handed to numpy is (the function mode is off in the window).
            self._record("torch.Tensor.numpy (inside a Triton launch)", args, kwargs, out)
        return out

    def _kernel_inside_cover(self) -> int | None:
        """kernel.py's line where its code runs inside the covered call (a tensor subclass's
        `__torch_function__`, a Python kernel registered for torch's op, a callback): its ops are
        its own requests, not the call's. None where only torch runs there."""
        return _kernel_line_below(self.kernel_files, _GETFRAME(2), self._cover_frames[-1] if self._cover_frames else None)

    def _aten_name(self, func: Any) -> str | None:
        entry = self._aten_names.get(id(func))
        if entry is not None and entry[0] is func:
            return entry[1]
        counterpart = torch_counterpart(func)
        counted = counterpart is COMPUTE or (counterpart is not None and self._counted_name(counterpart) is not None)
        name = f"aten.{func._opname}" if counted else None
        self._aten_names[id(func)] = (func, name)
        return name

    def __enter__(self) -> LibraryCallMonitor:
        self._call_work = {}
        self._own_before = self.own.elements
        self._note_lingering("before")
        if self.watch_aten:
            self._aten.__enter__()
        self._mode.__enter__()
        self.own.__enter__()
        launch_window.ACTIVE.append(self)
        return self

    def launch_window(self) -> _LaunchWindow:
        """Where a Triton launch runs without the function mode (scorer/checks/launch_window.py)."""
        return _LaunchWindow(self)

    def _note_lingering(self, when: str) -> None:
        """Modes active outside forward (scorer/checks/modes.py): kernel.py's code would run inside
        the scorer's own operations on inputs and outputs."""
        for name in lingering_modes((_monitor_mode_class(), type(self._aten))):
            if name not in self.lingering:
                self.lingering[name] = when

    def __exit__(self, *exc: Any) -> None:
        if launch_window.ACTIVE and launch_window.ACTIVE[-1] is self:
            launch_window.ACTIVE.pop()
        self.own.__exit__(*exc)
        self.per_call.append((self._call_work, self.own.elements - self._own_before))
        self._call_work = {}
        stack = _get_current_function_mode_stack()
        displaced = not stack or stack[-1] is not self._mode
        self.displaced = self.displaced or displaced  # one monitor may watch several calls
        if not displaced:
            self._mode.__exit__(*exc)
        if self.watch_aten:
            aten_displaced = top_dispatch_mode() is not self._aten
            self.displaced = self.displaced or aten_displaced
            if not aten_displaced:
                self._aten.__exit__(*exc)
        self._note_lingering("after")

    def observe(self, data_elements: int | Sequence[int] = 0, device_times_us: dict[str, float] | None = None,
                own_names: list[str] | None = None) -> dict[str, Any]:
        """What the monitor saw (replies.LibraryObservation), ruled in the judge
        (scorer/judge/rulings/library_calls.py): each watched call's library work by op and its own
        kernels' element operations, sent only for calls that asked the library for work (a batch of
        thousands of honest calls sends a count). `data_elements`: the task's largest input or
        output (one figure, or one per call). `device_times_us`: the profile of the one call
        watched (GPU), which splits it by device time."""
        return {"calls": len(self.per_call),
                "library_calls": [{"call": i, "library": dict(library), "own": own}
                                  for i, (library, own) in enumerate(self.per_call) if library],
                "own_counted": self.own.available, "native_kernels": self.native_kernels,
                "data_elements": data_elements if isinstance(data_elements, int) else [int(n) for n in data_elements],
                "device_times_us": device_times_us, "own_names": list(own_names or []),
                "displaced": self.displaced, "lingering": dict(self.lingering)}


_COPIES = frozenset({"_to_copy", "copy_", "copy", "_copy_from", "_copy_from_and_resize"})


def _copied_to_host(func: Any, args: tuple[Any, ...], out: Any) -> bool:
    """An ATen copy of floating-point data from a device to the host."""
    if func._opname not in _COPIES:
        return False
    dest = out if isinstance(out, torch.Tensor) else (args[0] if args and isinstance(args[0], torch.Tensor) else None)
    if dest is None or dest.device.type != "cpu" or not dest.is_floating_point():
        return False
    return any(isinstance(a, torch.Tensor) and a.device.type != "cpu" for a in args)


class _LaunchWindow:
    """Torch function modes off and the monitor's dispatch mode on, around one Triton launch. ATen
    ops arriving here are counted as native code's are: no function-mode call covers them."""

    __slots__ = ("monitor", "covered", "inside", "modes_off", "pushed")

    def __init__(self, monitor: LibraryCallMonitor) -> None:
        self.monitor = monitor

    def __enter__(self) -> None:
        monitor = self.monitor
        self.covered, monitor._covered = monitor._covered, 0
        self.inside, monitor._in_launch = monitor._in_launch, True
        self.modes_off = _NO_FUNCTION_MODES()
        self.modes_off.__enter__()
        self.pushed = not monitor.watch_aten  # with watch_aten it is on already
        if self.pushed:
            launch_window.push_dispatch_mode(monitor._aten)

    def __exit__(self, *exc: Any) -> None:
        monitor = self.monitor
        try:
            if self.pushed:
                if top_dispatch_mode() is monitor._aten:
                    launch_window.pop_dispatch_mode(monitor._aten, *exc)
                else:
                    monitor.displaced = True
        finally:
            self.modes_off.__exit__(*exc)
            monitor._covered, monitor._in_launch = self.covered, self.inside


# Code that acts for itself when it calls torch, so that an op it issues is not the kernel's even
# where kernel.py called it: Triton's interpreter (it runs the solution's own kernels) and its
# benchmarking (the autotuner's timings), torch's printing, Inductor's generated code and the
# profiler (the scorer's, on a GPU's first call). The rest of Triton passes calls on: a red-team
# row sum ran torch.einsum through `triton.constexpr_function` (2026-12-08). Any
# other code between a torch op and kernel.py only passes the kernel's request on, torch's own
# Python included: the op's wrapper (F.softmax), nn modules, the override and custom-op plumbing,
# dynamo's `disable` wrappers around torch's API (torch.utils.checkpoint has one), and every other
# torch package.
# Listing the torch packages that pass calls on, instead, left the rest as places to hide: red-team
# kernels ran a whole task through torch.distributions, torch.masked, torch.utils.checkpoint and
# torch.vmap unseen (2026-12-08), as earlier ones had through the task's own module and pytree.
_SELF_ACTING = ("/triton/runtime/interpreter.py", "/triton/testing.py", "/triton/runtime/autotuner.py",
                "/torch/_tensor_str.py", "/torch/_inductor/", "/torch/profiler/", "/torch/autograd/profiler")


def _kernel_caller_line(kernel_files: frozenset[str], depth: int) -> int | None:
    frame = _GETFRAME(depth)
    for _ in range(_MAX_CALL_FRAMES):
        if frame is None:
            return None
        filename = frame.f_code.co_filename
        if filename in kernel_files:
            return frame.f_lineno
        if not _passes_calls_on(filename):
            return None
        frame = frame.f_back
    return None


def _kernel_line_below(kernel_files: frozenset[str], frame: Any, stop: Any) -> int | None:
    """The line of the first frame of kernel.py's from `frame` up to `stop` (exclusive; None: the
    top of the thread's stack), whatever code lies between."""
    while frame is not None and frame is not stop:
        if frame.f_code.co_filename in kernel_files:
            return frame.f_lineno
        frame = frame.f_back
    return None


# Every watched torch call walks its caller frames (each timed call is watched): the answer for a
# file is the same each time, and at 500 ops a forward the uncached test cost ~6 us an op of host
# time, which a host-bound kernel's timing carried (an LSTM's kernel read 8.2 ms against do_bench's
# 3.1 on an H100).
_PASSES_ON: dict[str, bool] = {}


def _passes_calls_on(filename: str) -> bool:
    known = _PASSES_ON.get(filename)
    if known is None:
        known = not any(part in filename for part in _SELF_ACTING)
        if len(_PASSES_ON) < 100_000:
            _PASSES_ON[filename] = known
    return known
