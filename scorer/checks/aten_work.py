"""Library work that never passes torch's Python API: the ATen ops run by native code and by the
bodies of custom ops the solution defines.

The LibraryCallMonitor's TorchFunctionMode sees each torch call kernel.py's Python code makes, as a
unit, and runs it with itself popped. Two routes reach ATen without such a call. Native code: a
`load_inline` extension whose C++ calls `at::special_expit(x)` and `x * s` (C++ never meets a
Python mode). A custom op (`torch.library.custom_op`, `Library.impl`, a `TORCH_LIBRARY` op): the
function mode sees only the op, which is glue, and its body runs while the mode is popped. A red
team did the whole of swish each way and passed the function mode alone on CPU (a06 and a09 of
docs/results/2026-12-05-session15-red-team-on-cpu.md).

A TorchDispatchMode meets every ATen op at the dispatcher, from C++ or from Python. It counts those
that arrive while no call the function mode watches is running (that mode counted the call, or
judged it glue, already), at the same cost (`work.op_work`) and by the same glue rules, read off the
op's torch counterpart. An op of any namespace but torch's own (the solution's custom op, or a
third-party one) is not such a call: the dispatch mode runs its kernel with itself still active, so
the ops of the body arrive too, whatever language the body is written in.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._C import DispatchKey
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

# Namespaces whose ops are torch's own kernels, judged as one call each (torch.ops.aten and friends
# are denied statically; reached from native code, each ATen op is counted here).
TORCH_NAMESPACES = frozenset({"aten", "prim", "prims"})
_OP_TYPES = (torch._ops.OpOverload, torch._ops.OpOverloadPacket)
_DISPATCH_KEYS = torch._C._dispatch_keys
_REDISPATCH = torch._ops.OpOverload.redispatch
# The backend kernels below the Python key, where a dispatch mode runs; BackendSelect only forwards
# factory ops and would be asked to run itself.
_BELOW_PYTHON = torch._C._dispatch_keyset_full_after(DispatchKey.Python).remove(DispatchKey.BackendSelect)
# ATen ops that move, cast or allocate, with no public torch counterpart that says so: glue, like
# `copy_`, `empty` and views under the function mode (F.pad, cat and stack included).
_ATEN_GLUE = frozenset({
    "_to_copy", "_copy_from", "_copy_from_and_resize", "copy", "_lazy_clone", "_to_cpu", "lift", "lift_fresh",
    "lift_fresh_copy", "_unsafe_view", "_reshape_alias", "_reshape_copy", "_local_scalar_dense", "scalar_tensor",
    "empty", "empty_strided", "empty_permuted", "empty_quantized", "_empty_affine_quantized",
    "_empty_per_channel_affine_quantized", "_efficientzerotensor", "fill", "zero", "resize_", "_resize_output",
    "_resize_output_", "resize_as_", "set", "set_", "set_data", "data", "_assert_tensor_metadata", "_cast_Byte",
    "_cast_Char", "_cast_Double", "_cast_Float", "_cast_Half", "_cast_Int", "_cast_Long", "_cast_Short",
    "_autocast_to_full_precision", "_autocast_to_reduced_precision", "_pin_memory", "record_stream",
    "constant_pad_nd", "_pad_enum", "_pad_circular", "_chunk_cat", "_stack", "slice_scatter", "select_scatter",
    "diagonal_scatter", "as_strided_scatter", "_to_dense", "_to_sparse", "_to_sparse_csr", "_to_sparse_csc",
    "_to_sparse_bsr", "_to_sparse_bsc", "_foreach_copy", "_foreach_copy_", "_foreach_zero", "_foreach_zero_",
    "_foreach_clone",
})
COMPUTE = object()  # an ATen op with no torch counterpart, counted (as the torch namespace is)


def solution_op(func: Any) -> bool:
    """An op of a namespace torch does not own: the solution's custom op (or a third-party one),
    whose body the dispatch mode watches instead of judging the op as one call."""
    if not isinstance(func, _OP_TYPES):
        return False
    namespace = func.namespace if isinstance(func, torch._ops.OpOverload) else func._qualified_op_name.split("::")[0]
    return namespace not in TORCH_NAMESPACES


def torch_counterpart(func: Any) -> Any:
    """What decides whether an ATen op is work: None for glue (views, copies, allocation, and
    anything that is not an ATen op), the public torch callable of the same name (its glue or
    compute rule is the function mode's), else COMPUTE."""
    if not isinstance(func, torch._ops.OpOverload) or func.namespace not in TORCH_NAMESPACES or func.is_view:
        return None
    name = func._opname
    if name in _ATEN_GLUE or torch.Tag.view_copy in func.tags or not _makes_or_writes_tensors(func):
        return None
    # Tensor methods first: their glue list names the in-place fills and copies (`fill_`, `zero_`,
    # `copy_`) that the torch namespace would count. Private ones carry no rule there.
    for owner in (torch.Tensor, torch, torch.nn.functional):
        found = getattr(owner, name, None)
        if callable(found) and not (owner is torch.Tensor and name.startswith("_")):
            return found
    return COMPUTE


def _makes_or_writes_tensors(func: Any) -> bool:
    """False for a query or an assertion (sizes, `item`-like scalars, checks): no tensor returned
    and none written."""
    schema = func._schema
    if any("Tensor" in str(ret.type) for ret in schema.returns):
        return True
    return any(arg.alias_info is not None and arg.alias_info.is_write for arg in schema.arguments)


def run_kernel_watched(mode: TorchDispatchMode, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Runs a custom op's kernel with `mode` active inside it (its body's ATen ops then reach the
    mode). Called from the mode's handler, where the op has passed the Python key and the mode is
    popped: redispatching to the backend the op's tensors name skips the Python key for this op
    alone. An op with no tensor arguments takes its CompositeExplicitAutograd kernel, as the
    dispatcher would give it."""
    keys = None
    for leaf in tree_leaves((args, kwargs)):
        if isinstance(leaf, torch.Tensor):
            found = _DISPATCH_KEYS(leaf)
            keys = found if keys is None else keys | found
    keyset = (keys if keys is not None else torch._C.DispatchKeySet(DispatchKey.Undefined)) & _BELOW_PYTHON
    with mode:
        return _REDISPATCH(func, keyset, *args, **kwargs)


def run_subclass_watched(mode: TorchDispatchMode, func: Any, types: Any, args: tuple[Any, ...],
                         kwargs: dict[str, Any]) -> Any:
    """Runs the __torch_dispatch__ of the tensor subclasses among an op's arguments, as the
    dispatcher would after the mode, but with `mode` still active, so the ops a subclass runs
    arrive too."""
    with mode:
        for kind in types:
            out = kind.__torch_dispatch__(func, types, args, kwargs)
            if out is not NotImplemented:
                return out
    return NotImplemented


class AtenMode(TorchDispatchMode):
    """The dispatch mode a LibraryCallMonitor pushes; every op goes to its `_watch_aten`."""

    # Higher-order ops (a `wrap_triton` launch outside a triton_op) would be refused otherwise.
    supports_higher_order_operators = True

    def __init__(self, monitor: Any) -> None:
        super().__init__()
        self.monitor = monitor

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch would wrap the handler in dynamo's disable (frames of torch._dynamo between an op
        # and kernel.py, which the caller walk stops at); nothing here is ever compiled.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.monitor._watch_aten(func, types, args, kwargs or {})
