"""What the kernel's worker may answer, as types the judge parses strictly.

The kernel's worker is the kernel's process: every byte it sends may be forged. So each reply is
read into a frozen dataclass whose every field is checked here (its keys exactly, its types, counts
the judge decided, finite non-negative numbers), and anything else is a `ReplyViolation`: the
judge's verdict `protocol-violation`, never a default that stands in for a missing or odd value.
The worker makes no findings: its in-process checks send what they observed (the launch census,
the output object, inputs changed by a kept repetition, the library's work, the runtime guard's
and the kernel's turns' observations), and the judge rules on them (scorer/judge/rulings/;
docs/SCORER.md, "Who establishes each fact"). A `findings` key is no key of any reply.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from scorer.gpu.timing import IDLE_CALIBRATION_REPS
from scorer.workers.protocol import ProtocolViolation

# Idle drains: a calibration's worth before the timed repetitions and after them, one after each.
IDLE_DRAINS_AROUND = 2 * IDLE_CALIBRATION_REPS
_ERROR_KINDS = frozenset({"compile_error", "runtime_error", "no_kernel", "protocol", "worker_error"})
_MAX_TEXT = 1 << 20
T = TypeVar("T")


class ReplyViolation(ProtocolViolation):
    """A reply of the kernel's worker that is not what the protocol allows."""


def _keys(header: dict[str, Any], required: set[str], optional: set[str], what: str) -> None:
    given = set(header)
    unknown, missing = sorted(given - required - optional), sorted(required - given)
    if unknown or missing:
        raise ReplyViolation(f"{what}: unknown keys {unknown}, missing keys {missing}")


def number(value: Any, what: str) -> float:
    """A finite, non-negative number (bools are not numbers here)."""
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise ReplyViolation(f"{what} must be a finite non-negative number, got {value!r}"[:300])
    return float(value)


def times(value: Any, count: int, what: str) -> list[float]:
    """Exactly `count` finite non-negative times."""
    if not isinstance(value, list) or len(value) != count:
        size = len(value) if isinstance(value, list) else type(value).__name__
        raise ReplyViolation(f"{what} must hold exactly {count} times, got {size}")
    return [number(v, what) for v in value]


def text(value: Any, what: str, limit: int = _MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ReplyViolation(f"{what} must be a string of at most {limit} characters")
    return value


def _flag(value: Any, what: str) -> bool:
    if type(value) is not bool:
        raise ReplyViolation(f"{what} must be true or false, got {value!r}"[:300])
    return value


def _strings(value: Any, what: str, limit: int = 4096) -> list[str]:
    if not isinstance(value, list):
        raise ReplyViolation(f"{what} must be a list of strings")
    return [text(v, what, limit) for v in value]


def _each(value: Any, parse: Callable[[Any], T], what: str, limit: int | None = None) -> list[T]:
    if not isinstance(value, list) or (limit is not None and len(value) > limit):
        raise ReplyViolation(f"{what} must be a list" + (f" of at most {limit}" if limit is not None else ""))
    return [parse(v) for v in value]


def _object(value: Any, keys: set[str], what: str) -> dict[str, Any]:
    """An object of exactly these keys."""
    if not isinstance(value, dict):
        raise ReplyViolation(f"{what} must be an object")
    _keys(value, keys, set(), what)
    return value


def _optional_count(value: Any, what: str) -> int | None:
    return None if value is None else _count(value, what)


def _indices(value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or any(type(i) is not int or i < 0 for i in value):
        raise ReplyViolation(f"{what} must be a list of indices")
    return list(value)


def _count(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ReplyViolation(f"{what} must be a non-negative integer, got {value!r}"[:300])
    return value


@dataclass(frozen=True)
class LaunchObservation:
    """The first call's launch census as the worker took it (scorer/checks/census.py): the
    solution's kernels and which of them launched. Ruled in the judge (rulings/launch_census.py)."""
    triton_defined: list[str]
    cuda_defined: list[str]
    triton_in_source: bool
    triton_launched: dict[str, int]
    device_kernels: list[str] | None  # the first call's profile (GPU); None where none ran

    @classmethod
    def parse(cls, value: Any) -> LaunchObservation:
        _object(value, {"triton_defined", "cuda_defined", "triton_in_source", "triton_launched", "device_kernels"},
                "the launch census")
        launched = value["triton_launched"]
        if not isinstance(launched, dict):
            raise ReplyViolation("the launch census's launches must map kernel names to counts")
        kernels = value["device_kernels"]
        return cls(_strings(value["triton_defined"], "triton_defined"), _strings(value["cuda_defined"], "cuda_defined"),
                   _flag(value["triton_in_source"], "triton_in_source"),
                   {text(k, "a launched kernel", 4096): _count(v, "a launch count") for k, v in launched.items()},
                   None if kernels is None else _strings(kernels, "device_kernels", _MAX_TEXT))


@dataclass(frozen=True)
class OutputItem:
    """One object forward returned, as far as it was read: facts past the first that disqualifies
    it (not a plain tensor, meta, fake, a null data pointer) are not read, and stay 0/false."""
    where: str
    type: str
    plain: bool
    device: str
    fake: bool
    numel: int
    null_data: bool
    storage_bytes: int
    needed_bytes: int

    @classmethod
    def parse(cls, value: Any) -> OutputItem:
        _object(value, {"where", "type", "plain", "device", "fake", "numel", "null_data", "storage_bytes", "needed_bytes"},
                "an output's facts")
        return cls(text(value["where"], "an output's place", 64), text(value["type"], "an output's type", 1000),
                   _flag(value["plain"], "plain"), text(value["device"], "an output's device", 64),
                   _flag(value["fake"], "fake"), _count(value["numel"], "numel"), _flag(value["null_data"], "null_data"),
                   _count(value["storage_bytes"], "storage_bytes"), _count(value["needed_bytes"], "needed_bytes"))


@dataclass(frozen=True)
class OutputObservation:
    """The raw object one call of forward returned (scorer/checks/dynamic.py, observe_output);
    `error`: reading it raised. Ruled in the judge (rulings/output_object.py)."""
    items: list[OutputItem]
    error: str | None

    @classmethod
    def parse(cls, value: Any) -> OutputObservation:
        _object(value, {"items", "error"}, "an output observation")
        error = None if value["error"] is None else text(value["error"], "an output observation's error", 1000)
        return cls(_each(value["items"], OutputItem.parse, "an output observation's items"), error)


@dataclass(frozen=True)
class KeptRepObservation:
    """A kept timed repetition: its output object, and the inputs that differ bitwise from the same
    seed drawn again (rulings/output_object.py, rulings/input_hashes.py)."""
    rep: int
    output: OutputObservation
    changed_inputs: list[int]

    @classmethod
    def parse(cls, value: Any) -> KeptRepObservation:
        _object(value, {"rep", "output", "changed_inputs"}, "a kept repetition's observation")
        return cls(_count(value["rep"], "a kept repetition"), OutputObservation.parse(value["output"]),
                   _indices(value["changed_inputs"], "a kept repetition's changed inputs"))


@dataclass(frozen=True)
class LibraryCall:
    """One watched call that asked the library for work: element operations by op, and those its
    own Triton kernels did (counted in the interpreter)."""
    call: int
    library: dict[str, int]
    own: int

    @classmethod
    def parse(cls, value: Any) -> LibraryCall:
        _object(value, {"call", "library", "own"}, "a watched call's library work")
        library = value["library"]
        if not isinstance(library, dict) or not library:
            raise ReplyViolation("a watched call's library work must map ops to element operations")
        return cls(_count(value["call"], "a watched call"),
                   {text(k, "a library op", 4096): _count(v, "library work") for k, v in library.items()},
                   _count(value["own"], "own work"))


@dataclass(frozen=True)
class LibraryObservation:
    """What the library-call monitor saw over the calls it watched (scorer/checks/dynamic.py,
    `observe`); ruled in the judge (rulings/library_calls.py) with the suite's threshold."""
    calls: int
    library_calls: list[LibraryCall]  # only the calls that asked the library for work
    own_counted: bool  # the interpreter counts the solution's own Triton work here
    native_kernels: bool  # the solution's kernels are C++/CUDA, whose work nothing counts
    data_elements: int | list[int]  # the task's largest tensor: one figure, or one per call
    device_times_us: dict[str, float] | None  # the one watched call's profile (GPU)
    own_names: list[str]  # the solution's kernels, as the profile names them
    displaced: bool  # the monitor's modes were popped or buried during forward
    lingering: dict[str, str]  # modes seen active outside forward -> "before"/"after" a call

    @classmethod
    def parse(cls, value: Any) -> LibraryObservation:
        _object(value, {"calls", "library_calls", "own_counted", "native_kernels", "data_elements", "device_times_us",
                        "own_names", "displaced", "lingering"}, "the library-call observation")
        calls = _count(value["calls"], "watched calls")
        library_calls = _each(value["library_calls"], LibraryCall.parse, "the watched calls' library work")
        indices = [c.call for c in library_calls]
        if indices != sorted(set(indices)) or any(i >= calls for i in indices):
            raise ReplyViolation(f"library work for calls {indices[:12]} of {calls} watched")
        data = value["data_elements"]
        elements = _count(data, "data_elements") if type(data) is int else _each(
            data, lambda n: _count(n, "data_elements"), "data_elements")
        times_us = value["device_times_us"]
        if times_us is not None and not isinstance(times_us, dict):
            raise ReplyViolation("the profile's device times must map kernels to microseconds")
        lingering = value["lingering"]
        if not isinstance(lingering, dict) or any(v not in ("before", "after") for v in lingering.values()):
            raise ReplyViolation("lingering modes must map a mode to 'before' or 'after'")
        return cls(calls, library_calls, _flag(value["own_counted"], "own_counted"),
                   _flag(value["native_kernels"], "native_kernels"), elements,
                   None if times_us is None else {text(k, "a device kernel", _MAX_TEXT): number(v, "device time")
                                                  for k, v in times_us.items()},
                   _strings(value["own_names"], "own_names"), _flag(value["displaced"], "displaced"),
                   {text(k, "a lingering mode", 1000): v for k, v in lingering.items()})


# Bounds on what the runtime guard and the kernel's turns may report in one reply: each watched
# object, audit event, thread and reading is sent once (scorer/checks/guard.py dedups), the guard
# watches about 1,400 objects and keeps 64 audit events, the turns note 5 calls.
_MAX_IDENTITY = 1 << 14
_MAX_AUDIT = 64
_MAX_THREADS = 1024
_MAX_READINGS = 64
_MAX_TURNS = 5
_PHASE = 64  # a phase's or step's name
_LABEL = 1000  # a watched object's label, an event's detail, what ran in the scorer's turn
_SHORT = 200  # the repr of an object, a thread's name


@dataclass(frozen=True)
class IdentityChange:
    """A watched object no longer the one bound before kernel.py was imported: an attribute (a
    callable or constant of the clock, torch or the scorer), a module-table entry of the scorer's,
    or the code of one of its functions."""
    kind: str  # "callable", "module-entry" or "code"
    label: str
    phase: str
    was: str
    now: str

    @classmethod
    def parse(cls, value: Any) -> IdentityChange:
        v = _object(value, {"kind", "label", "phase", "was", "now"}, "an identity change")
        if v["kind"] not in ("callable", "module-entry", "code"):
            raise ReplyViolation(f"an identity change of unknown kind {str(v['kind'])[:40]!r}")
        return cls(v["kind"], text(v["label"], "a watched label", _LABEL), text(v["phase"], "a phase", _PHASE),
                   text(v["was"], "what a watched object was", _SHORT), text(v["now"], "what it is now", _SHORT))


@dataclass(frozen=True)
class AuditEvent:
    """An audit event kernel.py's code raised (the guard's hook; its arguments as `detail`), at
    `line` of kernel.py, seen after `phase`."""
    event: str
    detail: str
    line: int
    phase: str

    @classmethod
    def parse(cls, value: Any) -> AuditEvent:
        v = _object(value, {"event", "detail", "line", "phase"}, "an audit event")
        return cls(text(v["event"], "an audit event's name", _SHORT), text(v["detail"], "an audit event's detail", _LABEL),
                   _count(v["line"], "an audit event's line"), text(v["phase"], "a phase", _PHASE))


@dataclass(frozen=True)
class ThreadStarted:
    """A thread alive after `phase` that was not at arm(): a Python thread the kernel's code
    started (`runs`: its target), or a native thread not of the runtime's (`runs`: the code on
    its stack)."""
    kind: str  # "python" or "native"
    name: str
    ident: int | None  # Python's thread ident (Python threads only)
    native_id: int | None
    runs: str
    phase: str

    @classmethod
    def parse(cls, value: Any) -> ThreadStarted:
        v = _object(value, {"kind", "name", "ident", "native_id", "runs", "phase"}, "a thread")
        if v["kind"] not in ("python", "native"):
            raise ReplyViolation(f"a thread of unknown kind {str(v['kind'])[:40]!r}")
        return cls(v["kind"], text(v["name"], "a thread's name", _SHORT), _optional_count(v["ident"], "a thread's ident"),
                   _optional_count(v["native_id"], "a thread's native id"), text(v["runs"], "a thread's code", _LABEL),
                   text(v["phase"], "a phase", _PHASE))


@dataclass(frozen=True)
class CarveOut:
    """The device's persisting-L2 carve-out after `phase` (cudaLimitPersistingL2CacheSize), beside
    what it was once the scorer asked for none, before the kernel loaded."""
    bytes: int
    settled_bytes: int
    phase: str

    @classmethod
    def parse(cls, value: Any) -> CarveOut:
        v = _object(value, {"bytes", "settled_bytes", "phase"}, "an L2 carve-out")
        return cls(_count(v["bytes"], "a carve-out"), _count(v["settled_bytes"], "the settled carve-out"),
                   text(v["phase"], "a phase", _PHASE))


@dataclass(frozen=True)
class PolicyWindow:
    """A stream's L2 access policy window after `phase`: its size and its hit property
    (cudaAccessProperty: 0 normal, 1 streaming, 2 persisting)."""
    stream: str  # "default stream" or "current stream"
    bytes: int
    hit_prop: int
    phase: str

    @classmethod
    def parse(cls, value: Any) -> PolicyWindow:
        v = _object(value, {"stream", "bytes", "hit_prop", "phase"}, "an access policy window")
        if v["stream"] not in ("default stream", "current stream"):
            raise ReplyViolation(f"an access policy window of an unknown stream {str(v['stream'])[:40]!r}")
        return cls(v["stream"], _count(v["bytes"], "a window's size"), _count(v["hit_prop"], "a window's hit property"),
                   text(v["phase"], "a phase", _PHASE))


@dataclass(frozen=True)
class GuardObservation:
    """What the runtime guard (scorer/checks/guard.py) saw since its last report, each thing once;
    ruled in the judge (rulings/runtime_guard.py)."""
    identity: list[IdentityChange]
    audit: list[AuditEvent]
    audit_dropped: int  # events past the 64 kept, reported once
    threads: list[ThreadStarted]
    process_name: str  # the process's name (its main thread's), which the runtime's own threads share
    threads_at_arm: int  # native threads when the guard was armed
    carve_outs: list[CarveOut]
    windows: list[PolicyWindow]

    @classmethod
    def parse(cls, value: Any) -> GuardObservation:
        v = _object(value, {"identity", "audit", "audit_dropped", "threads", "process_name", "threads_at_arm",
                            "carve_outs", "windows"}, "the guard's observation")
        return cls(_each(v["identity"], IdentityChange.parse, "identity changes", _MAX_IDENTITY),
                   _each(v["audit"], AuditEvent.parse, "audit events", _MAX_AUDIT),
                   _count(v["audit_dropped"], "dropped audit events"),
                   _each(v["threads"], ThreadStarted.parse, "threads", _MAX_THREADS),
                   text(v["process_name"], "the process's name", _SHORT), _count(v["threads_at_arm"], "threads at arm"),
                   _each(v["carve_outs"], CarveOut.parse, "L2 carve-outs", _MAX_READINGS),
                   _each(v["windows"], PolicyWindow.parse, "access policy windows", _MAX_READINGS))


@dataclass(frozen=True)
class TurnObservation:
    """Code of the kernel's that ran in one of the scorer's steps (scorer/checks/turns.py): `what`
    ran (a function and its place, a kernel-built C function), in `step`."""
    what: str
    step: str

    @classmethod
    def parse(cls, value: Any) -> TurnObservation:
        v = _object(value, {"what", "step"}, "a turn observation")
        return cls(text(v["what"], "what ran in the scorer's turn", _LABEL), text(v["step"], "a scorer's step", _PHASE))


def _turns(value: Any) -> list[TurnObservation]:
    return _each(value, TurnObservation.parse, "the turns' observations", _MAX_TURNS)


@dataclass(frozen=True)
class InProcess:
    """What the checks beside the kernel observed over one reply's step: the runtime guard's view
    (not on the judge-clocked batch), the kernel's turns, and the timing hold's label (the time reply's
    `gate`). The judge rules on it (registry.Evidence.observed)."""
    guard: GuardObservation | None
    turns: list[TurnObservation]
    gate: str | None = None


def _shared(value: Any, what: str) -> dict[str, Any] | None:
    """CUDA IPC descriptors, passed on as they came: the reference worker validates them."""
    if value is not None and not isinstance(value, dict):
        raise ReplyViolation(f"{what}: shared outputs must be an object")
    return value


@dataclass(frozen=True)
class ErrorReply:
    kind: str
    error: str

    @classmethod
    def parse(cls, header: dict[str, Any]) -> ErrorReply:
        _keys(header, {"ok", "kind", "error"}, {"worker_s", "gpu_lock_wait_s"}, "an error reply")
        if header["kind"] not in _ERROR_KINDS:
            raise ReplyViolation(f"an error reply of unknown kind {str(header['kind'])[:40]!r}")
        return cls(header["kind"], text(header["error"], "an error reply's text"))


def worker_seconds(header: dict[str, Any]) -> float | None:
    return number(header["worker_s"], "worker_s") if "worker_s" in header else None


@dataclass(frozen=True)
class Plain:
    """A reply that carries nothing but `ok` (ping, release)."""

    @classmethod
    def parse(cls, header: dict[str, Any]) -> Plain:
        _keys(header, {"ok"}, {"worker_s"}, "a reply")
        return cls()


@dataclass(frozen=True)
class SetupReply:
    timers: dict[str, Any]

    @classmethod
    def parse(cls, header: dict[str, Any]) -> SetupReply:
        # Sent before kernel.py is imported: what it holds was made by the scorer alone.
        _keys(header, {"ok", "timers"}, {"worker_s"}, "the setup reply")
        if not isinstance(header["timers"], dict):
            raise ReplyViolation("the setup reply's timers must be an object")
        return cls(header["timers"])


@dataclass(frozen=True)
class LoadReply:
    observed: InProcess

    @classmethod
    def parse(cls, header: dict[str, Any]) -> LoadReply:
        _keys(header, {"ok", "guard"}, {"worker_s"}, "the load reply")
        return cls(InProcess(GuardObservation.parse(header["guard"]), []))


@dataclass(frozen=True)
class CallMeta:
    """One correctness trial as the kernel's worker ran it (its outputs travel beside)."""
    trial: str
    devices: list[str]
    mutated: list[int]
    error: str | None
    output: OutputObservation | None  # None only where forward raised
    library: LibraryObservation | None  # exactly where the call has no error

    @classmethod
    def parse(cls, item: Any) -> CallMeta:
        if not isinstance(item, dict):
            raise ReplyViolation("a correctness call record must be an object")
        _keys(item, {"trial", "devices", "mutated", "error", "output", "library"}, set(),
              "a call record")
        error = None if item["error"] is None else text(item["error"], "a call record's error")
        if item["output"] is None and error is None:
            raise ReplyViolation("a call record with no error must observe forward's output")
        if (item["library"] is None) != (error is not None):
            raise ReplyViolation("a call record observes the library's work exactly where it has no error")
        output = None if item["output"] is None else OutputObservation.parse(item["output"])
        library = None if item["library"] is None else LibraryObservation.parse(item["library"])
        return cls(text(item["trial"], "a trial name", 200), _strings(item["devices"], "devices"),
                   _indices(item["mutated"], "a call record's mutated inputs"), error, output, library)

    def to_dict(self) -> dict[str, Any]:
        return {"trial": self.trial, "devices": self.devices, "mutated": self.mutated, "error": self.error}


@dataclass(frozen=True)
class CorrectnessReply:
    calls: list[CallMeta]
    input_digests: list[str]
    observed: InProcess
    gpu_lock_wait_s: float
    shared: dict[str, Any] | None
    launches: LaunchObservation

    @classmethod
    def parse(cls, header: dict[str, Any], trials: list[str]) -> CorrectnessReply:
        """`trials`: the trial names the judge's request implies, in order; exactly those."""
        _keys(header, {"ok", "calls", "input_digests", "guard", "turns", "gpu_lock_wait_s", "launches"},
              {"worker_s", "shared"}, "the correctness reply")
        calls = _each(header["calls"], CallMeta.parse, "the correctness reply's calls")
        if [c.trial for c in calls] != trials:
            raise ReplyViolation(f"the correctness reply names trials {[c.trial for c in calls][:12]}, "
                                 f"the judge asked for {trials}")
        digests = _strings(header["input_digests"], "input_digests")
        seeds = sum(1 for t in trials if t.startswith("seed-"))
        if len(digests) != seeds:
            raise ReplyViolation(f"the correctness reply has {len(digests)} input digests for {seeds} seeds")
        return cls(calls, digests, InProcess(GuardObservation.parse(header["guard"]), _turns(header["turns"])),
                   number(header["gpu_lock_wait_s"], "gpu_lock_wait_s"), _shared(header.get("shared"), "correctness"),
                   LaunchObservation.parse(header["launches"]))


def correctness_trials(seeds: int, alt_shapes: int) -> list[str]:
    """The trials a correctness request of `seeds` input sets and `alt_shapes` shapes asks for."""
    return ([f"seed-{i}" for i in range(seeds)] + ["repeat-0"] + (["refill-0-with-1"] if seeds > 1 else [])
            + [f"alt-{j}" for j in range(alt_shapes)])


@dataclass(frozen=True)
class TimeReply:
    timer: str
    times_ms: list[float]
    host_times_ms: list[float]
    event_times_ms: list[float] | None
    drain_ms: list[float] | None
    idle_drain_ms: list[float] | None
    gate: str
    gate_ms: list[float] | None
    launch_window: dict[str, int]
    observed: InProcess
    shared: dict[str, Any] | None
    kept: list[KeptRepObservation]
    library: LibraryObservation

    @classmethod
    def parse(cls, header: dict[str, Any], repetitions: int, on_gpu: bool, kept: list[int]) -> TimeReply:
        """Exactly `repetitions` of every per-repetition figure; event figures on a GPU only; an
        observation of exactly the `kept` repetitions, in order."""
        _keys(header, {"ok", "timer", "times_ms", "host_times_ms", "event_times_ms", "drain_ms", "idle_drain_ms",
                       "gate", "gate_ms", "launch_window", "guard", "turns", "kept", "library"}, {"worker_s", "shared"},
              "the timing reply")
        observed = _each(header["kept"], KeptRepObservation.parse, "the timing reply's kept observations")
        if [k.rep for k in observed] != kept:
            raise ReplyViolation(f"the timing reply observes repetitions {[k.rep for k in observed][:12]}, "
                                 f"the judge kept {kept}")
        event_keys = ("event_times_ms", "drain_ms", "idle_drain_ms", "gate_ms")
        if on_gpu:
            counts = dict(zip(event_keys, (repetitions, repetitions, repetitions + IDLE_DRAINS_AROUND, repetitions), strict=True))
            events: dict[str, list[float] | None] = {k: times(header[k], counts[k], k) for k in event_keys}
        else:
            if any(header[k] is not None for k in event_keys):
                raise ReplyViolation("the timing reply carries device-event figures on a CPU")
            events = dict.fromkeys(event_keys)
        window = header["launch_window"]
        if not isinstance(window, dict) or set(window) != {"open", "watched"}:
            raise ReplyViolation("the timing reply's launch_window must hold exactly 'open' and 'watched'")
        counts_seen = {k: int(number(v, f"launch_window.{k}")) for k, v in window.items() if type(v) is int}
        if len(counts_seen) != 2:
            raise ReplyViolation("the timing reply's launch_window counts must be integers")
        gate = text(header["gate"], "gate", 2000)
        return cls(text(header["timer"], "timer", 64), times(header["times_ms"], repetitions, "times_ms"),
                   times(header["host_times_ms"], repetitions, "host_times_ms"), events["event_times_ms"],
                   events["drain_ms"], events["idle_drain_ms"], gate, events["gate_ms"], counts_seen,
                   InProcess(GuardObservation.parse(header["guard"]), _turns(header["turns"]), gate),
                   _shared(header.get("shared"), "timing"), observed, LibraryObservation.parse(header["library"]))


@dataclass(frozen=True)
class BatchSetupReply:
    shared: dict[str, Any] | None

    @classmethod
    def parse(cls, header: dict[str, Any]) -> BatchSetupReply:
        _keys(header, {"ok"}, {"worker_s", "shared"}, "the batch set-up reply")
        return cls(_shared(header.get("shared"), "batch set-up"))


@dataclass(frozen=True)
class GateWaitReply:
    @classmethod
    def parse(cls, header: dict[str, Any]) -> GateWaitReply:
        _keys(header, {"ok"}, {"worker_s"}, "the device-timed batch's wait reply")
        return cls()


@dataclass(frozen=True)
class BatchReply:
    observed: InProcess
    library: LibraryObservation

    @classmethod
    def parse(cls, header: dict[str, Any]) -> BatchReply:
        _keys(header, {"ok", "turns", "library"}, {"worker_s"}, "the batch reply")
        return cls(InProcess(None, _turns(header["turns"])), LibraryObservation.parse(header["library"]))
