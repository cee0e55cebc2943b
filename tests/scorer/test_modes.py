"""Torch modes that kernel.py leaves active outside forward (scorer/checks/modes.py), and outputs
that are not dense tensors: both let a kernel act inside the scorer's own operations."""

from __future__ import annotations

import json

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from scorer.checks.dynamic import LibraryCallMonitor
from scorer.checks.modes import lingering_modes
from scorer.judge.rulings.library_calls import library_findings
from scorer.workers.device_share import ShareError
from scorer.workers.reference_role import _outputs_of
from scorer.workers.replies import LibraryObservation


class _Later(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _Seen(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_modes_on_either_stack_are_named_and_set_default_device_is_not() -> None:
    assert lingering_modes() == []
    torch.set_default_device("cpu")
    try:
        assert lingering_modes() == []
    finally:
        torch.set_default_device(None)
    with _Later(), _Seen():
        assert lingering_modes() == [f"{__name__}._Later", f"{__name__}._Seen"]
    assert lingering_modes() == []


def _ruled(monitor: LibraryCallMonitor) -> list:
    """The monitor's observation, parsed and ruled on as the judge does."""
    return library_findings(LibraryObservation.parse(json.loads(json.dumps(monitor.observe()))), 0.5)


def test_a_mode_left_active_after_forward_is_a_finding_and_one_inside_forward_is_not() -> None:
    x = torch.randn(8)
    inside = LibraryCallMonitor(frozenset({__file__}))
    with inside:
        with _Later():
            torch.sigmoid(x)
    assert not any("outside forward" in f.evidence for f in _ruled(inside))

    mode = _Later()
    left = LibraryCallMonitor(frozenset({__file__}))
    try:
        with left:
            mode.__enter__()  # forward enters it and returns with it still on the stack
    finally:
        mode.__exit__(None, None, None)
    (found,) = [f for f in _ruled(left) if "outside forward" in f.evidence]
    assert found.pattern == "harness-introspection" and "_Later (after a call)" in found.evidence


def test_outputs_must_be_dense_tensors() -> None:
    dense = torch.randn(4, 4)
    assert _outputs_of(None, {"seed-0": [dense]}, torch.device("cpu"))["seed-0"][0] is dense
    with pytest.raises(ShareError, match="sparse_coo"):
        _outputs_of(None, {"seed-0": [dense.to_sparse()]}, torch.device("cpu"))


class _SparseClone(TorchDispatchMode):
    """sparse_output_copy's mode: the worker's clone of an output comes back sparse."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out.to_sparse() if "clone" in str(func) else out


def test_the_workers_own_reads_run_past_a_mode_kernel_py_left_active() -> None:
    from scorer.workers.kernel_role import _kept, _scorer_ops, _snapshot, _unchanged

    x = torch.arange(6.0)
    mode = _SparseClone()
    with mode:
        assert _kept(x).layout == torch.sparse_coo  # what the worker read on the H100: share() then failed
        with _scorer_ops():
            kept, before = _kept(x), _snapshot(x)
            assert kept.layout == torch.strided and torch.equal(kept, x)
            assert _unchanged(before, x)
        assert lingering_modes() != []  # still active, and still reported by the monitor
