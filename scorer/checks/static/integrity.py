"""Integrity patterns judged everywhere in the file: threads, patching, introspection, streams."""

from __future__ import annotations

import ast
import re

from scorer.checks.static.astutil import (
    _flatten_targets,
    _fold_str,
    _Func,
    _walk_own,
    main_guard_nodes,
)
from scorer.checks.static.rules import (
    _FILE_METHODS,
    _INTROSPECTION_BUILTINS,
    _INTROSPECTION_CALLS,
    _INTROSPECTION_IMPORT_OK,
    _INTROSPECTION_MODULES,
    _MODE_STACK_SWITCHES,
    _PATCH_OK_PREFIXES,
    _STREAM_JOIN_METHODS,
    _STREAM_JOINS,
    _STREAM_SWITCHES,
    _SYS_MODULES,
    _THREAD_CALL_PREFIXES,
    _THREAD_CALLS,
    _THREAD_METHODS,
    _THREAD_MODULES,
    _THREADING_SAFE,
    _TIMER_TARGETS,
)
from scorer.checks.static.state import AnalyzerState


class IntegrityScan(AnalyzerState):
    """thread-injection, timer-patching, harness-introspection, stream-injection (mixed into the analyzer)."""

    # --- integrity: threads, patching, introspection ------------------------------------------------

    def scan_integrity(self) -> None:
        never_runs = main_guard_nodes(self.tree)  # a self-test ending in sys.exit() is the file's own affair
        for sub in ast.walk(self.tree):
            if sub in never_runs:
                continue
            switch = (sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name)
                      else sub.value if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else None)
            if switch in _MODE_STACK_SWITCHES:
                self.add("harness-introspection", sub, str(switch),
                         "switches off or edits torch's mode stacks or dispatch keys, where the library-call monitor runs")
                continue
            if isinstance(sub, ast.Import):
                for a in sub.names:
                    self.judge_import(sub, a.name)
            elif isinstance(sub, ast.ImportFrom):
                if sub.level:
                    self.add("harness-introspection", sub, f"from {'.' * sub.level}{sub.module or ''} import …",
                             "relative import reaches the scorer's or task's package")
                elif sub.module == "threading" and any(a.name == "*" for a in sub.names):
                    self.add("thread-injection", sub, "from threading import *",
                             "threads/processes can do work outside the timed region")
                elif sub.module:
                    self.judge_import(sub, sub.module)
            elif isinstance(sub, ast.Call):
                self.judge_call(sub)
            elif isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target]
                for target in targets:
                    for t in _flatten_targets(target):
                        self.judge_patch_target(t)
            elif isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load) \
                    and self.judge_threading(sub):
                continue
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if re.search(r"/proc/(self|\d+|thread-self)|/dev/(fd|mem)|\bscorer[/.](?:worker|judge|timing)", sub.value):
                    self.add("harness-introspection", sub, repr(sub.value[:60]),
                             "names process internals or the scorer's files")

    def judge_threading(self, node: ast.Attribute | ast.Name) -> bool:
        """`threading.<name>` other than a lock or a thread-local, or the module itself used as a
        value (`getattr(threading, ...)`), is thread-injection. True where it was judged here."""
        name = self.resolve(node)
        if name is None or name.split(".")[0] != "threading":
            return False
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return True  # `threading.X` inside `threading.X.y`: the outer attribute is judged
        if name == "threading" or name.split(".")[1] not in _THREADING_SAFE:
            self.add("thread-injection", node, "threading (the module as a value)" if name == "threading" else name,
                     "threads/processes can do work outside the timed region")
        return True

    def judge_import(self, node: ast.AST, module: str) -> None:
        top = module.split(".")[0]
        if module == "threading":
            return  # judged by the names used (judge_threading)
        if any(module == m or module.startswith(m + ".") for m in _THREAD_MODULES):
            self.add("thread-injection", node, f"import {module}",
                     "threads/processes can do work outside the timed region")
            return
        if module in ("os.fork", "os.system", "os.popen") or module.startswith(("os.exec", "os.spawn")):
            self.add("thread-injection", node, f"import {module}", "spawns processes")
            return
        if top in _INTROSPECTION_MODULES and top not in _INTROSPECTION_IMPORT_OK:
            self.add("harness-introspection", node, f"import {module}",
                     "this module exists to inspect or reach the harness")

    def judge_call(self, call: ast.Call) -> None:
        name = self.resolve(call.func)
        raw = call.func.id if isinstance(call.func, ast.Name) else None
        if name:
            if name in _THREAD_CALLS or name.startswith(_THREAD_CALL_PREFIXES):
                self.add("thread-injection", call, f"{name}()", "runs work concurrently or in another process")
                return
            if name in _INTROSPECTION_CALLS:
                self.add("harness-introspection", call, f"{name}()",
                         "reads frames, file descriptors or files outside the kernel")
                return
            if name.startswith(("ctypes.", "_ctypes.")):  # ctypes itself is the dialect's (obfuscated-code)
                lib = " ".join(_fold_str(a) or "" for a in call.args)
                if re.search(r"cublas|cudnn|rocblas|miopen|hipblas", lib):
                    self.add("baseline-library-call", call, f"{name}({lib!r})", "a vendor library reached through ctypes")
                return
        if (raw == "__import__" or name == "importlib.import_module") and call.args:
            target = _fold_str(call.args[0])
            if target:
                self.judge_import(call, target)
        if raw in _INTROSPECTION_BUILTINS and raw not in self.mod.aliases and not self.locally_defined(raw):
            self.add("harness-introspection", call, f"{raw}()",
                     "reads files or runs code hidden from static analysis")
            return
        if raw in ("setattr", "delattr") or name in ("object.__setattr__", "type.__setattr__", "builtins.setattr"):
            tname = self.resolve(call.args[0]) if call.args else None
            if tname and not tname.startswith(_PATCH_OK_PREFIXES):
                attr = _fold_str(call.args[1]) if len(call.args) > 1 else None
                self.add("timer-patching", call, f"{raw or name}({tname}, {attr or '…'!s})",
                         "monkeypatches a module the scorer or the reference relies on")
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("__setattr__", "__delattr__"):
            # `time.__setattr__("perf_counter", f)`: the bound spelling of setattr(time, ...)
            tname = self.resolve(call.func.value)
            if tname and not tname.startswith(_PATCH_OK_PREFIXES):
                attr = _fold_str(call.args[0]) if call.args else None
                self.add("timer-patching", call, f"{tname}.{call.func.attr}({attr or '…'!s})",
                         "monkeypatches a module the scorer or the reference relies on")
                return
        if isinstance(call.func, ast.Attribute) and call.func.attr in _FILE_METHODS and name is None:
            self.add("harness-introspection", call, f".{call.func.attr}()", "reads or writes files")
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr in _THREAD_METHODS:
            self.add("thread-injection", call, f".{call.func.attr}()", "runs work on an executor thread")
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("update", "__setitem__", "setdefault") \
                and isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "__dict__":
            base = self.resolve(call.func.value.value)
            if base:
                self.add("timer-patching", call, f"{base}.__dict__.{call.func.attr}()", "monkeypatches a module")

    def locally_defined(self, name: str) -> bool:
        return any(f.name == name for f in self.mod.funcs) or name in self.mod.classes

    def judge_patch_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = self.resolve(target)
            if name and name.startswith(_TIMER_TARGETS) and not name.startswith(_PATCH_OK_PREFIXES):
                self.add("timer-patching", target, f"{name} = …",
                         "replaces a library/timer attribute the scorer or the reference uses")
        elif isinstance(target, ast.Subscript):
            base = target.value
            if isinstance(base, ast.Attribute) and base.attr == "__dict__":
                name = self.resolve(base.value)
                if name:
                    self.add("timer-patching", target, f"{name}.__dict__[…] = …", "monkeypatches a module")
            elif isinstance(base, ast.Name) and base.id == "__builtins__":
                self.add("timer-patching", target, "__builtins__[…] = …", "monkeypatches builtins")
            elif self.resolve(base) == _SYS_MODULES:
                self.add("harness-introspection", target, "sys.modules[…] = …", "replaces a loaded module")

    # --- streams ---------------------------------------------------------------------------------

    def scan_streams(self, funcs: list[_Func]) -> None:
        """Launching on another stream is fine when forward-time code joins it back (wait_stream,
        wait_event, a synchronize); without any join the caller's stream, and a timer recording
        events on it, does not see the work."""
        switches: list[tuple[ast.AST, str]] = []
        joined = False
        for fn in funcs:
            for sub in _walk_own(fn.node):
                if not isinstance(sub, ast.Call):
                    continue
                name = self.resolve(sub.func) or ""
                method = sub.func.attr if isinstance(sub.func, ast.Attribute) else ""
                if name in _STREAM_SWITCHES:
                    switches.append((sub, name))
                if name in _STREAM_JOINS or method in _STREAM_JOIN_METHODS:
                    joined = True
        if switches and not joined:
            for node, name in switches:
                self.add("stream-injection", node, f"{name}(...)",
                         "work goes to another stream and no forward-time code joins it back "
                         "(wait_stream / wait_event / synchronize)")
