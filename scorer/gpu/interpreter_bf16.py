"""bfloat16 arithmetic for Triton's CPU interpreter, so honest bf16 kernels can be judged on CPU.

The pinned interpreter stores bfloat16 values as their raw 16 bits (numpy has no bfloat16) and
then does its arithmetic on those integers: `x * y` of two bf16 blocks multiplies bit patterns,
`tl.dot` of bf16 tiles a matrix of integers, `tl.sum` adds them (measured with triton 3.9 in
interpreter mode: a bf16 multiply-add was off by 2e36, a 16x16 bf16 dot by 3e10, while the
bf16<->fp32 casts were exact). Every honest bf16 Triton kernel returned garbage on CPU and was
judged `incorrect` or `hack_detected`.

`install()` wraps the interpreter's arithmetic so that a bf16 operand is decoded to float32, the
operation runs in float32, and a bf16 result is rounded back to bf16 (round to nearest even):
what a GPU does for bf16 arithmetic (computed in fp32, rounded on store to a bf16 register).
`tl.dot` of bf16 tiles accumulates in the accumulator's type, as the tensor cores do. Loads,
stores, casts, bit casts and `where` keep working on the bits, as before.

It is installed by the kernel worker before kernel.py is imported, and only when Triton runs
interpreted. A kernel that undoes it only breaks its own bf16 maths.

The same call makes a multi-config `@triton.autotune` usable there: the autotuner benchmarks
each config through the GPU driver, which the interpreter does not have (`0 active drivers`), so
every config is given the same time and the first one is used, as with a single config.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np

_INSTALLED = [False]


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "") not in ("", "0")


def decode(bits: Any) -> np.ndarray:
    """bf16 bit patterns (uint16) -> float32 values."""
    return (np.asarray(bits).astype(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def encode(values: Any) -> np.ndarray:
    """float32 values -> bf16 bit patterns, rounded to nearest even (NaN stays a quiet NaN)."""
    f = np.asarray(values, dtype=np.float32)
    u = f.view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), rounded).astype(np.uint16)


def install() -> bool:
    """Wrap the interpreter's bf16 arithmetic (idempotent). False when Triton is not interpreted
    or its interpreter does not have the expected shape (then nothing is changed)."""
    if _INSTALLED[0]:
        return True
    if not interpreting():
        return False
    try:
        import triton.language as tl
        from triton.runtime import interpreter as interp
    except Exception:
        return False
    builder_cls, handle = interp.InterpreterBuilder, interp.TensorHandle
    needed = ("cast_impl", "binary_op", "unary_op", "ternary_op", "create_fma", "create_dot", "create_rsqrt", "create_erf")
    if not all(hasattr(builder_cls, n) for n in needed) or not hasattr(interp, "ReduceOps"):
        return False
    bf16 = tl.bfloat16

    def is_bf16(h: Any) -> bool:
        return isinstance(h, handle) and getattr(h.dtype, "scalar", h.dtype) == bf16

    def as_f32(h: Any) -> Any:
        return handle(decode(h.data), tl.float32) if is_bf16(h) else h

    def back(result: Any) -> Any:
        # A float result of bf16 operands is a bf16 value; a comparison's bool stays as it is
        # (typed as the operands were, like the interpreter's own result).
        data = np.asarray(result.data)
        if data.dtype == np.float32:
            return handle(encode(data), bf16)
        return handle(result.data, bf16)

    def elementwise(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def wrapped(self: Any, *args: Any) -> Any:
            if not any(is_bf16(a) for a in args):
                return original(self, *args)
            return back(original(self, *[as_f32(a) for a in args]))
        return wrapped

    for name in ("binary_op", "unary_op", "create_fma", "create_rsqrt", "create_erf"):
        setattr(builder_cls, name, elementwise(getattr(builder_cls, name)))

    ternary = builder_cls.ternary_op

    @functools.wraps(ternary)
    def ternary_op(self: Any, lhs: Any, rhs: Any, other: Any, op: Any) -> Any:
        # `where` selects bits and is exact as it is; `clip` compares values.
        if op is np.where or not any(is_bf16(a) for a in (lhs, rhs, other)):
            return ternary(self, lhs, rhs, other, op)
        return back(ternary(self, as_f32(lhs), as_f32(rhs), as_f32(other), op))

    builder_cls.ternary_op = ternary_op
    dot = builder_cls.create_dot

    @functools.wraps(dot)
    def create_dot(self: Any, a: Any, b: Any, d: Any, *rest: Any) -> Any:
        if not (is_bf16(a) or is_bf16(b) or is_bf16(d)):
            return dot(self, a, b, d, *rest)
        out = dot(self, as_f32(a), as_f32(b), as_f32(d), *rest)
        return back(out) if is_bf16(d) else out

    builder_cls.create_dot = create_dot
    cast = builder_cls.cast_impl

    @functools.wraps(cast)
    def cast_impl(self: Any, src: Any, dst_type: Any) -> Any:
        # The interpreter converts bf16 only to and from float32; an int<->bf16 cast reinterpreted
        # the integer as bits. Go through float32 for every other pair.
        src_ty, dst_ty = src.dtype.scalar, getattr(dst_type, "scalar", dst_type)
        if src_ty == bf16 and dst_ty not in (bf16, tl.float32):
            return cast(self, cast(self, src, tl.float32), dst_type)
        if dst_ty == bf16 and src_ty not in (bf16, tl.float32):
            return cast(self, cast(self, src, tl.float32), dst_type)
        return cast(self, src, dst_type)

    builder_cls.cast_impl = cast_impl
    _wrap_reductions(interp, tl, bf16)
    _untimed_autotune()
    _INSTALLED[0] = True
    return True


def _untimed_autotune() -> None:
    try:
        from triton.runtime.autotuner import Autotuner
    except Exception:
        return
    if hasattr(Autotuner, "_bench"):
        def _bench(self: Any, *args: Any, config: Any, **meta: Any) -> list[float]:
            return [1.0, 1.0, 1.0]  # no device to time on: all configs tie, the first is kept

        Autotuner._bench = _bench


def _wrap_reductions(interp: Any, tl: Any, bf16: Any) -> None:
    """`tl.sum/max/min/argmax/cumsum/cumprod` of a bf16 block run numpy on the data directly."""

    def values(t: Any) -> Any:
        return tl.core.tensor(interp.TensorHandle(decode(t.handle.data), tl.float32), t.type.with_element_ty(tl.float32)
                              if hasattr(t.type, "with_element_ty") else tl.float32)

    def rounded(t: Any) -> Any:
        if not isinstance(t, tl.core.tensor) or getattr(t.dtype, "scalar", t.dtype) != tl.float32:
            return t
        data = encode(t.handle.data)
        ty = t.type.with_element_ty(bf16) if hasattr(t.type, "with_element_ty") else bf16
        return tl.core.tensor(interp.TensorHandle(data, bf16), ty)

    def wrap(cls: Any, name: str) -> None:
        original = getattr(cls, name, None)
        if original is None:
            return

        @functools.wraps(original)
        def wrapped(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            first = input[0] if isinstance(input, (tuple, list)) else input
            if not (isinstance(first, tl.core.tensor) and first.dtype == bf16):
                return original(self, input, *args, **kwargs)
            out = original(self, values(first), *args, **kwargs)
            if isinstance(out, list):
                return [rounded(o) for o in out]
            if isinstance(out, tuple):  # (values, indices)
                return (rounded(out[0]),) + tuple(out[1:])
            return rounded(out)

        setattr(cls, name, wrapped)

    for name in ("sum", "min_max"):
        wrap(interp.ReduceOps, name)
    for name in ("cumsum", "cumprod"):
        wrap(interp.ScanOps, name)
