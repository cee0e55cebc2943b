"""Torch modes that kernel.py leaves active outside forward (scorer/checks/modes.py), and outputs
that are not dense tensors: both let a kernel act inside the scorer's own operations."""

from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from scorer.checks.dynamic import LibraryCallMonitor
from scorer.checks.modes import lingering_modes
from scorer.workers.device_share import ShareError
from scorer.workers.reference_role import _outputs_of


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


def test_a_mode_left_active_after_forward_is_a_finding_and_one_inside_forward_is_not() -> None:
    x = torch.randn(8)
    inside = LibraryCallMonitor(frozenset({__file__}))
    with inside:
        with _Later():
            torch.sigmoid(x)
    assert not any("outside forward" in f.evidence for f in inside.findings())

    mode = _Later()
    left = LibraryCallMonitor(frozenset({__file__}))
    try:
        with left:
            mode.__enter__()  # forward enters it and returns with it still on the stack
    finally:
        mode.__exit__(None, None, None)
    (found,) = [f for f in left.findings() if "outside forward" in f.evidence]
    assert found.pattern == "harness-introspection" and "_Later (after a call)" in found.evidence


def test_outputs_must_be_dense_tensors() -> None:
    dense = torch.randn(4, 4)
    assert _outputs_of(None, {"seed-0": [dense]}, torch.device("cpu"))["seed-0"][0] is dense
    with pytest.raises(ShareError, match="sparse_coo"):
        _outputs_of(None, {"seed-0": [dense.to_sparse()]}, torch.device("cpu"))
