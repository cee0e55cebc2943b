"""The launch window (scorer/checks/launch_window.py): a Triton launch inside a watched call runs
without torch function modes when nothing of the solution's can run in it, and stays watched
otherwise. A stand-in for JITFunction does what Triton's `run` does with its arguments (reads each
tensor's `data_ptr` and `dtype`, calls a callable grid, runs pre-run hooks, calls its internals);
its code is compiled under a Triton-like file name, as the real one lives in Triton's package. This
test file plays kernel.py."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode

from scorer.checks import launch_window
from scorer.checks.dynamic import LibraryCallMonitor, _copied_to_host

KERNEL_FILES = frozenset({__file__})

_LEAF_SOURCE = '''
class Leaf:
    internals = None

    def __init__(self):
        self.pre_run_hooks = []

    def run(self, *args, grid, warmup, **kwargs):
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        for a in args:
            if hasattr(a, "data_ptr"):
                a.data_ptr()
                a.dtype
        if callable(grid):
            grid = grid(kwargs)
        if Leaf.internals is not None:
            Leaf.internals(*args)
        return grid
'''


def _leaf_class() -> type:
    scope: dict[str, Any] = {}
    exec(compile(_LEAF_SOURCE, "/site-packages/triton/runtime/jit_standin.py", "exec"), scope)
    leaf = scope["Leaf"]
    launch_window.wrap(leaf)
    return leaf


_COUNTING_SOURCE = '''
class Counting(TorchFunctionMode):
    """Below the monitor: sees each call the monitor's mode passes on, and nothing in the window."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))
'''


def _counting_class() -> type:
    # Compiled under a file name of its own: a mode of this file's (which plays kernel.py) below the
    # monitor would be kernel code running inside each watched call, and its ops the kernel's.
    scope: dict[str, Any] = {"TorchFunctionMode": TorchFunctionMode}
    exec(compile(_COUNTING_SOURCE, "/site-packages/observer/counting.py", "exec"), scope)
    return scope["Counting"]


Counting = _counting_class()


def _launch(leaf: type, *args: Any, grid: Any = (1,), hooks: list[Any] | None = None) -> tuple[LibraryCallMonitor, list[str]]:
    kernel = leaf()
    kernel.pre_run_hooks = list(hooks or [])
    monitor = LibraryCallMonitor(KERNEL_FILES)
    counting = Counting()
    with torch.no_grad(), counting, monitor:
        kernel.run(*args, grid=grid, warmup=False, BLOCK=128, num_warps=4)
    return monitor, counting.names


def _library_ops(monitor: LibraryCallMonitor) -> list[str]:
    return sorted(key.split(" ", 1)[0] for key in monitor.work)


def test_a_plain_launch_runs_without_the_function_mode() -> None:
    leaf = _leaf_class()
    tensors = [torch.randn(8, 8) for _ in range(4)] + [torch.nn.Parameter(torch.randn(4))]
    _, seen = _launch(leaf, *tensors, 8, 1.5, None, torch.float32)
    assert seen == []
    # the same launch with no monitor active: every argument read reaches the modes
    counting = Counting()
    with counting:
        leaf().run(*tensors, grid=(1,), warmup=False)
    assert counting.names.count("data_ptr") == 5


def test_library_work_in_a_callable_grid_is_counted() -> None:
    leaf = _leaf_class()
    a = torch.randn(64, 64)

    def grid(meta: Any) -> tuple[int]:
        torch.matmul(a, a)  # the solution's own code, run by the launch
        return (1,)

    monitor, _ = _launch(leaf, a, grid=grid)
    assert _library_ops(monitor) == ["torch.matmul"]


def test_an_argument_that_could_run_code_keeps_the_launch_watched() -> None:
    leaf = _leaf_class()
    a = torch.randn(64, 64)
    shadowed = torch.randn(4)
    shadowed.data_ptr = lambda: torch.matmul(a, a).data_ptr()  # type: ignore[method-assign]

    class Carrier(torch.Tensor):
        def data_ptr(self) -> int:  # type: ignore[override]
            return torch.matmul(a, a).data_ptr()

    class DuckTyped:
        dtype = torch.float32

        def data_ptr(self) -> int:
            return torch.matmul(a, a).data_ptr()

    for arg in (shadowed, torch.randn(4).as_subclass(Carrier), DuckTyped()):
        monitor, seen = _launch(leaf, a, arg)
        assert _library_ops(monitor) == ["torch.matmul"], type(arg)
        assert "data_ptr" in seen  # the launch ran under the modes


def test_a_pre_run_hook_keeps_the_launch_watched() -> None:
    leaf = _leaf_class()
    a = torch.randn(64, 64)
    monitor, seen = _launch(leaf, a, hooks=[lambda *args, **kwargs: torch.matmul(a, a)])
    assert _library_ops(monitor) == ["torch.matmul"] and "data_ptr" in seen


def test_library_work_reaching_the_dispatcher_inside_the_window_is_counted() -> None:
    """A Triton internal replaced by the solution's code runs in the window, with the function
    mode off: its ATen ops are counted at the dispatcher, as native code's are."""
    leaf = _leaf_class()
    a = torch.randn(64, 64)

    def internals(*args: Any) -> None:
        torch.matmul(a, a)
        torch.softmax(a, dim=-1)

    leaf.internals = staticmethod(internals)  # type: ignore[attr-defined]
    monitor, seen = _launch(leaf, a)
    assert seen == []  # in the window
    assert _library_ops(monitor) == ["aten.mm", "aten.softmax"] or _library_ops(monitor) == ["aten._softmax", "aten.mm"]
    assert not monitor.displaced


def test_the_window_leaves_the_monitor_as_it_found_it() -> None:
    leaf = _leaf_class()
    a = torch.randn(16, 16)
    monitor = LibraryCallMonitor(KERNEL_FILES)
    with monitor:
        leaf().run(a, grid=(1,), warmup=False)
        torch.matmul(a, a)  # after the launch the function mode watches again
    assert _library_ops(monitor) == ["torch.matmul"]
    assert launch_window.ACTIVE == [] and not monitor.displaced and monitor._covered == 0


def test_a_copy_from_a_device_to_the_host_is_told_apart() -> None:
    device_side = torch.empty(4, device="meta")
    host = torch.empty(4)
    to_copy = torch.ops.aten._to_copy.default
    assert _copied_to_host(to_copy, (device_side,), host)
    assert _copied_to_host(torch.ops.aten.copy_.default, (host, device_side), host)
    assert not _copied_to_host(to_copy, (host,), host.clone())  # host to host
    assert not _copied_to_host(to_copy, (device_side,), torch.empty(4, dtype=torch.int64))  # index data
    assert not _copied_to_host(torch.ops.aten.add.Tensor, (device_side, device_side), host)


@pytest.mark.parametrize("value, plain", [
    (3, True), (2.5, True), (None, True), ("x", True), (torch.float16, True), (torch.randn(2), True),
    (torch.nn.Parameter(torch.randn(2)), True), ([1, 2], False), (object(), False),
])
def test_plain_values(value: Any, plain: bool) -> None:
    rules = launch_window._Rules()
    assert rules.plain_call((value,), {}) is plain
    assert rules.plain_call((), {"value": value}) is plain


def test_a_triton_hook_keeps_launches_watched() -> None:
    knobs = pytest.importorskip("triton.knobs")
    chain = getattr(knobs.runtime, "launch_enter_hook", None)
    if chain is None or not hasattr(chain, "add"):
        pytest.skip("this Triton keeps no launch hook chain")
    rules, kernel = launch_window._Rules(), _leaf_class()()
    assert rules.no_hooks(kernel)

    def hook(*args: Any) -> None:
        pass

    chain.add(hook)
    try:
        assert not rules.no_hooks(kernel)
    finally:
        chain.remove(hook)
    kernel.pre_run_hooks.append(hook)
    assert not rules.no_hooks(kernel)


def test_a_cpu_scoring_reports_no_launch_in_the_window(demo) -> None:
    """On CPU Triton's interpreter runs the solution's kernels, under the modes: score.json says no
    launch took the window (the count a user reads on a GPU to see which path a timing took)."""
    from tests.scorer.conftest import score_file

    solution = demo.tasks["swish"].solution
    score = score_file(demo, "swish", solution)
    assert score.verdict == "passed", score.error
    assert score.timing is not None and score.timing.launch_window == {"open": 0, "watched": 0}


def test_the_judge_takes_the_launch_counts_only_in_their_expected_shape() -> None:
    import pytest

    from scorer.workers.protocol import ProtocolViolation
    from scorer.workers.replies import TimeReply
    from tests.scorer.test_in_process_rulings import NOTHING_SEEN

    def reply(window):
        return {"ok": True, "timer": "cpu/perf_counter", "times_ms": [1.0], "host_times_ms": [1.0],
                "event_times_ms": None, "drain_ms": None, "idle_drain_ms": None, "gate": "", "gate_ms": None,
                "launch_window": window, "guard": NOTHING_SEEN, "turns": [], "kept": [],
                "library": LibraryCallMonitor(frozenset()).observe()}

    assert TimeReply.parse(reply({"open": 3, "watched": 1}), 1, on_gpu=False, kept=[]).launch_window == {"open": 3, "watched": 1}
    for odd in ({"open": -1, "watched": 0}, {"open": 1, "watched": "x"}, {"open": 1, "watched": 0, "other": 5}, ["open"]):
        with pytest.raises(ProtocolViolation):
            TimeReply.parse(reply(odd), 1, on_gpu=False, kept=[])
