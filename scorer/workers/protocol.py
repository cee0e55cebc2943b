"""Frames between the judge and its workers: headers over dedicated pipe fds, payloads as files.

A frame on the pipe is ``>I`` (header length) and a UTF-8 JSON header. A payload (tensors, from
``torch.save``) travels as a file in the worker's spool folder, named by the judge: pipes moved
tensors at a few hundred MB/s with four copies on the way; a file is written once into the page
cache and read (or memory-mapped) once. The judge reads kernel-worker payloads only with
``torch.load(weights_only=True)`` (a pickle from the kernel's process could run code in the judge),
only under the name it chose, and only from a plain file with one link (not a symlink, FIFO or
hard link to a file of the judge's). Pipe reads and writes take a deadline so a worker that stops
reading or writing cannot hang the judge.
"""

from __future__ import annotations

import json
import os
import re
import select
import stat
import struct
import time
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import torch

from scorer.workers.commitment import is_digest

_PREFIX = struct.Struct(">I")
MAX_HEADER_BYTES = 16 << 20
MAX_PAYLOAD_BYTES = 64 << 30
PAYLOAD_KEY = "payload_file"
# Every frame in both directions carries the protocol's version: a frame of another version (a
# worker of another scorer, or bytes a kernel wrote into the channel) is a violation, not a guess.
VERSION_KEY = "v"
PROTOCOL_VERSION = 3
_CHUNK = 1 << 20
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ChannelClosed(Exception):
    """The other end closed its pipe (the worker died or exited)."""


class ChannelTimeout(Exception):
    """The deadline passed before a whole frame was read or written."""


class ProtocolViolation(Exception):
    """Bytes arrived that are not a valid frame (a kernel may have written into the channel)."""


@dataclass
class Frame:
    header: dict[str, Any]
    payload: Any = None


class Spool:
    """The folder one worker's payloads pass through, in both directions.

    The judge creates it before the worker starts and keeps a descriptor of it, so a kernel that
    renames the folder or swaps it for a link still cannot redirect the judge's reads.
    """

    def __init__(self, path: Path) -> None:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        self._dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def close(self) -> None:
        if self._dir_fd >= 0:
            os.close(self._dir_fd)
            self._dir_fd = -1

    def put(self, name: str, obj: Any) -> None:
        _check_name(name)
        tmp = self.path / f".{name}.partial"
        torch.save(obj, tmp)
        # A reader never sees half a file: it appears under its name only once complete.
        # (torch.save into a fixed name, not kernelarena.files: the scorer imports only torch,
        # triton and the standard library.)
        os.replace(tmp, self.path / name)

    def take(self, name: str, *, trusted: bool) -> Any:
        """Loads and removes one payload. `trusted` (the judge's own files, or the reference
        worker's) memory-maps it; anything else is read into private memory, so a writer that
        keeps the file open cannot change what was read."""
        _check_name(name)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=self._dir_fd)
        except OSError as exc:
            raise ProtocolViolation(f"payload {name} cannot be opened: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                raise ProtocolViolation(
                    f"payload {name} is not a plain file of its own (mode {info.st_mode:o}, links {info.st_nlink})")
            if info.st_size > MAX_PAYLOAD_BYTES:
                raise ProtocolViolation(f"payload {name} is too large ({info.st_size} B)")
            if trusted:
                # Nothing untrusted runs while a trusted payload is read, so the path may be used.
                obj = _load(str(self.path / name), mmap=True)
            else:
                with os.fdopen(os.dup(fd), "rb") as f:
                    obj = _load(f, mmap=False)
            os.unlink(name, dir_fd=self._dir_fd)
            return obj
        finally:
            os.close(fd)


def _check_name(name: str) -> None:
    if not _SAFE_NAME.match(name):
        raise ProtocolViolation(f"bad payload name {name!r}")


def _load(source: Any, *, mmap: bool) -> Any:
    try:
        return torch.load(source, weights_only=True, map_location="cpu", mmap=mmap)
    except Exception as exc:  # any unpickling refusal means the sender broke the protocol
        raise ProtocolViolation(f"unreadable payload: {type(exc).__name__}: {exc}"[:500]) from None


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise ChannelTimeout("deadline passed")
    return left


def _read_exact(fd: int, n: int, deadline: float | None) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            ready, _, _ = select.select([fd], [], [], _remaining(deadline))
            if not ready:
                continue
        k = os.readv(fd, [view[got:got + _CHUNK * 16]])
        if k == 0:
            raise ChannelClosed("channel closed")
        got += k
    return buf


def _write_all(fd: int, data: bytes | memoryview, deadline: float | None) -> None:
    view = memoryview(data)
    sent = 0
    while sent < len(view):
        if deadline is not None:
            _, ready, _ = select.select([], [fd], [], _remaining(deadline))
            if not ready:
                continue
        try:
            sent += os.write(fd, view[sent:sent + _CHUNK])
        except BlockingIOError:
            continue
        except BrokenPipeError:
            raise ChannelClosed("channel closed") from None


def send_frame(fd: int, header: dict[str, Any], payload: Any = None, deadline: float | None = None, *,
               spool: Spool | None = None, payload_name: str | None = None) -> None:
    """Sends `header`; a payload goes to `spool/payload_name` first and the header names it."""
    if payload is not None:
        if spool is None or payload_name is None:
            raise ValueError("a payload needs a spool and a name")
        spool.put(payload_name, payload)
        header = {**header, PAYLOAD_KEY: payload_name}
    header_bytes = json.dumps({**header, VERSION_KEY: PROTOCOL_VERSION}).encode("utf-8")
    _write_all(fd, _PREFIX.pack(len(header_bytes)) + header_bytes, deadline)


def recv_frame(fd: int, deadline: float | None = None, *, spool: Spool | None = None,
               expect_payload: str | None = None, trusted: bool = False) -> Frame:
    """Reads one frame. With `expect_payload`, the only payload accepted is the file of that name
    (the name the receiver asked for); without it, the header's own name is used (trusted senders)."""
    (header_len,) = _PREFIX.unpack(bytes(_read_exact(fd, _PREFIX.size, deadline)))
    if header_len > MAX_HEADER_BYTES:
        raise ProtocolViolation(f"frame header too large ({header_len} B)")
    raw = _read_exact(fd, header_len, deadline)
    try:
        # From an untrusted sender, NaN and Infinity are refused as they are read (the reference
        # worker's comparisons may report an unbounded error as Infinity).
        header = json.loads(raw.decode("utf-8"), parse_constant=None if trusted else _no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolViolation(f"bad frame header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolViolation("frame header is not a JSON object")
    if header.pop(VERSION_KEY, None) != PROTOCOL_VERSION:
        raise ProtocolViolation(f"frame of another protocol version (this judge speaks {PROTOCOL_VERSION})")
    named = header.pop(PAYLOAD_KEY, None)
    if named is None:
        return Frame(header)
    if spool is None:
        raise ProtocolViolation("a payload arrived where none can be read")
    if expect_payload is not None and named != expect_payload:
        raise ProtocolViolation(f"payload named {named!r}, expected {expect_payload!r}")
    return Frame(header, spool.take(expect_payload or str(named), trusted=trusted))


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON: a frame that carries them is refused as it is read."""
    raise ProtocolViolation(f"frame header holds {name}, which is not a JSON number")


def set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


# --- typed requests ------------------------------------------------------------------------------
# One class per operation, used by the judge to build a request and by the worker to read it: a key
# that one side renamed, forgot or added fails loudly on the other (`ProtocolViolation`), instead of
# a default silently taking its place. Values stay JSON (lists, dicts, numbers); the roles convert.

# Keys of the transport, not of the operation: the reply's file name and the payload's.
_TRANSPORT_KEYS = frozenset({"op", "reply_file", PAYLOAD_KEY})
R = TypeVar("R", bound="Request")


@dataclass(frozen=True)
class Request:
    op: ClassVar[str] = ""

    def header(self) -> dict[str, Any]:
        return {"op": self.op, **{f.name: getattr(self, f.name) for f in fields(self)}}

    @classmethod
    def parse(cls: type[R], header: dict[str, Any]) -> R:
        known = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        given = set(header) - _TRANSPORT_KEYS
        unknown, missing = sorted(given - known), sorted(required - given)
        if unknown or missing:
            raise ProtocolViolation(f"request {cls.op!r}: unknown keys {unknown}, missing keys {missing}")
        return cls(**{k: header[k] for k in given})


@dataclass(frozen=True)
class Ping(Request):
    op: ClassVar[str] = "ping"


@dataclass(frozen=True)
class Exit(Request):
    op: ClassVar[str] = "exit"


# The kernel worker's operations.
@dataclass(frozen=True)
class KernelSetup(Request):
    op: ClassVar[str] = "setup"
    task_path: str
    device: str
    overrides: dict[str, Any]
    alt_overrides: list[dict[str, Any]]
    init_seed: int
    policy: dict[str, Any] | None


@dataclass(frozen=True)
class KernelLoad(Request):
    op: ClassVar[str] = "load"
    kernel_path: str


@dataclass(frozen=True)
class KernelCorrectness(Request):
    op: ClassVar[str] = "correctness"
    output_specs: list[list[Any]]
    seeds: list[int]
    alt: list[dict[str, Any]]  # {"seed", "output_specs"} per alternative shape
    gpu_lock: str | None


@dataclass(frozen=True)
class KernelRelease(Request):
    op: ClassVar[str] = "release"


@dataclass(frozen=True)
class KernelTime(Request):
    """The timed repetitions' seeds and which outputs are kept are not in it: the worker asks for
    them one repetition at a time (`TimedStep`, answered by `TimedNext`), so no secret of a
    repetition is in the kernel's process before that repetition starts."""
    op: ClassVar[str] = "time"
    warmup: int
    repetitions: int
    flush_l2: bool
    warm_seed: int


STEP_KEY = "timed_step"


DIGEST_KEY = "digest"


@dataclass(frozen=True)
class TimedStep:
    """Within a `time` request, from the kernel's worker: repetition `done` has returned (-1:
    none yet), and the next one's seed is wanted. `digest` commits to that repetition's outputs
    (scorer/workers/commitment.py) before the judge's answer says whether they are kept."""
    done: int
    digest: str | None = None

    def header(self) -> dict[str, Any]:
        return {STEP_KEY: self.done, DIGEST_KEY: self.digest}

    @classmethod
    def parse(cls, header: dict[str, Any]) -> TimedStep:
        if set(header) != {STEP_KEY, DIGEST_KEY} or type(header[STEP_KEY]) is not int:
            raise ProtocolViolation(f"a timed step must carry an integer {STEP_KEY!r} and a {DIGEST_KEY!r}: "
                                    f"got keys {sorted(header)}")
        done, digest = header[STEP_KEY], header[DIGEST_KEY]
        committed = is_digest(digest)
        if (done >= 0) != committed or (done < 0 and digest is not None):
            owed = "commit to its outputs with a sha256 digest" if done >= 0 else "carry no digest"
            raise ProtocolViolation(f"timed step {done} must {owed}")
        return cls(done, digest)


@dataclass(frozen=True)
class TimedNext(Request):
    """The judge's answer to a `TimedStep`: whether the output of the repetition just done is kept
    for the reference worker to check, and the next repetition's seed (None after the last)."""
    op: ClassVar[str] = "timed_next"
    keep: bool
    seed: int | None


@dataclass(frozen=True)
class KernelBatchSetup(Request):
    op: ClassVar[str] = "batch_setup"
    calls: int
    warm_seed: int
    output_specs: list[list[Any]]


@dataclass(frozen=True)
class KernelBatch(Request):
    op: ClassVar[str] = "batch"
    seeds: list[int]


@dataclass(frozen=True)
class KernelGateSetup(Request):
    """The device-timed batch's slabs (scorer/gpu/release_gate.py): `calls` rows of each input
    tensor and each output, and the flag words, shared by CUDA IPC."""
    op: ClassVar[str] = "gate_setup"
    calls: int
    warm_seed: int
    output_specs: list[list[Any]]


@dataclass(frozen=True)
class KernelGateEnqueue(Request):
    op: ClassVar[str] = "gate_enqueue"
    want: int


@dataclass(frozen=True)
class KernelGateWait(Request):
    """Waits for the device-timed batch's calls to finish, then replies."""
    op: ClassVar[str] = "gate_wait"


# The reference worker's operations.
@dataclass(frozen=True)
class ReferenceEnvironment(Request):
    op: ClassVar[str] = "environment"
    device: str


@dataclass(frozen=True)
class ReferencePrepare(Request):
    op: ClassVar[str] = "prepare"
    task_path: str
    device: str
    overrides: dict[str, Any]
    init_seed: int
    seeds: list[int]
    alt_shapes: list[dict[str, Any]]  # {"overrides", "seed"}
    fp64: bool
    rule: dict[str, Any]  # rtol, atol, exact, deterministic
    task: dict[str, Any]  # dtype, category
    gpu_lock: str | None


@dataclass(frozen=True)
class ReferenceCompare(Request):
    op: ClassVar[str] = "compare"
    calls: list[dict[str, Any]]
    alt_shapes: list[dict[str, Any]]
    gpu_lock: str | None
    shared: dict[str, Any] | None = None  # CUDA IPC descriptors; on CPU the outputs are the payload


@dataclass(frozen=True)
class ReferenceTime(Request):
    op: ClassVar[str] = "time"
    warmup: int
    repetitions: int
    flush_l2: bool
    rep_seeds: list[int]
    keep_reps: list[int]
    baseline: str


@dataclass(frozen=True)
class ReferenceCompareTimed(Request):
    op: ClassVar[str] = "compare_timed"
    committed: dict[str, str]  # "rep-k": the digest the kernel's worker sent before rep k was kept
    shared: dict[str, Any] | None = None


@dataclass(frozen=True)
class ReferenceBatchSetup(Request):
    op: ClassVar[str] = "batch_setup"
    calls: int
    seeds: list[int]


@dataclass(frozen=True)
class ReferenceBatch(Request):
    op: ClassVar[str] = "batch"
    mode: str  # "forward": the baseline's batch; "regen": drawing inputs and copying outputs alone


@dataclass(frozen=True)
class ReferenceBatchCollect(Request):
    op: ClassVar[str] = "batch_collect"
    positions_seed: int
    challenge: list[int]


@dataclass(frozen=True)
class ReferenceAttach(Request):
    op: ClassVar[str] = "attach"
    shared: dict[str, Any] | None = None


@dataclass(frozen=True)
class ReferenceSample(Request):
    op: ClassVar[str] = "sample"
    calls: int  # the rows the judge asked of the kernel's batch: exactly these must have come back


@dataclass(frozen=True)
class ReferenceVerifyBatch(Request):
    op: ClassVar[str] = "verify_batch"


@dataclass(frozen=True)
class ReferenceGatePlan(Request):
    """Draws the device-timed batch's inputs (the fresh batch's first seeds, as many calls as fit
    the device's memory, at most `calls`) into the reference worker's own memory, or says why the
    task's inputs cannot be slabbed."""
    op: ClassVar[str] = "gate_plan"
    calls: int
    warm_seed: int


@dataclass(frozen=True)
class ReferenceGateSetup(Request):
    """Opens the kernel's device-timed batch slabs and checks them against the staged inputs."""
    op: ClassVar[str] = "gate_setup"
    shared: dict[str, Any] | None = None


@dataclass(frozen=True)
class ReferenceGateRelease(Request):
    op: ClassVar[str] = "gate_release"
    want: int



def _by_op(*classes: type[Request]) -> dict[str, type[Request]]:
    return {cls.op: cls for cls in classes}


KERNEL_REQUESTS = _by_op(Ping, Exit, KernelSetup, KernelLoad, KernelCorrectness, KernelRelease, KernelTime,
                         KernelBatchSetup, KernelBatch, KernelGateSetup, KernelGateEnqueue, KernelGateWait)
REFERENCE_REQUESTS = _by_op(Ping, Exit, ReferenceEnvironment, ReferencePrepare, ReferenceCompare, ReferenceTime,
                            ReferenceCompareTimed, ReferenceBatchSetup, ReferenceBatch, ReferenceBatchCollect,
                            ReferenceAttach, ReferenceSample, ReferenceVerifyBatch, ReferenceGatePlan, ReferenceGateSetup,
                            ReferenceGateRelease)


def parse_request(header: dict[str, Any], requests: dict[str, type[Request]]) -> Request:
    """The typed request a header carries; an unknown op or a key off the op's list is a
    ProtocolViolation."""
    cls = requests.get(str(header.get("op")))
    if cls is None:
        raise ProtocolViolation(f"unknown op {header.get('op')!r}")
    return cls.parse(header)
