"""In-process runtime guard armed in the kernel worker right before kernel.py is imported.

It observes, and `check(phase)` reports after each phase what it has not reported before (the
wire form of replies.GuardObservation); the judge rules on it (scorer/judge/rulings/runtime_guard.py):

* identity of everything the worker's measurement and result channel rely on (clock, CUDA
  events, synchronize, the scorer's own functions, the torch/stdlib functions the worker uses to
  copy and send outputs), the scorer's module-table entries and its functions' code;
* Python threads started since `arm()` and still alive, and (CPU runs) native threads that are
  not torch's own pool;
* audit events raised while the kernel's own code is the caller: frame/gc walking, ctypes,
  sockets, files outside the worker's directories, imports of the scorer, processes. The hook
  only records, never blocks;
* the device's persisting-L2 state (scorer/checks/residency.py).

An audit hook cannot be removed, so one process-wide hook is installed once and forwards to the
guard that is currently armed; it is written to be cheap for the events it ignores and to do
nothing when it re-enters itself.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import pickle
import select
import struct
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from scorer.checks.native_audit import _trusted_roots as trusted_roots
from scorer.checks.residency import read_state as read_residency
from scorer.checks.threads import Origin, native_origin

_GETFRAME = sys._getframe
_MAX_EVENTS = 64
_MAX_FRAMES = 40
# What one observation may hold (replies.py's bounds): a label or detail, a thread's name.
_LABEL = 1000
_NAME = 200

# The audit events watched (the judge says which pattern each is). Everything else returns after one
# set lookup.
_WATCHED = frozenset({
    "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "ctypes.dlopen", "ctypes.dlsym",
    "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata", "ctypes.cdata/buffer",
    "ctypes.call_function", "object.__setattr__", "object.__delattr__", "object.__getattr__", "open",
    "import", "exec", "compile", "marshal.loads", "os.system", "os.fork", "os.forkpty", "os.posix_spawn",
    "os.spawn", "os.exec", "os.kill", "subprocess.Popen", "_thread.start_new_thread", "socket.__new__",
    "socket.connect", "socket.bind", "socket.getaddrinfo",
})
_SENSITIVE_ATTRS = frozenset({"f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame",
                              "cr_frame", "ag_frame", "__globals__", "__code__", "__closure__", "f_code"})
_OWN_PACKAGES = ("scorer", "kernelarena", "orchestrator", "harnesses", "sandbox")
# Events only counted when kernel.py calls the primitive itself: the import machinery, logging,
# namedtuple/enum and dataclasses raise them on the kernel's behalf for honest code.
_DIRECT_ONLY = frozenset({"exec", "compile", "marshal.loads", "object.__setattr__", "object.__delattr__",
                          "object.__getattr__"})
# Frame walking is counted through these wrappers only (logging/collections also call _getframe).
_FRAME_EVENTS = frozenset({"sys._getframe", "sys._current_frames"})
_FRAME_WRAPPERS = ("inspect.py", "traceback.py")
# Wrapping a descriptor number in a file object is counted through os.fdopen only: a library that
# wraps its own pipe (subprocess, a lazy probe torch makes on a first call) opens a descriptor it
# made itself, not one the kernel reached for.
_FD_WRAPPERS = ("<frozen os>", os.sep + "os.py")
_SCORER_ROOT = str(Path(__file__).resolve().parents[2])
# Frames of these files sit between a kernel and the event it caused without hiding it
# (threading.Thread.start, inspect.stack, subprocess.run are how a kernel reaches the primitive).
# The directory of `os.py` is the standard library itself; in a venv sysconfig's "platstdlib"
# would also cover site-packages, which must not count as a transparent wrapper.
_STDLIB_DIRS = (os.path.dirname(os.__file__) + os.sep,)
_RUNTIME_THREAD_PREFIXES = ("cuda", "hip", "rocr", "nvidia", "cupti", "amd", "torch", "pt_", "triton")


@dataclass(frozen=True)
class _Watched:
    """One attribute whose identity is captured at arm(): `owner.name`, read statically."""

    label: str
    owner: Any
    name: str


def _static_get(owner: Any, name: str) -> Any:
    # Class attributes are read from the class dict so descriptors (classmethods, functions)
    # compare by identity instead of producing a fresh bound method on every read.
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if name in vars(klass):
                return vars(klass)[name]
        return None
    return getattr(owner, name, None)


def _watch_list() -> list[_Watched]:
    watched: list[_Watched] = []

    def add(label: str, owner: Any, names: tuple[str, ...]) -> None:
        watched.extend(_Watched(f"{label}.{n}", owner, n) for n in names)

    add("time", time, ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
                       "process_time", "sleep"))
    add("torch.cuda", torch.cuda, ("Event", "synchronize", "current_stream", "default_stream", "Stream",
                                   "stream", "is_available", "get_device_properties", "mem_get_info",
                                   "empty_cache", "set_stream", "graph", "CUDAGraph"))
    event_cls = torch.cuda.Event
    add("torch.cuda.Event", event_cls, ("record", "elapsed_time", "synchronize", "query", "wait", "__init__",
                                        "__new__"))
    add("torch.cuda.Stream", torch.cuda.Stream, ("synchronize", "wait_event", "wait_stream", "record_event", "query"))
    add("torch", torch, ("save", "load", "no_grad", "manual_seed", "allclose", "equal", "isclose", "empty",
                         "full", "randn", "from_numpy"))
    add("torch.Tensor", torch.Tensor, ("to", "cpu", "detach", "clone", "copy_", "contiguous", "reshape", "view",
                                       "numpy", "tobytes" if hasattr(torch.Tensor, "tobytes") else "tolist",
                                       "as_subclass", "data_ptr", "untyped_storage", "fill_", "__eq__",
                                       "__torch_function__", "__torch_dispatch__", "__reduce_ex__",
                                       "element_size", "numel", "is_floating_point", "float", "double"))
    add("torch.nn.Module", torch.nn.Module, ("__call__", "_call_impl", "_wrapped_call_impl", "to",
                                             "load_state_dict", "state_dict"))
    add("os", os, ("write", "read", "readv", "getpid", "_exit", "set_blocking"))
    add("hashlib", hashlib, ("sha256",))
    add("json", json, ("dumps", "loads"))
    add("select", select, ("select",))
    add("struct", struct, ("Struct", "pack", "unpack"))
    add("pickle", pickle, ("dumps", "loads", "Pickler", "Unpickler"))
    add("threading", threading, ("enumerate", "Thread", "active_count"))
    add("builtins", builtins, ("isinstance", "type", "len", "getattr", "setattr", "open", "print",
                               "__import__", "float", "int", "sum", "max", "min", "repr", "hash", "id"))
    # The scorer's own functions and classes (whatever is loaded in this worker).
    for mod_name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or mod_name.split(".")[0] not in ("scorer",):
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith("__") or isinstance(value, types.ModuleType):
                continue
            if callable(value) or isinstance(value, (int, float, str, tuple, frozenset)):
                watched.append(_Watched(f"{mod_name}.{attr}", module, attr))
            if isinstance(value, type) and getattr(value, "__module__", "") == mod_name:
                for member, inner in list(vars(value).items()):
                    if callable(inner) or isinstance(inner, (staticmethod, classmethod, property)):
                        watched.append(_Watched(f"{mod_name}.{attr}.{member}", value, member))
    return watched


class _Recorder:
    """State the audit hook writes to. Held by the hook's closure, not by a module global, so a
    kernel cannot swap it out without walking the interpreter (which the hook records)."""

    def __init__(self) -> None:
        self.kernel_file: str | None = None
        self.kernel_files: frozenset[str] = frozenset()
        self.denied_dirs: tuple[str, ...] = ()
        self.own_dir = "\0"
        self.allowed_dirs: tuple[str, ...] = ()
        self.events: list[tuple[str, str, int]] = []  # (event, detail, line in kernel.py)
        self.dropped = 0
        self.busy = False


_RECORDER = _Recorder()
_HOOK_INSTALLED = [False]


def _make_hook(rec: _Recorder, getframe: Callable[..., Any]) -> Callable[[str, tuple[Any, ...]], None]:
    watched = _WATCHED
    stdlib = _STDLIB_DIRS
    sensitive = _SENSITIVE_ATTRS
    own = _OWN_PACKAGES

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in watched or rec.kernel_file is None or rec.busy:
            return
        rec.busy = True
        try:
            if event in _DIRECT_ONLY:
                wrappers: tuple[str, ...] | None = ()
            elif event in _FRAME_EVENTS:
                wrappers = _FRAME_WRAPPERS
            elif event == "open" and args and isinstance(args[0], int):
                wrappers = _FD_WRAPPERS
            else:
                wrappers = None
            line = _kernel_line(getframe, rec.kernel_files, stdlib, wrappers)
            if line is None:
                return
            detail = _relevant(event, args, rec, sensitive, own)
            if detail is None:
                return
            if len(rec.events) < _MAX_EVENTS:
                rec.events.append((event, detail, line))
            else:
                rec.dropped += 1
        except Exception:
            return  # never let the guard break the process it watches
        finally:
            rec.busy = False

    return hook


# Library code that acts on its own account when a kernel's call reaches it: compilers, loaders
# and their caches (Triton's JIT compiling, loading or interpreting a kernel; torch's extension
# builder, inductor, dynamo). An event under one of these is not the kernel's doing.
_OWN_ACCOUNT = tuple(os.sep + os.path.join(*parts) for parts in (
    ("triton", ""), ("torch", "_inductor", ""), ("torch", "_dynamo", ""), ("torch", "utils", "cpp_extension.py")))


def _kernel_line(getframe: Callable[..., Any], kernel_files: frozenset[str], stdlib: tuple[str, ...],
                 wrappers: tuple[str, ...] | None) -> int | None:
    """Line in kernel.py that caused the event: the nearest caller frame is the kernel's, or only
    pass-through frames separate the two. Library frames (torch helpers and the like) pass the
    event through: a kernel that calls a torch helper to open a file, or to read frames that
    `inspect` handed it, did it itself. Standard-library frames pass it through only for events
    the stdlib raises on the kernel's behalf (`wrappers` None: any; a tuple: only those files;
    `()`: none, the kernel itself must be the caller). A compiler's or loader's frame in between
    (`_OWN_ACCOUNT`) means the library acted on its own account and the event is not the kernel's."""
    try:
        frame = getframe(2)
    except ValueError:
        return None
    depth = 0
    # Frame events: a library reading its own caller's location (torch recording where an op was
    # registered, a lazy call keeping its traceback) is bookkeeping; frames handed out by `inspect`
    # carry their locals to whoever called it, so a library frame that got them from inspect
    # passes the event on to the kernel that called the library.
    via_inspect = False
    while frame is not None and depth < _MAX_FRAMES:
        filename = frame.f_code.co_filename
        if filename in kernel_files:
            return frame.f_lineno
        if wrappers == ():
            return None
        library = "-packages" + os.sep in filename
        if library:
            if any(part in filename for part in _OWN_ACCOUNT) or (wrappers is not None and not via_inspect):
                return None
        elif wrappers is None:
            if not (filename.startswith(stdlib) or filename.startswith("<frozen")):
                return None
        elif not filename.endswith(wrappers):
            return None
        else:
            via_inspect = via_inspect or filename.endswith("inspect.py")
        frame = frame.f_back
        depth += 1
    return None


def _relevant(event: str, args: tuple[Any, ...], rec: _Recorder, sensitive: frozenset[str],
              own: tuple[str, ...]) -> str | None:
    """Short text of the event's arguments, or None when the event is harmless."""
    if event == "open":
        path = args[0] if args else None
        if isinstance(path, int):
            return f"open(fd {path})"
        if not isinstance(path, (str, bytes, os.PathLike)):
            return None
        text = os.fsdecode(path)
        full = os.path.realpath(text)
        if full.startswith(rec.own_dir):
            return None
        if full.startswith(rec.allowed_dirs) and not full.startswith(rec.denied_dirs):
            return None
        return f"open({text!r})"
    if event == "import":
        name = str(args[0]) if args else ""
        return f"import {name}" if name.split(".")[0] in own else None
    if event in ("object.__setattr__", "object.__delattr__"):
        obj = args[0] if args else None
        if isinstance(obj, (types.ModuleType, type)) and not _defined_in(obj, rec.kernel_files):
            name = getattr(obj, "__name__", "?")
            return f"{event}({name}, {args[1]!r})" if len(args) > 1 else event
        return None
    if event == "object.__getattr__":
        attr = args[1] if len(args) > 1 else None
        return f"getattr(<{type(args[0]).__name__}>, {attr!r})" if attr in sensitive else None
    if event in ("exec", "compile"):
        return event + "()"
    shown = ", ".join(_short(a) for a in args[:3])
    return f"{event}({shown})"


def _defined_in(obj: Any, files: frozenset[str]) -> bool:
    """True for the kernel's own module and classes (decorators like dataclass set attributes)."""
    module = obj if isinstance(obj, types.ModuleType) else sys.modules.get(getattr(obj, "__module__", ""))
    return getattr(module, "__file__", None) in files


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def _denied_dirs(kernel_path: Path) -> tuple[str, ...]:
    """The scorer package, the suites (reference code) and the judge's private folder around the
    kernel's own (the reference worker's files and logs live there)."""
    scorer_pkg = Path(__file__).resolve().parents[1]
    dirs = [scorer_pkg, Path(_SCORER_ROOT) / "suites", Path(_SCORER_ROOT) / "tests",
            kernel_path.resolve().parent.parent]
    extra = os.environ.get("KERNELARENA_SUITES_PATH", "")
    dirs += [Path(p) for p in extra.split(os.pathsep) if p]
    return tuple(str(d.resolve()) + os.sep for d in dirs)


def _native_threads() -> dict[str, str]:
    """tid -> comm for every native thread of this process (empty where /proc is missing)."""
    base = "/proc/self/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return {}
    out: dict[str, str] = {}
    for tid in tids:
        try:
            with open(f"{base}/{tid}/comm", encoding="utf-8", errors="replace") as fh:
                out[tid] = fh.read().strip()
        except OSError:
            continue
    return out


class RuntimeGuard:
    def __init__(self, kernel_path: Path) -> None:
        self.kernel_path = Path(kernel_path)
        self._watched: list[tuple[_Watched, Any]] = []
        self._modules: dict[str, types.ModuleType] = {}
        self._codes: list[tuple[str, types.FunctionType, types.CodeType]] = []
        self._threads: set[int] = set()
        self._native: dict[str, str] = {}
        self._origins: dict[str, Origin] = {}
        self._roots: tuple[str, ...] | None = None
        self._reported: set[tuple[Any, ...]] = set()
        self._armed = False

    @property
    def kernel_files(self) -> frozenset[str]:
        """Every spelling of kernel.py's path a code object may carry (for LibraryCallMonitor)."""
        return frozenset({str(self.kernel_path.resolve()), str(self.kernel_path), str(self.kernel_path.absolute())})

    def arm(self) -> None:
        """Call right before the kernel module is imported."""
        kernel_file = str(self.kernel_path.resolve())
        self._warm_thread_pool()
        _record_thread_starters()
        self._watched = [(w, _static_get(w.owner, w.name)) for w in _watch_list()]
        # The scorer's module-table entries and its functions' code: a kernel that swaps a module
        # for a copy, or a function's __code__ in place, keeps every attribute's identity.
        self._modules = {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == "scorer"}
        self._codes = [(w.label, original, original.__code__) for w, original in self._watched
                       if isinstance(original, types.FunctionType)]
        self._threads = {t.ident for t in threading.enumerate() if t.ident is not None}
        self._native = _native_threads()
        _RECORDER.allowed_dirs = self._allowed_dirs()
        _RECORDER.own_dir = str(self.kernel_path.resolve().parent) + os.sep
        _RECORDER.denied_dirs = _denied_dirs(self.kernel_path)
        _RECORDER.events.clear()
        _RECORDER.dropped = 0
        # The kernel is imported under a path we know; the hook compares code filenames to it
        # (spec_from_file_location keeps the path as given, so both spellings are accepted).
        _RECORDER.kernel_files = frozenset({kernel_file, str(self.kernel_path), str(self.kernel_path.absolute())})
        _RECORDER.kernel_file = kernel_file
        if not _HOOK_INSTALLED[0]:
            sys.addaudithook(_make_hook(_RECORDER, _GETFRAME))
            _HOOK_INSTALLED[0] = True
        self._armed = True

    def _allowed_dirs(self) -> tuple[str, ...]:
        """Prefixes of the paths a kernel may open: the kernel's own folder (caches live inside it),
        the interpreter's libraries (imports from kernel code open them) and device files. The
        scorer's tree is denied separately, even where it lies under one of these. A folder ends in
        a separator, so its sibling that merely shares the prefix (`tmp-judge` beside `tmp`) is not
        allowed with it; the device nodes are named by prefix on purpose (/dev/nvidia0, -ctl, -uvm)."""
        dirs = [self.kernel_path.resolve().parent]
        for var in ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR", "TMPDIR", "TRITON_HOME"):
            if os.environ.get(var):
                dirs.append(Path(os.environ[var]))
        dirs += [Path.home() / ".triton", Path("/dev/dri"), Path("/usr/local/cuda"), Path(sys.prefix),
                 Path(sys.base_prefix)]
        dirs += [Path(p) for p in sys.path if p and Path(p).is_dir() and str(Path(p).resolve()) != _SCORER_ROOT]
        folders = tuple(str(d.resolve()).rstrip(os.sep) + os.sep for d in dirs)
        return folders + ("/dev/null", "/dev/nvidia")

    @staticmethod
    def _warm_thread_pool() -> None:
        # torch creates its OpenMP pool on the first parallel op; doing that now keeps those
        # threads out of the "new native threads" count.
        try:
            torch.ones(1 << 18).add_(1.0)
        except Exception:
            return

    def check(self, phase: str) -> dict[str, Any]:
        """Call after each phase (load, correctness, timing): what was observed and not reported
        before (replies.GuardObservation), each thing once."""
        seen: dict[str, Any] = {"identity": [], "audit": [], "audit_dropped": 0, "threads": [],
                                "process_name": self._native.get(str(os.getpid()), "")[:_NAME],
                                "threads_at_arm": len(self._native), "carve_outs": [], "windows": []}
        if not self._armed:
            return seen
        self._identity(phase, seen)
        self._audit(phase, seen)
        self._threads_started(phase, seen)
        self._residency(phase, seen)
        return seen

    def _first(self, key: tuple[Any, ...]) -> bool:
        """Whether `key` is observed for the first time (a reply carries each observation once)."""
        if key in self._reported:
            return False
        self._reported.add(key)
        return True

    def _identity(self, phase: str, seen: dict[str, Any]) -> None:
        def changed(kind: str, label: str, was: Any, now: Any) -> None:
            if self._first((kind, label)):
                seen["identity"].append({"kind": kind, "label": label[:_LABEL], "phase": phase, "was": _short(was),
                                         "now": _short(now)})

        for watched, original in self._watched:
            try:
                current = _static_get(watched.owner, watched.name)
            except Exception:
                current = None
            if current is not original and not _is_torch_rewrap(current, original):
                changed("callable", watched.label, original, current)
        for name, module in self._modules.items():
            if sys.modules.get(name) is not module:
                changed("module-entry", name, module, sys.modules.get(name))
        for label, function, code in self._codes:
            if function.__code__ is not code:
                changed("code", label, code, function.__code__)

    def _audit(self, phase: str, seen: dict[str, Any]) -> None:
        for event, detail, line in list(_RECORDER.events):
            if self._first(("audit", event, detail, line)):
                # A frame can be at no line (f_lineno None); the observation still counts.
                seen["audit"].append({"event": event, "detail": detail[:_LABEL], "line": line or 0, "phase": phase})
        if _RECORDER.dropped and self._first(("audit-dropped",)):
            seen["audit_dropped"] = _RECORDER.dropped

    def _threads_started(self, phase: str, seen: dict[str, Any]) -> None:
        """Threads alive now that were not at arm() and that the kernel's code started
        (scorer/checks/threads.py: by the code they run, not by their names)."""
        born = [t for t in threading.enumerate() if t.ident not in self._threads and t.is_alive()]
        kernel_files = _RECORDER.kernel_files
        for t in born:
            if not _started_by_scorer(t) and _runs_kernel_code(t, kernel_files) and self._first(("python", t.ident)):
                seen["threads"].append({"kind": "python", "name": t.name[:_NAME], "ident": t.ident,
                                        "native_id": t.native_id, "runs": _thread_target(t)[:_LABEL], "phase": phase})
        if _cuda_initialized():
            return
        # Every Python thread is judged above by its code, whoever started it.
        python_tids = {str(t.native_id) for t in born if t.native_id is not None}
        for tid, comm in _native_threads().items():
            if tid in self._native or tid in python_tids or comm.lower().startswith(_RUNTIME_THREAD_PREFIXES):
                continue
            origin = self._origins.get(tid)
            if origin is None or origin.kind != "runtime":
                origin = self._origins[tid] = native_origin(tid, self._trusted_roots())
            if origin.kind != "runtime" and self._first(("native", tid)):
                seen["threads"].append({"kind": "native", "name": comm[:_NAME], "ident": None, "native_id": int(tid),
                                        "runs": origin.detail[:_LABEL], "phase": phase})

    def _residency(self, phase: str, seen: dict[str, Any]) -> None:
        """The persisting-L2 state, each reading that differs from the settled one sent once."""
        state = read_residency()
        if state is None:
            return
        carve_out, settled, windows = state
        if carve_out != settled and self._first(("carve-out", carve_out)):
            seen["carve_outs"].append({"bytes": carve_out, "settled_bytes": settled, "phase": phase})
        for stream, (size, hit_prop) in windows.items():
            if size and self._first(("window", stream, size, hit_prop)):
                seen["windows"].append({"stream": stream, "bytes": size, "hit_prop": hit_prop, "phase": phase})

    def _trusted_roots(self) -> tuple[str, ...]:
        if self._roots is None:
            self._roots = trusted_roots()
        return self._roots


def _torch_dir() -> str:
    torch = sys.modules.get("torch")
    return os.path.dirname(getattr(torch, "__file__", "") or "\0") + os.sep


def _closes_over(fn: Any, original: Any, torch_dir: str) -> bool:
    """`fn` is torch's own code and holds `original` directly in its closure."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_filename.startswith(torch_dir):
        return False
    cells = getattr(fn, "__closure__", None) or ()
    try:
        return any(c.cell_contents is original for c in cells)
    except ValueError:  # an empty cell
        return False


def _is_torch_rewrap(current: Any, original: Any) -> bool:
    """torch re-wraps some of its own functions when a submodule is first imported (importing
    torch._dynamo, e.g. through torch.library.custom_op, wraps torch.manual_seed in a
    dynamo-disable shim). Such a value is torch's code wrapping exactly the original, and the
    shim's cached inner wrapper must be one too; a kernel's replacement is neither."""
    torch_dir = _torch_dir()
    if getattr(current, "__wrapped__", None) is not original or not _closes_over(current, original, torch_dir):
        return False
    cached = getattr(original, "__dynamo_disable", None)
    return cached is None or _closes_over(cached, original, torch_dir)


def _started_by_scorer(t: threading.Thread) -> bool:
    target = getattr(t, "_target", None)
    module = getattr(target, "__module__", "") or type(t).__module__
    return module.split(".")[0] in _OWN_PACKAGES


# Who called Thread.start for each thread started since arm(): "kernel" when kernel.py's code did
# (directly or through the standard library, e.g. a ThreadPoolExecutor it made), "library" when a
# library's code did for itself (Triton's or torch's workers).
_STARTERS: weakref.WeakKeyDictionary[threading.Thread, str] = weakref.WeakKeyDictionary()
_START_WRAPPED = [False]


def _record_thread_starters() -> None:
    if _START_WRAPPED[0]:
        return
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        try:
            frame: types.FrameType | None = _GETFRAME(1)
            starter = "library"
            for _ in range(_MAX_FRAMES):
                if frame is None:
                    break
                filename = frame.f_code.co_filename
                if filename in _RECORDER.kernel_files:
                    starter = "kernel"
                    break
                if not ((filename.startswith(_STDLIB_DIRS) and "-packages" not in filename)
                        or filename.startswith("<")):
                    break  # a library's frame (or the scorer's) started it for itself
                frame = frame.f_back
            _STARTERS[self] = starter
        except Exception:
            pass  # never let the guard break the thread it watches
        return original(self)

    start.__wrapped__ = original  # type: ignore[attr-defined]  # a function takes any attribute; the stubs declare none
    threading.Thread.start = start  # type: ignore[method-assign]  # the wrap is the point: every thread's start is seen
    _START_WRAPPED[0] = True


def _runs_kernel_code(t: threading.Thread, kernel_files: frozenset[str]) -> bool:
    """Whether a new Python thread counts as the kernel's: kernel.py's code started it (recorded
    by Thread.start), or its code or stack is kernel.py's. A library's own thread (started from a
    library's frame, running library or standard-library code, no kernel frame on its stack) is
    not. A thread whose start was not recorded and that runs standard-library code (`Event.wait`,
    an executor's worker) may have been started by anyone, and counts as the kernel's."""
    starter = _STARTERS.get(t)
    if starter == "kernel":
        return True
    target = getattr(t, "_target", None)
    code = getattr(target, "__code__", None) or getattr(getattr(target, "__func__", None), "__code__", None)
    if target is None:
        code = getattr(getattr(type(t), "run", None), "__code__", None)
    if code is not None and code.co_filename in kernel_files:
        return True
    filename = code.co_filename if code is not None else "<builtin>"
    if starter is None and (filename.startswith("<")
                            or (filename.startswith(_STDLIB_DIRS) and "-packages" not in filename)):
        return True
    frames = sys._current_frames()
    frame = frames.get(t.ident) if t.ident is not None else None
    depth = 0
    while frame is not None and depth < 200:
        if frame.f_code.co_filename in kernel_files:
            return True
        frame = frame.f_back
        depth += 1
    return False


def _thread_target(t: threading.Thread) -> str:
    target = getattr(t, "_target", None)
    if target is None:
        return type(t).__qualname__
    code = getattr(target, "__code__", None)
    where = f" at {Path(code.co_filename).name}:{code.co_firstlineno}" if code is not None else ""
    return f"{getattr(target, '__qualname__', type(target).__name__)}{where}"


def _cuda_initialized() -> bool:
    # CUDA/ROCm runtimes and the profiler start helper threads we cannot tell apart by name;
    # on GPU runs native threads are left to the audit events and the static ban.
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:
        return True
