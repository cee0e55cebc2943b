"""The kernel dialect (`obfuscated-code`): constructs that exist to hide what code does are refused,
not chased.

kernel.py reaches attributes by literal names, imports what is installed, and leaves the
interpreter's machinery alone. A computed attribute name, the module table, a frame, gc, ctypes,
code built from strings or a module the kernel wrote for itself can each turn any check into a
game of spelling; refusing the construct ends the game. Each finding names the construct, its line
and the fix. What another pattern already names for its threat is judged there, not twice:
threads and processes (`os.fork`, `subprocess`, `signal.setitimer`) are thread-injection, reading
files and the scorer's modules harness-introspection, assignments to library attributes
timer-patching, and native `dlsym`/`mprotect`/`ptrace` stay with the native tampering rules.
Measured on the honest corpora (clean, suite solutions, real model output): scripts/static_record.py.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys

from scorer.checks.static.astutil import _fold_str, _strip_cpp_comments, main_guard_nodes
from scorer.checks.static.rules import _C_LIKE, _SYS_MODULES
from scorer.checks.static.state import AnalyzerState

PATTERN = "obfuscated-code"

# getattr & co. take a name; kernel.py spells it: a string literal, or a loop over literals.
_NAME_TAKERS = {"getattr": 1, "setattr": 1, "delattr": 1, "hasattr": 1}
_NAME_METHODS = frozenset({"__getattribute__", "__getattr__", "__setattr__", "__delattr__"})
_NAME_CALLERS = frozenset({"operator.attrgetter", "operator.methodcaller"})
_FIX_NAME = "write the attribute's name literally (obj.name, or getattr(obj, \"name\", default))"

# Builtins that read or build namespaces and code.
_BUILTINS = {
    "globals": ("reads the module's namespace as a table", "refer to the names directly"),
    "locals": ("reads the frame's namespace as a table", "refer to the names directly"),
    "vars": ("reads an object's namespace as a table", "refer to the attributes by name (vars(self) is fine)"),
    "__import__": ("imports by a computed name", "write a plain import statement"),
    "exec": ("runs code built from a string, which no checker reads", "write the code in kernel.py"),
    "eval": ("runs code built from a string, which no checker reads", "write the expression in kernel.py"),
    "compile": ("builds code objects from strings", "write the code in kernel.py (torch.compile is a different thing)"),
}
# Modules whose purpose is the interpreter's or the process's machinery.
_MODULES = {
    "gc": "walks every live object", "inspect": "reads frames, code and namespaces",
    "importlib": "imports by computed names and edits the import system", "builtins": "is the builtins' namespace",
    "__builtin__": "is the builtins' namespace", "ctypes": "gives raw memory and native calls",
    "_ctypes": "gives raw memory and native calls", "cffi": "gives raw memory and native calls",
    "marshal": "loads code objects", "pickle": "loads code", "_pickle": "loads code", "dill": "loads code",
    "cloudpickle": "loads code", "copyreg": "registers code to run at unpickling",
    "runpy": "runs modules by name", "codeop": "compiles code from strings", "code": "runs code from strings",
    "atexit": "runs code after the kernel's turn", "fcntl": "edits file descriptors",
    "select": "waits on file descriptors", "selectors": "waits on file descriptors",
    "mmap": "maps raw memory", "resource": "edits the process's limits", "socket": "opens descriptors to anywhere",
    "tracemalloc": "traces the interpreter's allocations", "faulthandler": "hooks the interpreter's signals",
    "_testcapi": "reaches the C API", "_testinternalcapi": "reaches the C API", "imp": "imports by computed names",
    "pkgutil": "walks and loads modules by name", "dis": "reads code objects", "pdb": "installs trace hooks",
    "bdb": "installs trace hooks", "signal": "installs handlers that run outside the kernel's turn",
    "pydoc": "resolves dotted names to objects",
}
_FIX_MODULE = ("kernel.py needs only torch, triton, math and the like; native code goes in a "
               "load_inline extension")
# Names reached by reference (a call, an alias, getattr with a literal): the interpreter's tables
# and hooks, code and frame types, and file-descriptor plumbing.
_NAMES = {
    _SYS_MODULES: "the module table", "sys._getframe": "a frame", "sys._current_frames": "every thread's frame",
    "sys.settrace": "a trace hook", "sys.setprofile": "a profile hook", "sys.monitoring": "a monitoring hook",
    "sys.addaudithook": "an audit hook", "sys.meta_path": "the import system", "sys.path_hooks": "the import system",
    "sys.path": "the import path, where a planted module is found", "numpy.ctypeslib": "ctypes",
    "typing.get_type_hints": "annotations evaluated as code",
    "sys.path_importer_cache": "the import system", "sys.modules.__setitem__": "the module table",
    "types.FunctionType": "a function built from a code object", "types.CodeType": "a code object",
    "types.FrameType": "a frame type", "types.CellType": "a closure cell", "types.ModuleType": "a module built at run time",
    "types.TracebackType": "a traceback", "types.GeneratorType": "a generator's internals",
}
_OS_DESCRIPTORS = frozenset({
    "dup", "dup2", "pipe", "pipe2", "write", "read", "pwrite", "pread", "readv", "writev", "open", "fdopen",
    "close", "closerange", "set_inheritable", "set_blocking", "setsid", "setpgid", "setpgrp", "_exit", "abort",
    "lseek", "sendfile", "memfd_create", "eventfd", "openpty", "login_tty", "fchdir", "fchmod", "fchown",
    "ftruncate", "splice", "copy_file_range", "ttyname", "tcsetpgrp", "fork", "forkpty", "kill", "killpg",
    "system", "popen", "posix_spawn", "posix_spawnp", "register_at_fork",
})
_FIX_OS = "kernel.py has no use for descriptors or processes: launch kernels and return tensors"
# Frame, code, generator and class internals: how code reaches the scorer's objects.
_ATTRS = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace", "f_lasti", "tb_frame", "tb_next",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "co_code", "co_consts", "co_names",
    "__globals__", "__closure__", "__code__", "__defaults__", "__kwdefaults__", "__subclasses__", "__builtins__",
    "__self__", "__mro__", "__bases__", "__base__", "__dict__", "__reduce_ex__", "__getattribute__", "__loader__", "__spec__",
})
_FIX_ATTR = "use the object's public attributes by name; kernel.py has no use for frames, code or class internals"
# `"{0.__globals__}".format(f)`: str.format looks attributes up by the names in the string.
_FORMAT_REACH = re.compile(r"\{[\w\[\]]*[.\[](?:__\w+__|f_\w+|gi_\w+|cr_\w+|tb_\w+|co_\w+)")
# Files a module can be imported from: written by the kernel, they carry code no checker reads.
_CODE_FILE = re.compile(r"\.(?:py|pyc|pyw|so|pth|pyd)$")

# Calls that turn unreadable data into text: decoders, decompressors, character codes.
_DECODERS = frozenset({"decode", "fromhex", "translate", "b64decode", "b85decode", "a85decode", "b32decode",
                       "b16decode", "urlsafe_b64decode", "standard_b64decode", "unhexlify", "a2b_base64", "a2b_hex",
                       "decompress", "chr", "bytes", "bytearray", "frombuffer", "loads", "reversed"})
# Native sources (load_inline strings): the C API reaching the interpreter, and libc's descriptor,
# process and syscall plumbing. A call, not a member (`x.clone()`, `std::` are not libc's).
_NATIVE = (
    (re.compile(r"\bPyImport_\w+|\bPyEval_Set(?:Profile|Trace)\w*|\bPyEval_GetFrame\w*|\bPySys_\w+|\bPyFrame\w*"
                r"|\bPyThreadState_GetFrame\b|\bPyObject_(?:Generic)?(?:Get|Set|Del)Attr\b|\bPyRun_\w+"
                r"|\bPy_CompileString\w*|\bPyEval_EvalCode\w*|\b(?:py|pybind11)::module_?::import\b"
                r"|\b(?:py|pybind11)::(?:globals|eval|exec|eval_file)\b|\bPyInterpreterState_\w+"
                r"|\b_?PyEval_GetBuiltins\b|\bPyGILState_GetThisThreadState\b"),
     "the Python C API reaching the interpreter (imports, frames, hooks, computed attributes)",
     "keep the extension to tensors and launches (TORCH_CHECK, data_ptr, m.def)"),
    (re.compile(r"(?:(?<![\w.>:])|(?<![\w])::)(?:dup[23]?|pipe2?|v?fork|clone3?|syscall|execv\w*|execl\w*|system"
                r"|popen|kill|setsid|memfd_create|process_vm_\w+)\s*\("),
     "libc descriptor, process or syscall plumbing",
     "an extension computes on tensors; it has no use for descriptors or processes"),
)


@functools.lru_cache(maxsize=1)
def _installed() -> frozenset[str]:
    """Top-level names a kernel may import: the standard library and installed distributions."""
    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    names.update(importlib.metadata.packages_distributions())
    return frozenset(names)


class DialectScan(AnalyzerState):
    """obfuscated-code (mixed into the analyzer)."""

    def scan_dialect(self) -> None:
        never_runs = main_guard_nodes(self.tree)
        literal_loops = _literal_loop_names(self.tree)
        for sub in ast.walk(self.tree):
            if sub in never_runs:
                continue
            if isinstance(sub, ast.Import):
                for a in sub.names:
                    self._judge_module(sub, a.name)
            elif isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
                self._judge_module(sub, sub.module)
                for a in sub.names:  # `from sys import modules`, `from os import dup2`
                    if a.name == "*" and sub.module.split(".")[0] in ("os", "sys"):
                        self._dialect(sub, f"from {sub.module} import *", "its names are called bare, where no "
                                      "rule sees which", f"import {sub.module} and write {sub.module}.<name>")
                    self._judge_name(sub, f"{sub.module}.{a.name}")
            elif isinstance(sub, ast.Call):
                self._judge_call(sub, literal_loops)
            elif isinstance(sub, ast.Attribute) and sub.attr in _ATTRS:
                if sub.attr == "__dict__" and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls"):
                    continue  # the kernel's own object's fields, as vars(self)
                self._dialect(sub, f".{sub.attr}", "reaches frames, code, namespaces or class internals", _FIX_ATTR)
            elif isinstance(sub, ast.Name) and sub.id in ("__builtins__", "__loader__", "__spec__") \
                    and isinstance(sub.ctx, ast.Load):
                self._dialect(sub, sub.id, "reaches the interpreter's module machinery", _FIX_ATTR)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and (reach := _FORMAT_REACH.search(sub.value)):
                self._dialect(sub, f"format string {reach.group(0)!r}",
                              "str.format looks up internals by the names in the string", _FIX_ATTR)
            elif isinstance(sub, ast.Name) and sub.id in _VALUE_BUILTINS and isinstance(sub.ctx, ast.Load) \
                    and not (isinstance(caller := self.parents.get(sub), ast.Call) and caller.func is sub) \
                    and not self._shadowed(sub.id):
                # `g = getattr; g(torch, name)`: a builtin handed around is called where no rule looks
                self._dialect(sub, f"{sub.id} as a value", "the builtin is called where its arguments are not "
                              "visible", f"call {sub.id}(...) directly")
            if isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load) \
                    and not isinstance(self.parents.get(sub), ast.Attribute):
                name = self.resolve(sub)
                if name:
                    self._judge_name(sub, name)
                elif isinstance(sub, ast.Attribute):  # `m.sys.modules` with m a parameter: judge the path
                    self._judge_name(sub, _attribute_path(sub), reexports=False)
        self._scan_native_dialect()

    # --- judges ------------------------------------------------------------------------------

    def _dialect(self, node: ast.AST, what: str, why: str, fix: str) -> None:
        self.add(PATTERN, node, what, f"{why}; fix: {fix}")

    def _judge_module(self, node: ast.AST, module: str) -> None:
        parts = module.split(".")
        top = parts[0]
        if top in _PARTLY and (len(parts) == 1 or parts[1] in _PARTLY[top]):
            return  # judged by the names used (_judge_name)
        why = _MODULES.get(module) or _MODULES.get(top)
        if why:
            self._dialect(node, f"import {module}", f"this module {why}", _FIX_MODULE)
        elif top not in _installed() and top not in _SCORER_PACKAGES:
            self._dialect(node, f"import {module}",
                          f"'{top}' is neither the standard library nor an installed package: a module beside the "
                          "kernel carries code no checker reads", "put the code in kernel.py")

    def _judge_name(self, node: ast.AST, name: str, reexports: bool = True) -> None:
        """A dotted name, at every depth: `torch.sys.modules` and `os.sys` are sys's re-exports."""
        parts = name.split(".")
        for k, part in enumerate(parts):
            pair = ".".join(parts[k:k + 2])
            nxt = parts[k + 1] if k + 1 < len(parts) else ""
            if k == 0 and part in _PARTLY:
                if nxt in _PARTLY[part]:
                    continue  # and what the allowed part re-exports is judged on (importlib.metadata.sys)
                self._dialect(node, pair if nxt else f"{part} (the module as a value)", f"this module "
                              f"{_MODULES[part]}", f"of {part}, kernel.py may use {', '.join(sorted(_PARTLY[part]))}")
                return
            if pair in _NAMES:
                self._dialect(node, pair, f"reaches {_NAMES[pair]}", "kernel.py has no use for the interpreter's "
                              "tables and hooks: import what you need by name")
            elif part == "sys" and nxt.startswith("_"):
                self._dialect(node, pair, "reaches the interpreter's private hooks and frames", _FIX_MODULE)
            elif part == "os" and (nxt in _OS_DESCRIPTORS or nxt.startswith(("exec", "spawn"))):
                if nxt in _THREAD_OWNED or nxt.startswith(("exec", "spawn")):
                    return  # processes: thread-injection names them
                self._dialect(node, pair, "file-descriptor or process plumbing", _FIX_OS)
            elif reexports and k >= 1 and part in _REEXPORTED:
                self._dialect(node, ".".join(parts[:k + 1]), f"reaches the {part} module through another module",
                              f"kernel.py has no use for {part}")
            else:
                continue
            return

    def _shadowed(self, raw: str) -> bool:
        return raw in self.mod.aliases or self.locally_defined(raw)

    def _own_object(self, call: ast.Call) -> bool:
        """`getattr(self, f"layer{i}")` in a method reached only as `self.method`: a computed name
        with a literal prefix, on the kernel's own object (nn.Module code registers layers so)."""
        if not call.args or not (isinstance(call.args[0], ast.Name) and call.args[0].id == "self"):
            return False
        prefix = _literal_prefix(call.args[1]) if len(call.args) > 1 else None
        if not prefix or prefix.startswith("_"):
            return False
        fn = self.parents.get(call)
        while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            fn = self.parents.get(fn)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(self.parents.get(fn), ast.ClassDef):
            return False
        if not fn.args.args or fn.args.args[0].arg != "self":
            return False
        for node in ast.walk(self.tree):  # `Cls.method(torch, ...)` would hand it another object as self
            if isinstance(node, ast.Name) and node.id == fn.name and isinstance(node.ctx, ast.Load):
                return False
            if isinstance(node, ast.Attribute) and node.attr == fn.name and not (
                    isinstance(node.value, ast.Name) and node.value.id == "self") and not _is_super(node.value):
                return False
        return True

    def _judge_call(self, call: ast.Call, literal_loops: set[str]) -> None:
        func = call.func
        raw = func.id if isinstance(func, ast.Name) else None
        shadowed = raw is not None and self._shadowed(raw)
        if raw in _NAME_TAKERS and not shadowed:
            index = _NAME_TAKERS[raw]
            name_arg = call.args[index] if len(call.args) > index else None
            if not _literal_name(name_arg, literal_loops) and not self._own_object(call):
                self._dialect(call, f"{raw}() with a computed name", "the attribute's name is computed, "
                              "so no reader or checker knows what it reaches", _FIX_NAME)
            elif isinstance(name_arg, ast.Constant) and name_arg.value in _ATTRS and not (
                    name_arg.value == "__dict__" and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"):
                self._dialect(call, f"{raw}(…, {name_arg.value!r})", "reaches frames, code, namespaces or class "
                              "internals", _FIX_ATTR)  # the literal spelling of `.f_back`
            elif raw == "getattr" and self.resolve(call):  # getattr(os, "dup2") is os.dup2
                self._judge_name(call, str(self.resolve(call)))
            return
        if raw in _BUILTINS and not shadowed:
            if raw == "vars" and len(call.args) == 1 and isinstance(call.args[0], ast.Name) \
                    and call.args[0].id in ("self", "cls"):
                return
            why, fix = _BUILTINS[raw]
            self._dialect(call, f"{raw}()", why, fix)
            return
        if raw == "open" and not shadowed:
            self._judge_code_file(call, call.args[0] if call.args else None, _open_mode(call))
            return
        if isinstance(func, ast.Attribute):
            forwarded = _is_super(func.value)  # `super().__getattr__(name)` in a Module's own __getattr__
            if func.attr in _NAME_METHODS and not forwarded \
                    and not _literal_name(call.args[0] if call.args else None, literal_loops):
                self._dialect(call, f".{func.attr}() with a computed name", "the attribute's name is computed",
                              _FIX_NAME)
            elif func.attr in ("write_text", "write_bytes", "open", "symlink_to", "hardlink_to", "rename", "replace",
                               "link_to"):
                mode = _open_mode(call) if func.attr == "open" else "w"
                self._judge_code_file(call, ast.Tuple(elts=[func.value, *call.args], ctx=ast.Load()), mode)
        name = self.resolve(func)
        if name and (name.startswith("shutil.") or name in ("os.rename", "os.replace", "os.link", "os.symlink")):
            self._judge_code_file(call, ast.Tuple(elts=list(call.args), ctx=ast.Load()), "w")
        if name in _NAME_CALLERS and not all(_literal_name(a, literal_loops) for a in call.args):
            self._dialect(call, f"{name}() with a computed name", "the attribute's name is computed", _FIX_NAME)
        elif name in _NAME_CALLERS and any(part in _ATTRS for a in call.args if isinstance(a, ast.Constant)
                                           for part in str(a.value).split(".")):
            self._dialect(call, f"{name}() of an internal", "reaches frames, code, namespaces or class internals",
                          _FIX_ATTR)

    def _judge_code_file(self, call: ast.Call, path: ast.AST | None, mode: str | None) -> None:
        """Writing a file Python or the loader can import: a module planted for a later import."""
        if path is None or mode is None or not re.search(r"[wax+]", mode):
            return
        # `path = os.path.join(here, "m.py"); open(path, "w")`: the name's assigned values too
        values = [path] + [v for n in ast.walk(path) if isinstance(n, ast.Name) for v in self._assigned(n.id)]
        for node in (sub for v in values for sub in ast.walk(v)):
            text = _fold_str(node)
            if text and _CODE_FILE.search(text.strip()):
                self._dialect(call, f"writes {text.strip()[-40:]!r}",
                              "writes a module or shared object to import later: code no checker reads",
                              "put the code in kernel.py, native code in a load_inline extension")
                return

    def _assigned(self, name: str) -> list[ast.AST]:
        if not hasattr(self, "_assignments"):
            self._assignments: dict[str, list[ast.AST]] = {}
            for node in ast.walk(self.tree):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            self._assignments.setdefault(t.id, []).append(node.value)
        return self._assignments.get(name, [])

    def _scan_unreadable_native(self) -> None:
        """load_inline's sources are text a reader can read: literals, names bound to them, templates
        filled in (f-strings, format, replace, join), local functions returning such. Text decoded,
        decompressed, reversed or built from character codes hides the native code from every scan."""
        for call, sources in self.load_inline_calls():
            seen: set[ast.AST] = set()
            stack: list[ast.AST] = list(sources)
            while stack:
                node = stack.pop()
                if node in seen:
                    continue
                seen.add(node)
                for sub in ast.walk(node):
                    hidden = self._hiding(sub)
                    if hidden:
                        self._dialect(call, f"native source built by {hidden}", "the extension's code is not in "
                                      "kernel.py as text, so no scan reads it", "write the C++/CUDA source as a string "
                                      "literal (templates filled in with format/replace are fine)")
                        stack.clear()
                        break
                    if isinstance(sub, ast.Name):
                        stack.extend(self._assigned(sub.id))
                    elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                        stack.extend(f.node for f in self.mod.funcs if f.name == sub.func.id)

    def _hiding(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.step is not None:
            return "a stepped slice (text reversed or interleaved)"
        if isinstance(node, ast.Call):
            func = node.func
            leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if leaf in _DECODERS and not (isinstance(func, ast.Name) and self._shadowed(leaf)):
                return f"{self.resolve(func) or leaf}()"
        if isinstance(node, ast.Name) and node.id in _DECODERS and not self._shadowed(node.id):
            return node.id  # map(chr, codes)
        return None

    def _scan_native_dialect(self) -> None:
        self._scan_unreadable_native()
        native = self.native_source_nodes()
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if node not in native and not _C_LIKE.search(node.value):
                continue
            code = _strip_cpp_comments(node.value)
            for regex, why, fix in _NATIVE:
                hits = list(regex.finditer(code))
                if hits:
                    line = getattr(node, "lineno", 0) + code.count("\n", 0, hits[0].start())
                    tokens = ", ".join(dict.fromkeys(m.group(0).strip(" (") for m in hits))
                    self._dialect(ast.Constant(value=None, lineno=line), f"native source calling {tokens}", why, fix)


# Modules judged by the names used: these parts read a signature or a version and reach nothing.
_PARTLY = {
    "inspect": frozenset({"signature", "Signature", "Parameter", "isclass", "isfunction", "ismethod", "isroutine",
                          "iscoroutinefunction", "isabstract", "getfullargspec"}),
    "importlib": frozenset({"metadata"}),
}
# Builtins that take or run names and code: handed around as values they are called unseen.
_VALUE_BUILTINS = frozenset(_NAME_TAKERS) | frozenset(_BUILTINS)
# Modules other modules re-export (`torch.sys`, `os.sys`, `numpy.ctypeslib`'s ctypes): reached
# through another module they are still themselves.
_REEXPORTED = frozenset({"sys", "os", "gc", "inspect", "importlib", "ctypes", "_ctypes", "builtins", "marshal",
                         "pickle", "atexit", "fcntl", "mmap", "socket", "_thread", "subprocess", "cffi"})
# os.* names thread-injection already judges (processes and signals).
_THREAD_OWNED = frozenset({"fork", "forkpty", "kill", "system", "popen", "posix_spawn", "posix_spawnp",
                           "register_at_fork"})
# Relative and scorer imports are harness-introspection's (they reach the scorer's own code).
_SCORER_PACKAGES = frozenset({"scorer", "kernelarena", "orchestrator", "harnesses", "sandbox"})


def _attribute_path(node: ast.Attribute) -> str:
    """`a.b.c` of an attribute chain, its root written `?` when it is not a plain name."""
    parts: list[str] = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    parts.append(cur.id if isinstance(cur, ast.Name) else "?")
    return ".".join(reversed(parts))


def _is_super(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _literal_prefix(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        return _literal_prefix(node.values[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal_prefix(node.left)
    return None


def _literal_name(node: ast.AST | None, literal_loops: set[str]) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    return isinstance(node, ast.Name) and node.id in literal_loops


def _literal_loop_names(tree: ast.Module) -> set[str]:
    """Names bound only as the target of `for name in ("a", "b")` (a loop over literal names)."""
    loops: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            literal = isinstance(node.iter, (ast.Tuple, ast.List, ast.Set)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.iter.elts)
            loops[node.target.id] = loops.get(node.target.id, True) and literal
    targets = {id(n.target) for n in ast.walk(tree) if isinstance(n, (ast.For, ast.comprehension))}
    stored_elsewhere = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                        and id(n) not in targets}
    return {name for name, literal in loops.items() if literal and name not in stored_elsewhere}


def _open_mode(call: ast.Call) -> str | None:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return "r"
    return _fold_str(mode) or "w"  # a computed mode may write
