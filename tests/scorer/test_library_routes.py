"""Routes by which a kernel's forward can ask torch for work, each counted by the library-call
monitor (scorer/checks/dynamic.py) whichever torch Python sits between the op and kernel.py, and
whether the dispatch mode is on (CPU) or only pushed for autograd's engine (a GPU's timed calls).
The end-to-end attacks are in tests/hacks/attacks/baseline-library-call; this file plays kernel.py,
so each route is checked in a few milliseconds and on both monitor set-ups."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
import torch

from scorer.checks.dynamic import LibraryCallMonitor

KERNEL_FILES = frozenset({__file__})


def _library(forward: Callable[[], object], watch_aten: bool) -> dict[str, int]:
    """Op name -> counted work over one watched call of `forward`."""
    monitor = LibraryCallMonitor(KERNEL_FILES, watch_aten=watch_aten)
    with torch.no_grad(), monitor:
        forward()
    work, _own = monitor.per_call[-1]
    return {key.split(" ", 1)[0]: n for key, n in work.items()}


X = torch.randn(16, 32)


def _distributions() -> object:
    from torch.distributions import transforms

    return transforms.SigmoidTransform()(X) * X


def _masked() -> object:
    return torch.masked.sum(X, dim=1)


def _checkpointed() -> object:
    from torch.utils.checkpoint import checkpoint

    return checkpoint(torch.nn.functional.silu, X, use_reentrant=False)


def _engine_sum() -> object:
    with torch.enable_grad():
        v = torch.zeros(X.shape[0], 1, requires_grad=True)
        v.expand(*X.shape).backward(X)
    return v.grad


def _hooked_softmax() -> object:
    box: dict[str, torch.Tensor] = {}

    def hook(grad: torch.Tensor) -> torch.Tensor:
        box["y"] = torch.softmax(X, dim=-1)
        return grad

    with torch.enable_grad():
        leaf = torch.zeros(1, requires_grad=True)
        leaf.register_hook(hook)
        leaf.clone().backward(torch.ones(1))
    return box["y"]


def _autograd_grad_sum() -> object:
    with torch.enable_grad():
        v = torch.zeros(X.shape[0], 1, requires_grad=True)
        (grad,) = torch.autograd.grad(v.expand(*X.shape), v, X)
    return grad


@pytest.mark.parametrize("watch_aten", [True, False], ids=["dispatch-mode-on", "function-mode-only"])
@pytest.mark.parametrize(("route", "counted"), [
    (_distributions, "torch.sigmoid"),
    (_masked, "torch.sum"),
    (_checkpointed, "torch.nn.functional.silu"),
])
def test_work_through_torchs_own_python_is_the_kernels(route, counted, watch_aten) -> None:
    library = _library(route, watch_aten)
    assert library.get(counted, 0) >= X.numel(), library


@pytest.mark.parametrize("watch_aten", [True, False], ids=["dispatch-mode-on", "function-mode-only"])
@pytest.mark.parametrize(("route", "counted"), [
    (_engine_sum, "aten.sum"),
    (_autograd_grad_sum, "aten.sum"),
    (_hooked_softmax, "aten._softmax"),
])
def test_work_autograds_engine_does_inside_a_glue_call_is_counted(route, counted, watch_aten) -> None:
    library = _library(route, watch_aten)
    assert library.get(counted, 0) >= X.numel(), library


def test_a_tensor_sort_is_compute_though_lists_have_sort() -> None:
    assert _library(lambda: X.sort(dim=-1), watch_aten=True).get("torch.Tensor.sort", 0) >= X.numel()
    # Sorting integers (expert ids, offsets) stays glue, as any op on integers alone does.
    ids = torch.randint(0, 8, (64,))
    assert _library(lambda: ids.sort(), watch_aten=True) == {}


def test_glue_an_honest_forward_does_is_not_counted() -> None:
    """Printing a tensor (torch's formatter acts for itself), views, allocation and an autograd
    call on a graph of glue alone count nothing."""

    def forward() -> object:
        out = torch.empty_like(X)
        print(X[:2], file=io.StringIO())
        with torch.enable_grad():
            leaf = torch.zeros(4, requires_grad=True)
            leaf.view(2, 2).backward(torch.ones(2, 2))
        return out.view(-1).reshape(X.shape)

    assert _library(forward, watch_aten=True) == {}
    assert _library(forward, watch_aten=False) == {}


def _deep_stack() -> object:
    layer = torch.nn.RMSNorm(X.shape[-1])
    for _ in range(12):
        layer = torch.nn.Sequential(layer)
    return layer(X)


def test_a_deep_stack_of_torch_modules_does_not_hide_the_op() -> None:
    library = _library(_deep_stack, watch_aten=True)
    assert sum(n for name, n in library.items() if "rms_norm" in name) >= X.numel(), library


def test_a_python_callable_mapped_over_a_tensor_is_compute() -> None:
    import math

    y = X.clone()
    assert _library(lambda: y.map_(y, lambda a, _b: a / (1.0 + math.exp(-a))), watch_aten=True).get(
        "torch.Tensor.map_", 0) >= X.numel()


class _Carrier(torch.Tensor):
    """A subclass whose __torch_function__ runs inside torch's glue call (`clone`)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if func is torch.Tensor.clone:
            return torch.sigmoid(args[0].as_subclass(torch.Tensor)) * args[0].as_subclass(torch.Tensor)
        return out


def test_kernel_code_inside_a_covered_glue_call_is_the_kernels() -> None:
    carrier = X.as_subclass(_Carrier)
    library = _library(lambda: carrier.clone(), watch_aten=True)
    assert sum(library.values()) >= X.numel(), library


def test_a_matmul_chain_is_priced_as_its_products() -> None:
    from scorer.checks.work import op_work

    a, b, c = torch.randn(8, 16), torch.randn(16, 32), torch.randn(32, 4)
    out = torch.linalg.multi_dot([a, b, c])
    assert op_work("torch.linalg.multi_dot", ([a, b, c],), None, out) == 8 * 16 * 32 + 8 * 32 * 4


def test_torch_linalg_contractions_are_priced_as_contractions() -> None:
    a, b = torch.randn(48, 48), torch.randn(48, 48)
    for route in (lambda: torch.linalg.multi_dot([a, b]), lambda: torch.linalg.matmul(a, b)):
        assert sum(_library(route, watch_aten=True).values()) == 48 ** 3
