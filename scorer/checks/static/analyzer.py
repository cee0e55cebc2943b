"""The analyzer: resolves names, finds forward-time code, runs every scan."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from scorer.checks.catalog import Finding, Severity
from scorer.checks.static.astutil import (
    _flatten_targets,
    _fold_str,
    _Func,
    _host_only_nodes,
    _is_main_guard,
    _Module,
    _own_lambdas,
    _sub_bodies,
    _walk_own,
)
from scorer.checks.static.behaviour import BehaviourScan
from scorer.checks.static.compute import ComputeScan
from scorer.checks.static.dialect import DialectScan
from scorer.checks.static.integrity import IntegrityScan
from scorer.checks.static.native import NativeScan
from scorer.checks.static.rules import (
    _NN_CONTAINERS,
    _ROOT_METHODS,
    _SYS_MODULES,
    _callable_or_unknown,
)
from scorer.tasks.suites import LibraryPolicy


def analyze_source(source: str, filename: str, policy: LibraryPolicy,
                   task_dtype: str | None = None) -> list[Finding]:
    """All static findings for one solution file. `task_dtype` (an extension of the hook's
    signature, optional) silences precision flags when the task itself is half precision."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        # Not ours to report: the worker's import fails and the verdict is compile_error.
        return []
    analyzer = _Analyzer(tree, filename, policy, task_dtype)
    return analyzer.run()


def forward_library_ops(source: str, filename: str, policy: LibraryPolicy) -> list[str]:
    """The torch compute ops forward-time code names (`kernel.py:LINE: op (reached via ...)`).
    They are not findings: how much of forward's work they do is measured at run time
    (scorer/checks/work.py). Listed for `kernelarena` explanations and for tests of the resolver."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        return []
    analyzer = _Analyzer(tree, filename, policy, None)
    analyzer.run()
    return list(dict.fromkeys(analyzer.library_ops))



class _Analyzer(ComputeScan, IntegrityScan, DialectScan, NativeScan, BehaviourScan):
    def __init__(self, tree: ast.Module, filename: str, policy: LibraryPolicy,
                 task_dtype: str | None) -> None:
        self.tree = tree
        self.file = filename.rsplit("/", 1)[-1]
        self.policy = policy
        self.check_precision = (task_dtype or "float32") not in ("float16", "bfloat16", "half")
        self.mod = _Module()
        self.findings: dict[tuple[str, int, str], Finding] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self._host_only: dict[ast.AST, set[ast.AST]] = {}
        # torch ops in forward-time code: not findings; the run-time work share judges them.
        self.library_ops: list[str] = []
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    # --- plumbing --------------------------------------------------------------------------

    def add(self, pattern: str, node: ast.AST, what: str, why: str, severity: Severity = "reject") -> None:
        line = getattr(node, "lineno", 0)
        key = (pattern, line, what)
        if key not in self.findings:
            self.findings[key] = Finding(pattern, f"{self.file}:{line}: {what} — {why}", severity)

    def run(self) -> list[Finding]:
        self.collect_aliases()
        self.collect_functions()
        self.collect_module_attrs()
        reachable = self.reachable()
        self.scan_integrity()
        self.scan_dialect()
        self.scan_class_bases()
        for fn in self.mod.funcs:
            if fn.in_main_guard:
                continue
            if fn.jit:
                self.scan_precision(fn.node, jit=True)
                continue
            if fn.qualname in reachable or fn.deferred:
                self.scan_compute(fn, via=reachable.get(fn.qualname, "deferred code"))
                self.scan_sniffing(fn)
                self.scan_precision(fn.node, jit=False)
            else:  # __init__ and other init-time code: may compute, may not store ops for later
                self.scan_stored_ops(fn.node, fn.qualname)
        self.scan_stored_ops(self.tree, "module level", top_level_only=True)
        self.scan_torch_op_overrides()
        self.scan_streams([fn for fn in self.mod.funcs if fn.qualname in reachable or fn.deferred])
        self.scan_cpp_strings()
        self.scan_residency()
        return list(self.findings.values())

    # --- names ---------------------------------------------------------------------------------

    def collect_aliases(self) -> None:
        aliases = self.mod.aliases
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        aliases.setdefault(top, top)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    if a.name != "*":
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        # `mm = torch.matmul` style aliases, to a fixed point (aliases of aliases).
        for _ in range(3):
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    target = node.targets[0].id
                    resolved = self.resolve(node.value)
                    if resolved and target not in aliases:
                        aliases[target] = resolved

    def resolve(self, node: ast.AST | None) -> str | None:
        """Dotted name an expression refers to, or None when it is not a module path."""
        if isinstance(node, ast.Name):
            return self.mod.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and node.func.id not in self.mod.aliases:
            base = self.resolve(node.args[0])
            attr = _fold_str(node.args[1])
            if base and attr:
                return f"{base}.{attr}"
        if isinstance(node, ast.Subscript) and self.resolve(node.value) == _SYS_MODULES:
            return _fold_str(node.slice)
        if isinstance(node, ast.Call) and node.args and (
                self.resolve(node.func) == "importlib.import_module"
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")):
            return _fold_str(node.args[0])
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "__dict__":
            base = self.resolve(node.value.value)
            key = _fold_str(node.slice)
            if base and key:
                return f"{base}.{key}"
        return None

    # --- structure -----------------------------------------------------------------------------

    def collect_functions(self) -> None:
        def visit(body: Iterable[ast.stmt], cls: str | None, prefix: str, enclosing: _Func | None,
                  main_guard: bool) -> None:
            for stmt in body:
                if isinstance(stmt, ast.ClassDef):
                    if enclosing is None:
                        self.mod.classes[stmt.name] = stmt
                    visit(stmt.body, stmt.name, f"{prefix}{stmt.name}.", enclosing, main_guard)
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    fn = _Func(stmt, f"{prefix}{stmt.name}", cls if enclosing is None else None,
                               stmt.name, jit=self.is_jit(stmt), deferred=enclosing is not None,
                               in_main_guard=main_guard)
                    self.mod.funcs.append(fn)
                    visit(stmt.body, None, f"{fn.qualname}.", fn, main_guard)
                    for lam in _own_lambdas(stmt):
                        self.mod.funcs.append(_Func(lam, f"{fn.qualname}.<lambda:{lam.lineno}>",
                                                    None, "<lambda>", deferred=True,
                                                    in_main_guard=main_guard))
                elif isinstance(stmt, ast.If) and _is_main_guard(stmt):
                    visit(stmt.body, cls, prefix, enclosing, True)
                    visit(stmt.orelse, cls, prefix, enclosing, main_guard)
                else:
                    if enclosing is None:
                        for lam in (n for n in ast.walk(stmt) if isinstance(n, ast.Lambda)):
                            self.mod.funcs.append(_Func(lam, f"{prefix}<lambda:{lam.lineno}>", None,
                                                        "<lambda>", deferred=True,
                                                        in_main_guard=main_guard))
                    for child_body in _sub_bodies(stmt):
                        visit(child_body, cls, prefix, enclosing, main_guard)

        visit(self.tree.body, None, "", None, False)

    def is_jit(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for dec in fn.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = self.resolve(target) or ""
            if name.startswith("triton.") or name.startswith("numba.cuda.jit") or name.startswith("cupy."):
                if not name.startswith("triton.testing"):
                    return True
        return False

    def collect_module_attrs(self) -> None:
        own = self.mod.own_attrs
        for cls in self.mod.classes.values():
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    own.add(stmt.name)
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    own.update(t.id for target in targets for t in _flatten_targets(target) if isinstance(t, ast.Name))
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                own.update(t.attr for target in targets for t in _flatten_targets(target)
                           if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
                name = _fold_str(node.args[1])
                if name:
                    own.add(name)
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    continue
                held = self.nn_compute_module(node.value)
                if held:
                    self.mod.nn_attrs[target.attr] = (held, node.lineno)
                elif isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                        and node.value.func.id in self.mod.classes:
                    self.mod.local_attrs[target.attr] = node.value.func.id

    def nn_compute_module(self, value: ast.AST) -> str | None:
        """The torch.nn compute module an expression constructs (containers included)."""
        if not isinstance(value, ast.Call):
            return None
        name = self.resolve(value.func)
        if not name:
            return None
        if name in _NN_CONTAINERS:
            for inner in ast.walk(value):
                if inner is not value and isinstance(inner, ast.Call):
                    held = self.nn_compute_module(inner)
                    if held:
                        return f"{name}({held})"
            return None
        if name.startswith("torch.nn.") and not name.startswith("torch.nn.functional.") \
                and self.is_denied(name):
            return name
        return None

    def reachable(self) -> dict[str, str]:
        """Forward-time functions -> how they were reached (for the evidence)."""
        by_name: dict[str, list[_Func]] = {}
        for fn in self.mod.funcs:
            by_name.setdefault(fn.name, []).append(fn)
        main_classes = {"ModelNew"} if "ModelNew" in self.mod.classes else set(self.mod.classes)
        roots = [fn for fn in self.mod.funcs
                 if fn.cls in main_classes and fn.name in _ROOT_METHODS]
        # A local function stored as a value (`self.fn = self._impl`, a callback) runs later.
        value_refs = self.value_referenced_names()
        roots += [fn for fn in self.mod.funcs
                  if fn.name in value_refs and fn not in roots and not fn.jit and fn.name != "__init__"]
        seen: dict[str, str] = {fn.qualname: f"{fn.qualname}" for fn in roots}
        stack = list(roots)
        while stack:
            fn = stack.pop()
            for ref in self.referenced_names(fn.node):
                targets = list(by_name.get(ref, []))
                # Using a local class at forward time can run any of its methods (dunders,
                # autograd.Function.apply, properties), so all of them become reachable.
                cls = ref if ref in self.mod.classes else self.mod.local_attrs.get(ref)
                if cls:
                    targets += [f for f in self.mod.funcs if f.cls == cls]
                for target in targets:
                    if target.qualname not in seen and not target.jit:
                        seen[target.qualname] = f"{seen[fn.qualname]} -> {target.qualname}"
                        stack.append(target)
        return seen

    def value_referenced_names(self) -> set[str]:
        names: set[str] = set()
        for sub in ast.walk(self.tree):
            if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load):
                parent = self.parents.get(sub)
                if isinstance(parent, ast.Call) and parent.func is sub:
                    continue
                if isinstance(parent, ast.Attribute) or self.in_decorator(sub):
                    continue
                names.add(sub.id if isinstance(sub, ast.Name) else sub.attr)
        return names

    def host_only(self, fn: ast.AST) -> set[ast.AST]:
        """`_host_only_nodes`, once per function (reachability and the compute scan both ask)."""
        if fn not in self._host_only:
            self._host_only[fn] = _host_only_nodes(fn)
        return self._host_only[fn]

    def referenced_names(self, node: ast.AST) -> set[str]:
        names: set[str] = set()
        skip = self.host_only(node)
        for sub in _walk_own(node):
            if sub in skip:
                continue
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Attribute):
                names.add(sub.attr)
        return names



def is_denied_name(name: str, policy: LibraryPolicy | None = None) -> bool:
    """The static rule for one dotted name (used by the run-time library-call monitor)."""
    analyzer = _Analyzer(ast.Module(body=[], type_ignores=[]), "kernel.py", policy or LibraryPolicy(), None)
    return analyzer.is_denied(name) and _callable_or_unknown(name)
