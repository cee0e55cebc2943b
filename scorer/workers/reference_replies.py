"""What the reference worker answers, as frozen dataclasses the judge parses before it reads a field.

The reference worker runs only the task's code and ours, so a reply that does not parse is the
scorer's own failure (`ReplyViolation`, which the judge raises as ScorerBroken), never a default
standing in for a missing value. Each field's annotation is its check: numbers finite where they
are figures, lists of the annotated element, optional only where None is a meaning.
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, TypeVar

from scorer.workers.replies import ReplyViolation


class Reply(Protocol):
    """A reply class: a dataclass (what `dataclasses.fields` reads)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


T = TypeVar("T", bound=Reply)
_TRANSPORT = frozenset({"ok", "worker_s"})


def _check(value: Any, kind: Any, where: str) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _check(value, next(a for a in args if a is not type(None)), where)
    if origin is list:
        if not isinstance(value, list):
            raise ReplyViolation(f"{where} must be a list")
        return [_check(v, args[0], where) for v in value] if args else list(value)
    if origin is dict or kind is dict:
        if not isinstance(value, dict):
            raise ReplyViolation(f"{where} must be an object")
        return dict(value)
    if kind is float:
        if type(value) not in (int, float) or not math.isfinite(value):
            raise ReplyViolation(f"{where} must be a finite number, got {value!r}"[:200])
        return float(value)
    if kind is int or kind is bool or kind is str:
        if type(value) is not kind:
            raise ReplyViolation(f"{where} must be {kind.__name__}, got {type(value).__name__}")
        return value
    if kind is Any:
        return value
    raise TypeError(f"no reply check for {kind!r}")


def parse(cls: type[T], header: dict[str, Any]) -> T:
    """`cls` from a reply header: exactly its fields (fields with defaults may be left out)."""
    hints = typing.get_type_hints(cls)
    known = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is f.default_factory}
    given = set(header) - _TRANSPORT
    unknown, missing = sorted(given - known), sorted(required - given)
    if unknown or missing:
        raise ReplyViolation(f"{cls.__name__}: unknown keys {unknown}, missing keys {missing}")
    return cls(**{name: _check(header[name], hints[name], f"{cls.__name__}.{name}") for name in given})


@dataclass(frozen=True)
class EnvironmentReply:
    environment: dict[str, Any]


@dataclass(frozen=True)
class PrepareReply:
    environment: dict[str, Any]
    output_specs: list[list[Any]]
    alt_output_specs: list[list[list[Any]]]
    input_digests: list[str]
    seeds_used: int
    output_bytes: int
    free_bytes: int | None
    steps_s: dict[str, float]


@dataclass(frozen=True)
class CompareReply:
    outcome: dict[str, Any] | None = None
    unreadable: str | None = None
    steps_s: dict[str, float] | None = None


@dataclass(frozen=True)
class FindingsReply:
    """compare_timed and verify_batch: the findings of a comparison (dicts of a Finding)."""
    findings: list[dict[str, Any]]


@dataclass(frozen=True)
class TimeReply:
    timer: str
    times_ms: list[float]
    host_times_ms: list[float]
    continued_before: int
    continued: int


@dataclass(frozen=True)
class BatchReply:
    continued: int


@dataclass(frozen=True)
class SampleReply:
    """The kernel's batch rows read at the secret positions, or why they could not be."""
    error: str | None = None
    violation: str | None = None


@dataclass(frozen=True)
class GatePlanReply:
    """The calls the device-timed batch makes (0: none), and why none where the task's inputs
    cannot be slabbed (every non-tensor argument the same for every seed, every tensor one at the
    top level)."""
    calls: int
    why: str = ""


@dataclass(frozen=True)
class GateSetupReply:
    """What the kernel's worker shared does not fit the batch, if anything."""
    violation: str | None = None


@dataclass(frozen=True)
class GateReleaseReply:
    """How long the reference worker waited for its start event, copy and flag to run."""
    release_ms: float


@dataclass(frozen=True)
class Empty:
    """batch_collect, attach, ping."""
