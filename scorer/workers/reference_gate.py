"""The reference worker's side of the device-timed batch (scorer/gpu/release_gate.py).

At set-up it opens what the kernel's worker shared (input slabs, output slabs, the flag words, the
interprocess event), checks their layout against the task's own inputs and the batch's outputs,
draws the batch's inputs from the fresh batch's secret seeds into its own memory, and times copying
that much into the slabs. At release it records its start event, copies the inputs in and writes
the flag; at finish it waits on its own stream for the kernel's event and records its end event.
Everything the kernel's process sent is checked here: a malformed part is a violation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from scorer.workers.device_share import ShareError, open_shared

_COPY_SAMPLES = 3
_EVENT_HANDLE_BYTES = 64  # cudaIpcEventHandle_t


@dataclass
class GateSide:
    inputs: list[torch.Tensor] = field(default_factory=list)  # the kernel's slabs, opened here
    staged: list[torch.Tensor] = field(default_factory=list)  # the batch's inputs, in our memory
    flag: torch.Tensor | None = None
    done: Any = None
    stream: Any = None
    start: Any = None


def _open(shared: Any, device: torch.device) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor, Any]:
    if not isinstance(shared, dict) or set(shared) != {"inputs", "slabs", "flag", "done"}:
        raise ShareError("the device-timed batch's shares must be exactly inputs, slabs, flag and done")
    try:
        handle = bytes.fromhex(str(shared["done"]))
    except ValueError:
        raise ShareError("the event handle is not hex") from None
    if len(handle) != _EVENT_HANDLE_BYTES:
        raise ShareError(f"the event handle has {len(handle)} bytes, not {_EVENT_HANDLE_BYTES}")
    flags = open_shared(shared["flag"], device)
    if len(flags) != 1 or flags[0].dtype != torch.int32 or tuple(flags[0].shape) != (2,):
        raise ShareError("the flag must be one tensor of two int32 words")
    try:
        index = device.index if device.index is not None else torch.cuda.current_device()
        done = torch.cuda.Event.from_ipc_handle(torch.device("cuda", index), handle)
    except RuntimeError as exc:
        raise ShareError(f"the event handle does not open: {exc}") from None
    return open_shared(shared["inputs"], device), open_shared(shared["slabs"], device), flags[0], done


def draw(calls: int, inputs_for: Callable[[int], list[Any]], warm: list[Any]) -> tuple[list[torch.Tensor], str]:
    """Each input tensor of the batch's calls stacked, or why the task's inputs cannot be slabbed:
    a tensor inside a container, or another argument that is not the same for every call."""
    rows: list[list[torch.Tensor]] = []
    for row in range(calls):
        args = inputs_for(row)
        if len(args) != len(warm):
            return [], "the task draws a different number of inputs for different seeds"
        for a, w in zip(args, warm, strict=True):
            if isinstance(a, (list, tuple, dict)) and _holds_tensor(a):
                return [], "an input holds tensors inside a container"
            if isinstance(a, torch.Tensor) != isinstance(w, torch.Tensor):
                return [], "an input is a tensor for some seeds only"
            if isinstance(a, torch.Tensor):
                if a.shape != w.shape or a.dtype != w.dtype or a.layout != torch.strided:
                    return [], "an input's shape or dtype differs between seeds"
            elif not _same(a, w):
                return [], "an argument that is not a tensor differs between seeds"
        rows.append([a for a in args if isinstance(a, torch.Tensor)])
    return [torch.stack([r[k] for r in rows]) for k in range(len(rows[0]))] if rows else [], ""


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an array's ambiguous truth, an object without equality: not the same
        return False


def _holds_tensor(value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, torch.Tensor) or (isinstance(v, (list, tuple, dict)) and _holds_tensor(v)) for v in items)


def setup(side: GateSide, shared: Any, device: torch.device) -> tuple[list[torch.Tensor], str]:
    """Opens the shares against the staged inputs; (the kernel's output slabs, a violation or "")."""
    staged = side.staged
    try:
        inputs, slabs, flag, done = _open(shared, device)
    except (ShareError, TypeError, KeyError, ValueError, IndexError, RuntimeError) as exc:
        return [], f"the device-timed batch's shares are malformed: {exc}"
    if len(inputs) != len(staged) or any(k.shape != s.shape or k.dtype != s.dtype or not k.is_contiguous()
                                         for k, s in zip(inputs, staged, strict=False)):
        return [], (f"the device-timed batch's input slabs ({[tuple(k.shape) for k in inputs]}) are not the task's "
                    f"inputs for the calls the judge asked ({[tuple(s.shape) for s in staged]})")
    side.inputs, side.flag, side.done = inputs, flag, done
    side.stream = torch.cuda.Stream(device)
    return slabs, ""


def copy_ms(side: GateSide) -> float:
    """The least time of copying as many bytes into the kernel's slabs (zeros: nothing revealed)."""
    zeros = [torch.zeros_like(s) for s in side.staged]
    best = float("inf")
    with torch.cuda.stream(side.stream):
        side.stream.wait_stream(torch.cuda.default_stream(side.staged[0].device if side.staged else None))
        for _ in range(_COPY_SAMPLES):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for slab, z in zip(side.inputs, zeros, strict=True):
                slab.copy_(z)
            b.record()
            b.synchronize()
            best = min(best, a.elapsed_time(b))
    return best


def release(side: GateSide, want: int) -> float:
    """Records the start event, copies the inputs in and writes the flag; the ms this worker waited
    for that to run on the device (the device switches to it from the kernel's spinning gate)."""
    assert side.flag is not None
    started = time.perf_counter()
    with torch.cuda.stream(side.stream):
        side.stream.wait_stream(torch.cuda.default_stream(side.flag.device))
        side.start = torch.cuda.Event(enable_timing=True)
        side.start.record()
        for slab, src in zip(side.inputs, side.staged, strict=True):
            slab.copy_(src)
        side.flag[0].fill_(int(want))
    side.stream.synchronize()
    return (time.perf_counter() - started) * 1e3


def finish(side: GateSide) -> float:
    """ms from the start event to the kernel's event having passed (on this worker's stream)."""
    assert side.start is not None
    with torch.cuda.stream(side.stream):
        side.stream.wait_event(side.done)
        end = torch.cuda.Event(enable_timing=True)
        end.record()
    end.synchronize()
    return float(side.start.elapsed_time(end))
