"""Triton launches inside a watched call, without the torch function mode's cost per argument.

Every timed call runs under the library-call monitor's TorchFunctionMode, and torch hands a mode
every read of a tensor's metadata: Triton's binder and launcher read each tensor argument's
`data_ptr` and `dtype` on every launch. torch's own machinery costs about 1.5 us a read, whatever
the mode does (benchmarks/launch_overhead.py), so an LSTM solution's 128 launches a forward read
8.28 ms by the events on an H100 against do_bench's 3.0 without this window
(docs/results/2026-12-06-session21-h100-sweep-and-busy.md): the monitor's cost, not the kernel's,
and the same cost inflates the judge's batch, which runs under the monitor too.

A launch of a Triton kernel therefore runs with torch function modes off, in a *launch window*,
where nothing of the solution's can run:

- the launch is JITFunction's own (`type(self) is JITFunction`, not a subclass of the solution's);
- every argument is a plain value: an exact `torch.Tensor` or `nn.Parameter` with no instance
  attribute that shadows the Tensor API (a `data_ptr` set on the object would run in the window),
  or an int, float, bool, str, None, torch dtype, or a Triton dtype or constexpr;
- no hook Triton would call is set (the kernel's pre-run hooks, Triton's launch, cache and
  compile hooks);
- a callable grid is called with torch function modes on again, as any code of the solution's is.

Anything else launches as before, with the mode seeing every read. Inside the window the monitor's
dispatch mode (scorer/checks/aten_work.py) is active besides: any ATen op that still arrives there
is judged as the CPU monitor judges native code's ops, so the window cannot become a place where
library work goes unseen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import torch

try:
    import triton.language as tl
except ImportError:
    tl = None
try:
    from triton.runtime.jit import JITFunction
except ImportError:
    JITFunction = None
try:
    from triton.knobs import HookChain
except ImportError:  # a Triton older than its hook chains
    HookChain = None

_FUNCTION_MODES_ON = getattr(torch._C, "_EnableTorchFunction", None)  # None: a callable grid keeps the modes
_PLAIN_SCALARS = frozenset({int, float, bool, str, type(None), torch.dtype})
_PLAIN_TENSORS = frozenset({torch.Tensor, torch.nn.Parameter})
# Triton's hooks, wherever the installed version keeps them: (module path, object, attribute).
_HOOKS = (
    ("triton.knobs", "runtime", "launch_enter_hook"), ("triton.knobs", "runtime", "launch_exit_hook"),
    ("triton.knobs", "runtime", "jit_cache_hook"), ("triton.knobs", "runtime", "jit_post_compile_hook"),
    ("triton.knobs", "runtime", "add_stages_inspection_hook"),
    ("triton.compiler.compiler", "CompiledKernel", "launch_enter_hook"),
    ("triton.compiler.compiler", "CompiledKernel", "launch_exit_hook"),
    ("triton.runtime.jit", "JITFunction", "cache_hook"), ("triton.runtime.jit", "JITFunction", "compiled_hook"),
)

# The monitors watching a call now (innermost last), set by LibraryCallMonitor.__enter__/__exit__.
ACTIVE: list[Any] = []
# Launches while a monitor watched: [in the window, under the modes]. Read into score.json
# (timing.launch_window) as the kernel worker's report, so a user sees which path a timing took.
COUNTS = [0, 0]
_INSTALLED: dict[type, Callable[..., Any]] = {}


def _triton_plain_types() -> frozenset[type]:
    if tl is None:
        return frozenset()
    return frozenset(t for t in (getattr(tl, "dtype", None), getattr(tl, "constexpr", None)) if isinstance(t, type))


def _hook_holders() -> list[tuple[Any, str]]:
    holders = []
    for module_name, owner, attribute in _HOOKS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        holder = getattr(module, owner, None)
        if holder is not None and hasattr(holder, attribute):
            holders.append((holder, attribute))
    return holders


class _Rules:
    """What the window checks, resolved once: the plain types and where Triton keeps its hooks."""

    def __init__(self) -> None:
        self.plain = _PLAIN_SCALARS | _triton_plain_types()
        # Newer Triton keeps each launch hook as a chain, called on every launch, empty unless set.
        self.chain = HookChain
        self.chain_call = HookChain.__call__ if HookChain is not None else None
        self.hooks = _hook_holders()

    def plain_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        # Each value's test written out, not a helper called per value: this runs on every launch
        # of a launch-bound forward (129 a forward for the LSTM solution), where each Python call
        # is a share of what the window saves.
        plain, tensors = self.plain, _PLAIN_TENSORS
        for value in args:
            kind = type(value)
            if kind in plain:
                continue
            if kind not in tensors or _shadows_tensor_api(value):
                return False
        for key, value in kwargs.items():
            kind = type(value)
            if kind in plain:
                continue
            if key == "grid":
                if callable(value) and _FUNCTION_MODES_ON is None:
                    return False
                continue
            if kind not in tensors or _shadows_tensor_api(value):
                return False
        return True

    def no_hooks(self, kernel: Any) -> bool:
        if getattr(kernel, "pre_run_hooks", None):
            return False
        chain = self.chain
        if chain is not None and chain.__call__ is not self.chain_call:
            return False
        for holder, attribute in self.hooks:
            hook = getattr(holder, attribute, None)
            # An empty chain (Triton's default since its knobs) calls nothing.
            if hook is not None and (type(hook) is not chain or hook.calls):
                return False
        return True


def _shadows_tensor_api(tensor: Any) -> bool:
    """An instance attribute over a Tensor method or property (a `data_ptr` set on the object)."""
    attributes = tensor.__dict__
    return bool(attributes) and any(hasattr(torch.Tensor, name) for name in attributes)


def opens_for(rules: _Rules, kernel: Any, leaf: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether this launch may run in the window (module docstring)."""
    return type(kernel) is leaf and rules.plain_call(args, kwargs) and rules.no_hooks(kernel)


def _grid_with_modes(grid: Any) -> Any:
    if not callable(grid):
        return grid

    def called_with_modes(meta: Any) -> Any:
        assert _FUNCTION_MODES_ON is not None  # plain_call kept such a launch out of the window
        with _FUNCTION_MODES_ON():
            return grid(meta)
    return called_with_modes


def wrap(leaf: type) -> None:
    """Wraps `leaf.run` (the class whose `run` launches) once, at class level. Installed before
    kernel.py is imported (scorer/workers/kernel_role.py): the wrapped `run` is then Triton's own,
    and the rules live in this closure, out of the kernel's reach by name."""
    original = leaf.__dict__.get("run")
    if original is None or leaf in _INSTALLED:
        return
    _INSTALLED[leaf] = original
    rules = _Rules()

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not ACTIVE:
            return original(self, *args, **kwargs)
        if not opens_for(rules, self, leaf, args, kwargs):
            COUNTS[1] += 1
            return original(self, *args, **kwargs)
        COUNTS[0] += 1
        if "grid" in kwargs:
            kwargs["grid"] = _grid_with_modes(kwargs["grid"])
        with ACTIVE[-1].launch_window():
            return original(self, *args, **kwargs)

    run.__wrapped__ = original  # type: ignore[attr-defined]  # a function takes any attribute; the stubs declare none
    try:
        leaf.run = run  # type: ignore[attr-defined]  # Triton's launcher class, typed `type`: it has `run` (read above)
    except (AttributeError, TypeError):
        _INSTALLED.pop(leaf, None)


def install() -> None:
    """Wraps Triton's JITFunction (a GPU launch; the CPU interpreter's runs are counted by the
    monitor itself and stay under its modes)."""
    if JITFunction is None:
        return
    wrap(JITFunction)


def counts() -> tuple[int, int]:
    return COUNTS[0], COUNTS[1]


# The dispatch stack's own push and pop: TorchDispatchMode.__enter__/__exit__ cost 4-5 us a launch in
# Python (flags for torch.compile's tracing, which never runs in a scorer's worker); these ~1 us.
_PUSH = getattr(torch._C, "_push_on_torch_dispatch_stack", None)
_POP = getattr(torch._C, "_pop_torch_dispatch_stack", None)


def push_dispatch_mode(mode: Any) -> None:
    if _PUSH is None or getattr(mode, "_dispatch_key", None) is not None:
        mode.__enter__()
    else:
        _PUSH(mode)


def pop_dispatch_mode(mode: Any, *exc: Any) -> None:
    if _POP is None or getattr(mode, "_dispatch_key", None) is not None:
        mode.__exit__(*exc)
    else:
        _POP(None)
