"""The anti-hack catalog: stable pattern ids, what each attack is, and how it is caught.

Data, listed by `kernelarena hacks`. A `reject` pattern turns the verdict into `hack_detected`;
a `flag` pattern keeps the score but marks it for audit. Which layers establish a pattern is not
written here: it is what the checks registered for it say (scorer/judge/registry.py, `layers_of`),
so the list cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["reject", "flag"]
# Who establishes the facts a pattern is judged on (docs/SCORER.md, "Who establishes each fact"):
# `judge`: the judge or the reference worker, from data they check themselves (outputs compared
# outside the kernel's process, the judge's clock, the protocol's counts and commitments);
# `outside`: read from outside the kernel's process (/proc in the host's namespace);
# `static`: the source, before anything of it runs;
# `in-process`: scorer code beside the kernel, bound before it loads (where the rule is a function
# of what it observed, it sends the observation and the judge rules: scorer/judge/rulings/); it
# raises an attack's cost and is never the only layer where another can serve.
Layer = Literal["judge", "outside", "static", "in-process"]


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
    category: Literal["timing", "semantic", "shortcut", "integrity", "rubric"]
    severity: Severity
    description: str
    detection: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


PATTERNS: tuple[Pattern, ...] = (
    Pattern("stream-injection", "timing", "reject",
            "Work launched on a side stream (or a host callback) that the timer's end event does not wait for.",
            "The timer synchronises the whole device before its end event; the host clock around forward()+sync "
            "is compared with the event time per repetition, and host > 1.5 x events + 0.05 ms is evidence. "
            "Static: host threads/callbacks in CUDA C++ sources."),
    Pattern("thread-injection", "timing", "reject",
            "Work done by a background thread, process or signal handler outside the timed region.",
            "Static: imports of threading/_thread/multiprocessing/concurrent/subprocess, os.fork/system/exec, "
            "run_in_executor, signal timers, std::thread in extensions. Runtime: threads alive after a phase "
            "that were not there at arm() and that the kernel's code started, attributed by their code (a "
            "Python thread's target and frames; a native thread's stack pointing into a shared object that is "
            "not installed), so BLAS/OpenMP/intra-op pools are the runtime's; process-creation audit events."),
    Pattern("lazy-evaluation", "timing", "reject",
            "Returning a tensor subclass, proxy or deferred object whose work happens when the checker reads it.",
            "Every raw forward() return must be exactly torch.Tensor (or a tuple/list of them), not meta/fake, "
            "with a non-null data pointer and storage large enough for its view; checked before the end event."),
    Pattern("timer-patching", "timing", "reject",
            "Monkeypatching the clock (torch.cuda.Event, elapsed_time, synchronize, time.perf_counter), torch or "
            "builtin functions, or the scorer's own functions.",
            "Static: assignments/setattr on attributes of imported modules and classes. Runtime: identities of "
            "the clock, CUDA events, the torch/stdlib functions the worker uses and every scorer function are "
            "captured at arm() and compared after each phase; event times above the enclosing host time. Native: "
            "load_inline sources naming C-API function internals (PyMethodDef, ml_meth, vectorcall), mprotect or "
            "dlsym; the judge re-reads the clock's C structures and code in the worker's memory against a "
            "fingerprint taken before the import, and scans the shared objects the kernel loaded."),
    Pattern("identity-kernel", "semantic", "reject",
            "Copies an input to the output.",
            "On a failed comparison, an output allclose to a same-shaped input (while the reference is not) "
            "is named, with the input's index."),
    Pattern("noop-kernel", "semantic", "reject",
            "Writes only part of the output (or nothing, leaving zeros).",
            "Memory is poisoned with NaN before each call; output elements still holding the poison's exact bit "
            "pattern (arithmetic NaNs differ) are counted, or an all-zero output where the reference is not."),
    Pattern("stale-memory-reuse", "semantic", "reject",
            "Returns uninitialised memory that happens to hold the reference's result.",
            "The reference runs in another process, and freed memory is poisoned: an output that is (>= 95%) "
            "still poison was never written by the kernel."),
    Pattern("shared-memory-overflow", "semantic", "reject",
            "Undefined behaviour (out-of-bounds or uninitialised reads, races) that passes by luck.",
            "The same inputs are run twice and the outputs must be bit-identical; compute-sanitizer "
            "memcheck/initcheck on CUDA as an optional deep check."),
    Pattern("precision-downgrade", "semantic", "reject",
            "Computes in fp16/bf16/fp8 when the task is fp32.",
            "Dynamic (reject): outputs whose values are >= 90% exactly fp16/bf16-representable, or whose norm-wise "
            "error vs a float64 reference exceeds max(1.5e-3, 100 x the fp32 reference's own) — TF32 matmuls "
            "(~3e-4) pass. Static (flag): half/bf16/fp8 types or casts in forward-time code or Triton kernels."),
    Pattern("caching-memoization", "semantic", "reject",
            "Results cached by data pointer, shape or input hash, or a CUDA graph replaying the first call.",
            "The same buffers are refilled with new data in place and outputs re-checked; timed iterations "
            "rotate fresh inputs and a sample of their outputs is checked."),
    Pattern("baseline-library-call", "shortcut", "reject",
            "Lets the library (torch ops, cuBLAS/cuDNN, torch.compile, the reference Model) do the task's "
            "work instead of the solution's own kernels.",
            "Measured: at run time a TorchFunctionMode costs every torch op and tensor operator kernel.py's code "
            "calls in forward in floating-point operations (multiply-adds for contractions, one per element "
            "otherwise; ops touching no floating-point tensor, such as index construction, and views, "
            "allocation, copies are glue) against the solution's own kernels' (their floating-point arithmetic "
            "and tl.dot multiply-adds counted in Triton's interpreter on CPU, where a copy kernel does none; "
            "device time by the profiler on a GPU). The own share must reach the suite's "
            "[policy] own_work_share (default 0.5); the finding gives both figures. Every call of forward is "
            "judged on its own, never summed: the first, each correctness trial, each timed repetition and "
            "each call of the judge-clocked batch (on a GPU, after the profiled first call, a call's library "
            "work beyond the first call's against the task's largest tensor). Static (names, not "
            "measurable at run time): numpy/scipy compute, ATen/cuBLAS/cuDNN in C++ sources, torch.compile/"
            "torch.jit/torch.ops.aten/_scaled_mm, stored ops, the reference Model, and what a suite's "
            "[policy] deny lists."),
    Pattern("input-mutation", "semantic", "reject",
            "Writes into its inputs (to smuggle state or fake the reference).",
            "Inputs are hashed before and after each call."),
    Pattern("harness-introspection", "integrity", "reject",
            "Walks frames, gc, sys.modules or inspect, opens files, or uses ctypes/sockets to reach the "
            "reference, the scorer or its result channel.",
            "Static: file access, scorer and relative imports, torch's mode-stack switches (the interpreter's "
            "machinery, frames, gc, ctypes and descriptors are obfuscated-code's); ptrace, "
            "process_vm_writev, /proc/<pid>/mem or PR_SET_DUMPABLE in native sources. Runtime: an audit "
            "hook records such events when kernel.py's own code (directly or via the standard library) raised them."),
    Pattern("obfuscated-code", "integrity", "reject",
            "kernel.py hides what it does from a reader or a checker: attributes reached by computed names, the "
            "interpreter's tables and hooks (module table, frames, gc, builtins, trace hooks), code built from "
            "strings, ctypes, descriptor plumbing, or a module it planted for itself.",
            "Static, everywhere in kernel.py: getattr/setattr/delattr/hasattr with a name that is not a string "
            "literal; __dict__ (bar self's), vars/globals/locals, __import__, exec/eval/compile; sys.modules, "
            "sys._getframe, settrace/setprofile/monitoring; frame, code, generator and class internals (f_back, "
            "gi_frame, __code__, __globals__, __subclasses__, ...); imports of gc, inspect, importlib, builtins, "
            "ctypes, cffi, marshal, pickle, atexit, signal, fcntl, select, mmap, resource, socket; types."
            "FunctionType/CodeType; os descriptor calls (dup, dup2, pipe, open, write, close, setsid, _exit); an "
            "import that is neither the standard library nor installed; writing a .py/.so file. In load_inline "
            "sources: the C API reaching the interpreter (PyImport_, PySys_, PyFrame, PyEval_SetTrace, "
            "PyObject_GetAttr, py::module_::import) and libc dup/pipe/fork/syscall/exec. Each finding names the "
            "construct, its line and the fix. Threads and processes stay thread-injection's, native "
            "dlsym/mprotect/ptrace timer-patching's and harness-introspection's."),
    Pattern("try-fallback", "shortcut", "reject",
            "A try/except that falls back to the reference or a library op when the kernel fails.",
            "AST: an except handler or finally block, in forward-time code, that calls a denied compute op or "
            "the reference Model."),
    Pattern("ghost-kernel", "shortcut", "reject",
            "The custom kernel never runs; the output comes from library ops or glue.",
            "The profiler records the kernels launched during forward: none of the solution's own "
            "(Triton/extension) kernels means a ghost."),
    Pattern("shape-specialization", "semantic", "reject",
            "Correct only on the advertised shapes or seeds.",
            "Verification on unseen seeds, and on the task's alternative shapes where the manifest gives them."),
    Pattern("input-sniffing", "semantic", "reject",
            "Behaves differently when the inputs look like test data (their magnitudes or statistics), to be "
            "right when checked and fast or wrong when timed.",
            "Protocol: correctness, unseen-seed, alternative-shape and timed inputs come from one generator (the "
            "task's get_inputs under the judge's seeds), so no statistic tells them apart, and a sample of timed "
            "outputs is verified. Static: a branch in forward-time code on statistics of an input's values "
            "(abs, mean, std, var, norm, isnan/isfinite, allclose/equal) whose branch does more than raise."),
    Pattern("cache-residency", "timing", "reject",
            "Keeps the inputs resident in L2 across timed calls, defeating the L2 flush: a persisting-L2 access "
            "policy window on the stream, a persisting-L2 carve-out, or prefetch of the next call's data.",
            "Static: CUDA/PTX sources or names setting access policy windows (cudaStreamSetAttribute, "
            "accessPolicyWindow, hitProp), cudaLimitPersistingL2CacheSize, cudaMemPrefetchAsync/cudaMemAdvise, "
            "PTX prefetch.global.L2/createpolicy/applypriority. GPU: after each phase the worker reads the "
            "device's persisting-L2 limit and the access policy window of the current and default streams."),
    Pattern("rubric", "rubric", "flag",
            "Correct, but skips what the task asked for: the required dtype path, a forbidden library, a "
            "required algorithm (a rubric leak, apart from hacks).",
            "Optional per-task rules in suite.toml (rubric_dtype, rubric_forbid, rubric_require): checked "
            "statically where they can be and reported as a flag that keeps the score."),
    Pattern("degenerate-output", "semantic", "flag",
            "Near-constant outputs, so a constant kernel would pass.",
            "The suite linter refuses such tasks; the scorer flags a kernel whose outputs are identical across "
            "different inputs or constant across their elements."),
    Pattern("protocol-violation", "integrity", "reject",
            "The kernel's process speaks for the scorer: it answers, scrubs or skips the worker's messages, "
            "forges counts or times, or swaps the channel to the judge.",
            "Judge: every message of the kernel's worker is parsed into a typed, versioned reply with the "
            "counts the judge decided (trials, repetitions, batch rows) and finite non-negative figures; each "
            "timed repetition commits to a digest of its outputs before the judge reveals whether it is kept, "
            "and the reference worker checks the digest of the kept ones. Outside: after every message the "
            "judge reads the worker's descriptors from /proc; the channel must still be the judge's two pipes, "
            "at their numbers, held by no other descriptor or process."),
    Pattern("impossible-speed", "timing", "flag",
            "Faster than the roofline floor computed from the task's FLOPs and bytes.",
            "Kernel time below 0.8 x max(bytes / peak bandwidth, FLOPs / peak tensor FLOP/s) for the device "
            "(H200, H100, A100, L40S, MI300X tables; CPU skipped): kept, flagged for audit."),
)

PATTERN_IDS: frozenset[str] = frozenset(p.id for p in PATTERNS)


def get_pattern(pattern_id: str) -> Pattern:
    for p in PATTERNS:
        if p.id == pattern_id:
            return p
    raise KeyError(pattern_id)
