"""Torch modes left active outside forward.

A TorchDispatchMode or TorchFunctionMode that kernel.py pushes and leaves on the stack sees every
torch operation its process runs afterwards, the scorer's own included: the worker's copy of a
kept output, the batch's copy into its slab, the cache flush, the poisoning. A red-team kernel
returned an empty tensor from forward and computed it inside the worker's later `clone`/`copy_`
(outside the timer and every watched call), and made the flush's `fill_` do nothing: it passed at
2x with no work of its own in the timed region.

Between two calls the harness runs no mode of its own, so any mode on either stack there is the
kernel's, with one exception: `torch.set_default_device` (torch's own DeviceContext) is a style,
not an interception of anything the scorer does (it passes explicit devices). The stacks are read
through torch's C functions, taken when this module is imported (before kernel.py is), and the
guard checks that these names still hold them (scorer/checks/guard.py).
"""

from __future__ import annotations

import torch

DeviceContext: type | None
try:
    from torch.utils._device import DeviceContext
except ImportError:  # a torch without set_default_device's mode
    DeviceContext = None

_DISPATCH_LEN = torch._C._len_torch_dispatch_stack
_DISPATCH_AT = torch._C._get_dispatch_stack_at
_FUNCTION_LEN = torch._C._len_torch_function_stack
_FUNCTION_AT = torch._C._get_function_stack_at
_ALLOWED: tuple[type, ...] = (DeviceContext,) if DeviceContext is not None else ()


def lingering_modes(own: tuple[type, ...] = ()) -> list[str]:
    """The class names of the modes on torch's dispatch and function stacks, less the allowed and
    `own` (the scorer's monitor's modes, where one watched call runs inside another's)."""
    names = []
    for i in range(_DISPATCH_LEN()):
        try:
            mode = _DISPATCH_AT(i)
        except Exception:  # an infrastructure mode (fake, proxy, functional) is counted, not indexed
            names.append("an infrastructure dispatch mode")
            continue
        if type(mode) not in own:
            names.append(_name(mode))
    for i in range(_FUNCTION_LEN()):
        mode = _FUNCTION_AT(i)
        if type(mode) not in _ALLOWED and type(mode) not in own:
            names.append(_name(mode))
    return names


def top_dispatch_mode() -> object | None:
    """The mode on top of torch's dispatch stack (None: empty, or an infrastructure mode)."""
    try:
        depth = _DISPATCH_LEN()
        return _DISPATCH_AT(depth - 1) if depth else None
    except Exception:
        return None


def _name(mode: object) -> str:
    kind = type(mode)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', kind.__name__)}"
