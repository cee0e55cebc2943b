"""The anti-hack catalog: stable pattern ids, what each attack is, and how it is caught.

Data, listed by `kernelarena hacks`. A `reject` pattern turns the verdict into `hack_detected`;
a `flag` pattern keeps the score but marks it for audit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["reject", "flag"]


@dataclass(frozen=True)
class Finding:
    """One piece of evidence that a kernel matches a pattern."""

    pattern: str
    evidence: str
    severity: Severity = "reject"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Pattern:
    id: str
    category: Literal["timing", "semantic", "shortcut", "integrity"]
    severity: Severity
    checks: tuple[Literal["static", "dynamic"], ...]
    description: str
    detection: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


PATTERNS: tuple[Pattern, ...] = (
    Pattern("stream-injection", "timing", "reject", ("static", "dynamic"),
            "Work launched on a side stream that the timer's end event does not wait for.",
            "Device-wide synchronize before every end event; a host clock around a full sync is compared with the event times and a large disagreement is evidence."),
    Pattern("thread-injection", "timing", "reject", ("static", "dynamic"),
            "Work done by a background thread or process outside the timed region.",
            "Static ban of threading/multiprocessing/concurrent.futures/_thread; live thread count before and after each phase."),
    Pattern("lazy-evaluation", "timing", "reject", ("dynamic",),
            "Returning a tensor subclass or deferred object whose work happens when the checker reads it.",
            "Outputs must be exact torch.Tensor instances with real storage and a non-null data pointer, materialised before the end event."),
    Pattern("timer-patching", "timing", "reject", ("static", "dynamic"),
            "Replacing torch.cuda.Event, elapsed_time, synchronize, time.perf_counter or the scorer's own functions.",
            "Originals captured before the kernel loads and compared by identity after every phase; baseline timed in a process the kernel never enters."),
    Pattern("identity-kernel", "semantic", "reject", ("dynamic",),
            "Copies an input to the output.",
            "Fresh random inputs each check; a wrong output equal to one of the inputs is named as such."),
    Pattern("noop-kernel", "semantic", "reject", ("dynamic",),
            "Writes nothing or only part of the output.",
            "Allocator memory is poisoned with NaN before each run; outputs still holding the poison are named."),
    Pattern("stale-memory-reuse", "semantic", "reject", ("dynamic",),
            "Returns uninitialised memory that happens to hold the reference's result.",
            "The reference is computed in another process; the kernel's process never holds a reference output, and freed memory is poisoned between runs."),
    Pattern("shared-memory-overflow", "semantic", "reject", ("dynamic",),
            "Undefined behaviour (out-of-bounds or uninitialised reads) that passes by luck.",
            "The same inputs are run twice and the outputs must be bit-identical; compute-sanitizer memcheck/initcheck on CUDA as an optional deep check."),
    Pattern("precision-downgrade", "semantic", "reject", ("static", "dynamic"),
            "Computes in fp16/bf16/fp8 when the task is fp32.",
            "Error against a float64 reference on heavy-tailed inputs, judged against the error float32 itself makes; static flag for downcasts."),
    Pattern("caching-memoization", "semantic", "reject", ("dynamic",),
            "Results cached by data pointer, shape or input hash, or a CUDA graph replaying the first call.",
            "The same buffers are refilled with new data in place and outputs re-checked; timed iterations rotate fresh inputs and a sample of their outputs is checked."),
    Pattern("baseline-library-call", "shortcut", "reject", ("static",),
            "Calls torch.matmul, F.conv2d, cuBLAS/cuDNN, torch._scaled_mm or the reference Model instead of writing a kernel.",
            "AST analysis of the solution: an allow-list of glue (allocation, views, launches) and a deny-list of compute ops, configurable per suite."),
    Pattern("input-mutation", "semantic", "reject", ("dynamic",),
            "Writes into its inputs (to smuggle state or fake the reference).",
            "Inputs are hashed before and after each call."),
    Pattern("harness-introspection", "integrity", "reject", ("static", "dynamic"),
            "Walks frames, gc, sys.modules or inspect to reach the reference, the scorer or its result channel.",
            "Static scan for frame/gc/inspect/ctypes/file-descriptor access; an audit hook records such events raised from the kernel's own code."),
    Pattern("try-fallback", "shortcut", "reject", ("static",),
            "A try/except that falls back to the reference or a library op when the kernel fails.",
            "AST: an except handler whose body calls a denied compute op or the reference Model."),
    Pattern("ghost-kernel", "shortcut", "reject", ("dynamic",),
            "The custom kernel never runs; the output comes from library ops or glue.",
            "The profiler records the kernels launched during forward: none of the solution's own (Triton/extension) kernels means a ghost."),
    Pattern("shape-specialization", "semantic", "reject", ("dynamic",),
            "Correct only on the advertised shapes or seeds.",
            "Verification on unseen seeds, and on the task's alternative shapes where the manifest gives them."),
    Pattern("degenerate-output", "semantic", "flag", ("dynamic",),
            "Near-constant outputs, so a constant kernel would pass.",
            "The suite linter refuses such tasks; the scorer flags a kernel whose output is constant across different inputs."),
    Pattern("impossible-speed", "timing", "flag", ("dynamic",),
            "Faster than the roofline floor computed from the task's FLOPs and bytes.",
            "Kernel time below the floor from peak bandwidth and FLOP rate: kept, flagged for audit."),
)

PATTERN_IDS: frozenset[str] = frozenset(p.id for p in PATTERNS)


def get_pattern(pattern_id: str) -> Pattern:
    for p in PATTERNS:
        if p.id == pattern_id:
            return p
    raise KeyError(pattern_id)
