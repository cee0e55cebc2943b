"""Native tampering audit: did native code in the kernel's process edit what the scorer's clock reads?

A kernel can build a C++ extension (``load_inline``) and, from inside it, rewrite the C function
behind ``time.perf_counter`` or ``torch.cuda.Event.elapsed_time``: overwrite ``ml_meth`` in the
PyMethodDef, the ``vectorcall`` slot of the function object, the type's ``tp_call``, or the machine
code itself. Python-level identity checks (``scorer.checks.guard``) then still see the original objects.
This module checks the bytes instead, from outside the kernel's process:

1. ``timer_fingerprint()`` runs in the kernel worker *before* ``kernel.py`` is imported (the last
   moment the process is trusted). For every C-level callable the clock uses it records, as
   JSON-able (address, hex bytes) regions: the object's struct fields after the refcount, the
   PyMethodDef it points to, the first bytes of machine code at ``ml_meth`` and at the vectorcall
   function, a few fields of its type object, and the entry code of libc ``clock_gettime`` and of
   the CUDA runtime/driver event functions when those libraries are loaded.
2. ``probe(pid)`` runs in the judge right after the worker starts; ``audit_timers(pid, fp)`` runs in
   the judge after correctness and after timing, while the worker is still alive. It re-reads the
   same addresses through ``/proc/<pid>/mem`` (the parent may read its child's memory, also under
   Yama ptrace_scope 1) and reports every changed byte range as ``timer-patching``. A kernel that
   makes itself unreadable (``prctl(PR_SET_DUMPABLE, 0)``) after a successful probe is
   ``harness-introspection``.
3. ``mapped_objects(pid)`` / ``scan_new_objects(pid, before)``: shared objects mapped since the
   trusted moment and not from an installed location (the kernel's extensions, or anything it
   wrote) are scanned for imported symbols and strings that only process tampering needs.

Limits (docs/HACKS.md, "Native tampering"): only the listed callables and code entries are
watched; a patch of the GOT/PLT of libtorch_cuda, of the vDSO, or of a callee deeper than the
first 32 bytes, a patch undone before each audit, and raw ``syscall`` instructions are not seen
here. The judge's independent clock bound is the layer for those.
"""

from __future__ import annotations

import ctypes  # scorer code; the kernel's own ctypes use is banned statically
import os
import re
import site
import stat
import struct
import sys
import sysconfig
import time
from collections.abc import Iterator
from typing import Any

from scorer.checks.catalog import Finding

_CODE_BYTES = 32  # entry bytes of each function: a detour (jmp/mov+jmp) is written at the entry
_PTR = 8
# PyCFunctionObject (3.11-3.13, default build): ob_refcnt, ob_type, m_ml, m_self, m_module,
# m_weakreflist, vectorcall. The refcount changes all the time and m_weakreflist when a weakref is
# taken, so neither is compared; every other field decides what a call runs.
_CFUNC_FIELDS = (("ob_type", 8), ("m_ml", 16), ("m_self", 24), ("m_module", 32), ("vectorcall", 48))
# PyMethodDescrObject: ob_refcnt, ob_type, d_type, d_name, d_qualname (filled lazily: skipped),
# d_method, vectorcall.
_DESCR_FIELDS = (("ob_type", 8), ("d_type", 16), ("d_name", 24), ("d_method", 40), ("vectorcall", 48))
# PyMethodDef: ml_name, ml_meth, ml_flags (int, padded to 8), ml_doc.
_METHODDEF_FIELDS = (("ml_name", 0), ("ml_meth", 8), ("ml_flags", 16), ("ml_doc", 24))
# PyTypeObject slots that decide how an instance is called or bound (tp_flags is left out: the
# method cache flips its version-tag bit on honest runs).
_TYPE_FIELDS = (("tp_vectorcall_offset", 56), ("tp_call", 128), ("tp_descr_get", 272))
_TP_NAME, _TP_BASICSIZE = 24, 32

_CLOCK_FUNCTIONS = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns")
_EVENT_METHODS = ("elapsed_time", "record", "synchronize")
# Entry points the event/synchronize methods end up in (names differ across CUDA versions).
_CUDA_LIBS = (
    (re.compile(r"/libcudart\.so[.\d]*$"),
     ("cudaEventElapsedTime", "cudaEventElapsedTime_v2", "cudaEventRecord", "cudaEventSynchronize",
      "cudaDeviceSynchronize", "cudaStreamSynchronize")),
    (re.compile(r"/libcuda\.so[.\d]*$"),
     ("cuEventElapsedTime", "cuEventElapsedTime_v2", "cuEventRecord", "cuEventSynchronize",
      "cuCtxSynchronize", "cuStreamSynchronize")),
)

# pid -> True once a read of its memory succeeded (set by probe()).
_READABLE: dict[int, bool] = {}


# --- trusted phase: in the kernel worker, before kernel.py is imported -----------------------------

def _layout_supported() -> bool:
    # Only the layouts above are known; a free-threaded build has a different object header.
    return (3, 11) <= sys.version_info[:2] <= (3, 13) and not sysconfig.get_config_var("Py_GIL_DISABLED") \
        and struct.calcsize("P") == _PTR and sys.byteorder == "little"


def timer_fingerprint() -> dict[str, Any]:
    """What the clock's C callables look like now, as {"pid", "regions": [...], "skipped": [...]}.

    Each region is {"what", "field", "addr", "hex"}. Call it in the kernel worker after CUDA is
    initialised (libcudart/libcuda loaded) and before the kernel is imported, and send the dict to
    the judge *before* the import too: once kernel code has run, the worker's copy of it is no
    longer evidence. The judge keeps it and passes it to audit_timers().
    """
    regions: list[dict[str, Any]] = []
    skipped: list[str] = []
    seen: set[tuple[int, int]] = set()

    def add(what: str, field: str, addr: int, size: int) -> bytes | None:
        if not addr:
            return None
        data = ctypes.string_at(addr, size)
        if (addr, size) not in seen:  # shared code (cfunction_vectorcall_NOARGS) is listed once
            seen.add((addr, size))
            regions.append({"what": what, "field": field, "addr": addr, "hex": data.hex()})
        return data

    def ptr_at(addr: int) -> int:
        return struct.unpack("<Q", ctypes.string_at(addr, _PTR))[0]

    def add_type(what: str, tp: type) -> None:
        base = id(tp)
        # Check the layout on a known type before trusting the offsets.
        if ptr_at(base + _TP_BASICSIZE) != tp.__basicsize__ or \
                ctypes.string_at(ptr_at(base + _TP_NAME)).decode(errors="replace").rsplit(".", 1)[-1] != tp.__name__:
            skipped.append(f"{what}: type layout not recognised")
            return
        for field, off in _TYPE_FIELDS:
            add(f"type {tp.__name__}", field, base + off, _PTR)
            if field in ("tp_call", "tp_descr_get"):
                add(f"type {tp.__name__}", f"{field} code", ptr_at(base + off), _CODE_BYTES)

    def add_methoddef(what: str, mdef: int, name: str) -> bool:
        if not mdef or ctypes.string_at(ptr_at(mdef)).decode(errors="replace") != name:
            return False
        for field, off in _METHODDEF_FIELDS:
            add(what, f"PyMethodDef.{field}", mdef + off, _PTR)
        add(what, "ml_meth code", ptr_at(mdef + 8), _CODE_BYTES)
        return True

    def add_callable(what: str, obj: Any) -> None:
        base = id(obj)
        if type(obj).__name__ == "builtin_function_or_method":
            fields, mdef_off, owner_off, owner = _CFUNC_FIELDS, 16, 24, obj.__self__
        elif type(obj).__name__ == "method_descriptor":
            fields, mdef_off, owner_off, owner = _DESCR_FIELDS, 40, 16, obj.__objclass__
        else:
            skipped.append(f"{what}: {type(obj).__name__} is not a C function")
            return
        if ptr_at(base + owner_off) != id(owner) or not ptr_at(base + 48):
            skipped.append(f"{what}: object layout not recognised")
            return
        mdef = ptr_at(base + mdef_off)
        if not add_methoddef(what, mdef, obj.__name__):
            skipped.append(f"{what}: PyMethodDef layout not recognised")
            return
        for field, off in fields:
            add(what, field, base + off, _PTR)
        add(what, "vectorcall code", ptr_at(base + 48), _CODE_BYTES)
        add_type(what, type(obj))

    if not _layout_supported():
        skipped.append(f"object layouts: Python {sys.version.split()[0]} not supported")
    else:
        for name in _CLOCK_FUNCTIONS:
            if hasattr(time, name):
                add_callable(f"time.{name}", getattr(time, name))
        torch_c = sys.modules.get("torch._C")
        if torch_c is not None:
            base_cls = getattr(torch_c, "_CudaEventBase", None)
            if base_cls is not None:
                for name in _EVENT_METHODS:
                    if name in base_cls.__dict__:
                        add_callable(f"torch._C._CudaEventBase.{name}", base_cls.__dict__[name])
            sync = getattr(torch_c, "_cuda_synchronize", None)
            if sync is not None:
                add_callable("torch._C._cuda_synchronize", sync)

    libc = ctypes.CDLL(None)
    for name in ("clock_gettime", "clock_gettime64", "gettimeofday"):
        fn = getattr(libc, name, None)
        if fn is not None:
            add(f"libc {name}", "code", ctypes.cast(fn, ctypes.c_void_p).value or 0, _CODE_BYTES)
    paths = sorted(_own_mapped_paths())
    if getattr(sys.modules.get("torch.version"), "cuda", None):  # a CUDA build (CPU torch has a dummy _CudaEventBase)
        for pattern, names in _CUDA_LIBS:
            if not any(pattern.search(p) for p in paths):  # CUDA not initialised yet: call after init
                skipped.append(f"{names[0]} and friends: {pattern.pattern} is not loaded")
    for path in paths:
        for pattern, names in _CUDA_LIBS:
            if not pattern.search(path):
                continue
            try:  # RTLD_NOLOAD: only a library that is already loaded
                lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            except OSError:
                continue
            for name in names:
                fn = getattr(lib, name, None)
                if fn is not None:
                    add(f"{os.path.basename(path)} {name}", "code",
                        ctypes.cast(fn, ctypes.c_void_p).value or 0, _CODE_BYTES)
    return {"pid": os.getpid(), "regions": regions, "skipped": skipped}


def _own_mapped_paths() -> set[str]:
    return {m.path for m in _maps("self")}


# --- judge side ------------------------------------------------------------------------------------

def alive(pid: int) -> bool:
    """Whether the process runs (a zombie nobody reaps does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def _first_readable_addr(pid: int) -> int | None:
    for m in _maps(pid):
        if m.perms.startswith("r"):
            return m.start
    return None


def probe(pid: int) -> bool:
    """Can the judge read this worker's memory? Call right after the worker starts.

    When False, audits of this pid are skipped (audit_timers returns []): the host does not allow
    it (another uid, ptrace_scope 2/3, no procfs), which is no evidence against the kernel.
    """
    ok = False
    try:
        addr = _first_readable_addr(pid)
        if addr is not None:
            fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
            try:
                ok = len(os.pread(fd, 16, addr)) == 16
            finally:
                os.close(fd)
    except OSError:
        ok = False
    _READABLE[pid] = ok
    return ok


def audit_timers(pid: int, fingerprint: dict[str, Any]) -> list[Finding]:
    """Compare the worker's memory now with its trusted fingerprint; one finding per changed region.

    Call after correctness and after timing, while the worker is alive (waiting for its next
    request). Needs a successful probe(pid) earlier.
    """
    if not _READABLE.get(pid) or not fingerprint or not fingerprint.get("regions"):
        return []
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError as e:
        return _unreadable(pid, f"open /proc/{pid}/mem: {e.strerror}")
    findings: list[Finding] = []
    try:
        for r in fingerprint["regions"]:
            old = bytes.fromhex(r["hex"])
            try:
                new = os.pread(fd, len(old), int(r["addr"]))
            except OSError as e:
                return _unreadable(pid, f"read {r['what']} {r['field']} at {int(r['addr']):#x}: {e.strerror}")
            if len(new) != len(old):
                return _unreadable(pid, f"short read of {r['what']} {r['field']} at {int(r['addr']):#x}")
            if new != old:
                findings.append(Finding(
                    "timer-patching",
                    f"{r['what']}: {r['field']} at {int(r['addr']):#x} changed after the kernel was "
                    f"imported: {_show(old)} -> {_show(new)} (native code rewrote what the clock calls)"))
    finally:
        os.close(fd)
    return findings


def _unreadable(pid: int, why: str) -> list[Finding]:
    if not alive(pid):
        return []  # the worker is gone; how it ended decides the verdict
    return [Finding("harness-introspection",
                    f"the kernel worker's memory became unreadable after the probe had read it ({why}): "
                    "the kernel hid its process from the audit (prctl(PR_SET_DUMPABLE, 0) or unmapped memory)")]


def _show(data: bytes) -> str:
    if len(data) == _PTR:
        return f"{struct.unpack('<Q', data)[0]:#x}"
    return data.hex()


# --- shared objects the kernel loaded --------------------------------------------------------------

class _Map:
    __slots__ = ("start", "end", "perms", "inode", "path")

    def __init__(self, start: int, end: int, perms: str, inode: int, path: str) -> None:
        self.start, self.end, self.perms, self.inode, self.path = start, end, perms, inode, path


def _maps(pid: int | str) -> Iterator[_Map]:
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 5)
            if len(parts) < 6 or not parts[5].startswith("/"):
                continue  # anonymous, [heap], [vdso], ...
            lo, hi = parts[0].split("-")
            yield _Map(int(lo, 16), int(hi, 16), parts[1], int(parts[4]), parts[5])


def mapped_objects(pid: int) -> set[str]:
    """Paths of the files mapped into the process (a " (deleted)" suffix kept as the kernel shows it)."""
    try:
        return {m.path for m in _maps(pid)}
    except OSError:
        return set()


# Imported symbols that only process tampering needs: an honest extension (torch's headers, pybind11,
# the C++ runtime) imports none of them (tests/hacks/test_native_audit.py lists what it does import).
_TAMPER_IMPORTS = {
    "mprotect": "timer-patching", "pkey_mprotect": "timer-patching",
    "ptrace": "harness-introspection", "process_vm_writev": "harness-introspection",
    "process_vm_readv": "harness-introspection",
}
# dlsym is honest in Triton's own launcher (cuLaunchKernelEx from libcuda); combined with a clock or
# event function's name it is how a detour finds the function to rewrite.
_DLSYM_IMPORTS = frozenset({"dlsym", "dlvsym"})
_CLOCK_STRINGS = re.compile(rb"EventElapsedTime|EventRecord|EventSynchronize|perf_counter|clock_gettime|"
                            rb"elapsed_time|_cuda_synchronize|cuGetProcAddress")
_TAMPER_STRINGS = (
    (re.compile(rb"/proc/(?:self|%d|%u|%i|%ld|\d+)/mem\x00"), "harness-introspection", "/proc/<pid>/mem"),
    (re.compile(rb"LD_PRELOAD"), "timer-patching", "LD_PRELOAD"),
)
_SCAN_BYTES = 256 << 20


def _trusted_roots() -> tuple[str, ...]:
    # Installed locations: the interpreter, its packages and the system's libraries. The kernel cannot
    # write there in the scoring sandbox, and their libraries (CUPTI imports mprotect and dlsym and
    # names cuEventElapsedTime) are loaded lazily by torch's profiler and CUDA, after the snapshot.
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/lib", "/lib64", "/opt/nvidia",
             "/usr/local/cuda"}
    try:
        roots.update(site.getsitepackages())
    except AttributeError:
        pass
    out = set()
    for r in roots:
        if r:
            out.add(r.rstrip("/") + "/")
            out.add(os.path.realpath(r).rstrip("/") + "/")
    return tuple(sorted(out))


def scan_new_objects(pid: int, before: set[str], trusted_roots: tuple[str, ...] | None = None) -> list[Finding]:
    """Shared objects mapped since `before` (taken with mapped_objects() at the trusted moment) and
    not under an installed location are scanned; one finding per object and pattern.

    Call in the judge after the kernel's first call (its extensions are loaded by then) or after
    timing, while the worker is alive.
    """
    roots = _trusted_roots() if trusted_roots is None else trusted_roots
    try:
        maps = list(_maps(pid))
    except OSError:
        return []
    findings: list[Finding] = []
    done: set[str] = set()
    for m in maps:
        path = m.path
        if path in before or path in done or path.startswith(roots):
            continue
        done.add(path)
        data = _read_mapped(pid, m)
        if data is None:
            # A shared object deleted while mapped (memfd and /dev mappings are the runtimes' own).
            if path.endswith(" (deleted)") and re.search(r"\.so\b", path) and not path.startswith(("/memfd:", "/dev/")):
                findings.append(Finding("harness-introspection",
                                        f"{path}: a file the kernel mapped was deleted, so it cannot be audited"))
            continue
        if data[:4] != b"\x7fELF":
            continue  # a data file (torch.load(mmap=True) and the like)
        findings.extend(_judge_object(path, data))
    return findings


def _read_mapped(pid: int, m: _Map) -> bytes | None:
    # The mapping itself (map_files) is what was loaded, even if the path now holds another file;
    # reading it needs CAP_SYS_ADMIN on some kernels, so fall back to the path with an inode check.
    candidates = [f"/proc/{pid}/map_files/{m.start:x}-{m.end:x}"]
    if not m.path.endswith(" (deleted)"):
        candidates.append(m.path)
    for cand in candidates:
        try:
            fd = os.open(cand, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_ino != m.inode:
                continue
            return os.pread(fd, min(st.st_size, _SCAN_BYTES), 0)
        except OSError:
            continue
        finally:
            os.close(fd)
    return None


def _judge_object(path: str, data: bytes) -> list[Finding]:
    names = _dynamic_names(data)
    found: dict[str, list[str]] = {}
    for name in sorted(names):
        if name in _TAMPER_IMPORTS:
            found.setdefault(_TAMPER_IMPORTS[name], []).append(f"imports {name}")
    if names & _DLSYM_IMPORTS:
        clock = sorted({m.group(0).decode() for m in _CLOCK_STRINGS.finditer(data)})
        if clock:
            found.setdefault("timer-patching", []).append(f"imports dlsym and names {', '.join(clock)}")
    for pattern, kind, label in _TAMPER_STRINGS:
        if pattern.search(data):
            found.setdefault(kind, []).append(f"contains the string {label}")
    return [Finding(kind, f"{path} (loaded by the kernel): {'; '.join(why)} — only process tampering needs this")
            for kind, why in found.items()]


def _dynamic_names(data: bytes) -> set[str]:
    """Symbol names of the dynamic string table (imports, exports, needed libraries), version suffix
    dropped. Found through the program headers (PT_DYNAMIC -> DT_STRTAB/DT_STRSZ), which the loader
    needs, so stripping section headers does not hide them."""
    try:
        if data[4] != 2 or data[5] != 1:  # ELFCLASS64, little-endian only
            return set()
        e_phoff, = struct.unpack_from("<Q", data, 0x20)
        e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
        loads, dynamic = [], None
        for i in range(e_phnum):
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", data, e_phoff + i * e_phentsize)
            if p_type == 1:
                loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == 2:
                dynamic = (p_offset, p_filesz)
        if dynamic is None:
            return set()
        strtab = strsz = None
        for off in range(dynamic[0], dynamic[0] + dynamic[1] - 15, 16):
            tag, val = struct.unpack_from("<qQ", data, off)
            if tag == 0:
                break
            if tag == 5:
                strtab = val
            elif tag == 10:
                strsz = val
        if strtab is None or strsz is None:
            return set()
        for vaddr, offset, filesz in loads:
            if vaddr <= strtab < vaddr + filesz:
                start = strtab - vaddr + offset
                table = data[start:start + strsz]
                return {s.split(b"@", 1)[0].decode(errors="replace") for s in table.split(b"\x00") if s}
    except (struct.error, IndexError):
        pass
    return set()
