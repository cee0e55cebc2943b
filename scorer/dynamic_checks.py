"""Data-driven anti-hack checks the judge and worker call at fixed points (filled in by the
anti-hack catalog work; each returns evidence as `Finding`s, never raises for a bad kernel)."""

from __future__ import annotations

from typing import Any, Sequence

from scorer.catalog import Finding


def check_output_object(obj: Any) -> list[Finding]:
    """lazy-evaluation: called in the worker on forward()'s raw return value, before the end event."""
    return []


def explain_mismatch(output: Any, expected: Any, inputs: Sequence[Any]) -> list[Finding]:
    """identity-kernel / noop-kernel evidence for an output that failed the comparison."""
    return []


def precision_findings(output: Any, expected_fp64: Any, reference_output: Any, task_dtype: str | None) -> list[Finding]:
    """precision-downgrade: the kernel's error against float64 versus the reference's own."""
    return []


def timing_findings(event_times_ms: Sequence[float], host_times_ms: Sequence[float]) -> list[Finding]:
    """stream-injection / timer-patching: device-event times versus host-clock times per repetition."""
    return []


def roofline_findings(kernel_ms: float, flops: float | None, bytes_moved: float | None, device_name: str) -> list[Finding]:
    """impossible-speed: faster than the task's roofline floor on this device (a flag)."""
    return []


def constant_output_findings(outputs: Sequence[Any]) -> list[Finding]:
    """degenerate-output: the kernel's outputs do not change across different inputs (a flag)."""
    return []
