"""GPU-side observation of what could keep data resident in L2 across timed calls.

The timer flushes L2 between timed calls by writing a buffer larger than the cache. Lines under a
persisting access policy window survive that flush (they are evicted last, up to the persisting
carve-out), so a kernel that sets a window over its inputs reads them from L2 on every timed call.
After each phase the kernel worker reads back, through the CUDA runtime torch already loaded, the
device's persisting-L2 limit and the access policy window of the current and default streams,
beside what the device reported before the kernel loaded (`settle`, which first asks for none: a
fresh context on the H200 machine reports 11.25 MiB by default). The judge rules on them
(scorer/judge/rulings/runtime_guard.py): a larger carve-out or any persisting window is
`cache-residency`. On CPU runs, or where the runtime's entry points cannot be found, nothing is
read (the static scan still checks).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

_CUDA_LIMIT_PERSISTING_L2 = 0x06
_STREAM_ATTR_ACCESS_POLICY_WINDOW = 1
ACCESS_PROPERTY_PERSISTING = 2  # cudaAccessPropertyPersisting


def _runtime() -> Any | None:
    """The libcudart that torch loaded into this process (found in /proc/self/maps)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths = {line.split(None, 5)[5].strip() for line in fh if "libcudart" in line and len(line.split(None, 5)) > 5}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
            lib.cudaDeviceGetLimit.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int]
            lib.cudaDeviceSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
            lib.cudaStreamGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
            return lib
        except (OSError, AttributeError):
            continue
    return None


def _live_runtime() -> tuple[Any, Any] | None:
    """(torch, libcudart) where this process has a CUDA context; None on CPU runs."""
    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_initialized():
            return None
    except Exception:
        return None
    lib = _runtime()
    return None if lib is None else (torch, lib)


# The persisting carve-out the device reported once the scorer asked for none, before the kernel.
_BEFORE_KERNEL = [0]


def settle() -> int:
    """In the worker's setup, CUDA up and before kernel.py exists: asks for no persisting carve-out
    and remembers what the device then reports (the check flags only more than that)."""
    live = _live_runtime()
    if live is None:
        return 0
    lib = live[1]
    lib.cudaDeviceSetLimit(_CUDA_LIMIT_PERSISTING_L2, 0)
    limit = ctypes.c_size_t(0)
    if lib.cudaDeviceGetLimit(ctypes.byref(limit), _CUDA_LIMIT_PERSISTING_L2) == 0:
        _BEFORE_KERNEL[0] = limit.value
    return _BEFORE_KERNEL[0]


def read_state() -> tuple[int, int, dict[str, tuple[int, int]]] | None:
    """(the persisting carve-out now, the carve-out settled before the kernel, {stream: (its access
    policy window's bytes, its hit property)}), or None where no CUDA runtime is live."""
    live = _live_runtime()
    if live is None:
        return None
    torch, lib = live
    limit = ctypes.c_size_t(0)
    carve_out = limit.value if lib.cudaDeviceGetLimit(ctypes.byref(limit), _CUDA_LIMIT_PERSISTING_L2) == 0 else _BEFORE_KERNEL[0]
    streams = {"default stream": 0}
    try:
        streams["current stream"] = int(torch.cuda.current_stream().cuda_stream)
    except Exception:
        pass
    windows: dict[str, tuple[int, int]] = {}
    for label, handle in streams.items():
        # cudaStreamAttrValue: accessPolicyWindow {void* base_ptr; size_t num_bytes; float hitRatio;
        # int hitProp; int missProp} first; the union is at most 64 bytes.
        value = (ctypes.c_ubyte * 64)()
        if lib.cudaStreamGetAttribute(ctypes.c_void_p(handle), _STREAM_ATTR_ACCESS_POLICY_WINDOW, value) != 0:
            continue
        raw = bytes(value)
        windows[label] = int.from_bytes(raw[8:16], "little"), int.from_bytes(raw[20:24], "little")
    return carve_out, _BEFORE_KERNEL[0], windows
