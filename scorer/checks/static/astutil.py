"""AST helpers shared by the scans: functions found in the file, string folding, walks."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeGuard


@dataclass
class _Func:
    """A function, method or lambda body, with where it lives."""

    node: ast.AST
    qualname: str
    cls: str | None
    name: str
    jit: bool = False
    deferred: bool = False  # a lambda or nested function: runs later, wherever it is written
    in_main_guard: bool = False


@dataclass
class _Module:
    aliases: dict[str, str] = field(default_factory=dict)
    funcs: list[_Func] = field(default_factory=list)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    # self.<attr> -> the torch.nn compute module it holds (from an assignment in any method).
    nn_attrs: dict[str, tuple[str, int]] = field(default_factory=dict)
    # self.<attr> -> a local class instantiated into it.
    local_attrs: dict[str, str] = field(default_factory=dict)
    # Names that are attributes of this file's own objects: assigned on `self` (or `setattr(self,
    # "name", ...)`) in any method, or defined in a local class body (fields, methods, properties).
    # `self.inner` is then the object's attribute, not the tensor method `Tensor.inner`.
    own_attrs: set[str] = field(default_factory=set)


_SHAPE_ATTRS = frozenset({"shape", "ndim"})
_SHAPE_METHODS = frozenset({"size", "stride", "numel", "dim", "element_size"})


def _only_shape_metadata(call: ast.Call, sized_names: frozenset[str] = frozenset()) -> bool:
    """Every argument of the call is made of sizes: constants, `.shape`, `.size()`, `len(...)`,
    `int(...)`, and names the function only ever binds to such sizes (`sized_names`)."""
    args = list(call.args) + [k.value for k in call.keywords]
    return bool(args) and all(_sized(a, sized_names) for a in args)


def _sized(node: ast.AST, names: frozenset[str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool) or node.value is None
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return node.attr in _SHAPE_ATTRS
    if isinstance(node, ast.Subscript):
        return _sized(node.value, names)
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _SHAPE_METHODS:
            return all(_sized(a, names) for a in node.args)
        if isinstance(f, ast.Name) and f.id in ("int", "float", "abs", "round", "min", "max"):
            return all(_sized(a, names) for a in node.args)
        return isinstance(f, ast.Name) and f.id == "len"
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_sized(e, names) for e in node.elts)
    if isinstance(node, ast.Starred):
        return _sized(node.value, names)
    if isinstance(node, ast.BinOp):
        return _sized(node.left, names) and _sized(node.right, names)
    if isinstance(node, ast.UnaryOp):
        return _sized(node.operand, names)
    return False


def sized_locals(fn: ast.AST) -> frozenset[str]:
    """Local names that every binding in `fn` sets to a size (`lead = x.shape[:-1]`, `B, H, S, D =
    q.shape`, `d = k.shape[-1]`): numpy's arithmetic on them is host work on sizes, not on the
    task's data. A name bound anywhere to something else (a loop target, a tensor) is not one."""
    bindings: dict[str, list[ast.AST | None]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(target, node.value, bindings)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            _bind(node.target, node.value if isinstance(node, ast.AnnAssign) else None, bindings)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr, ast.comprehension)):
            for target in _targets_of(node):
                _bind(target, None, bindings)
    sized: frozenset[str] = frozenset()
    for _ in range(3):  # names defined from names defined from sizes
        sized = frozenset(n for n, values in bindings.items()
                          if all(v is not None and _sized(v, sized) for v in values))
    return sized


def _targets_of(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _bind(target: ast.AST, value: ast.AST | None, bindings: dict[str, list[ast.AST | None]]) -> None:
    if isinstance(target, ast.Name):
        bindings.setdefault(target.id, []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        # `B, H, S, D = q.shape`: each element of a size is a size; other unpackings are unknown.
        sized = value is not None and _sized(value, frozenset()) and not isinstance(value, (ast.Tuple, ast.List))
        part = value if sized else None
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for i, element in enumerate(target.elts):
            _bind(element.value if isinstance(element, ast.Starred) else element,
                  values[i] if values is not None else part, bindings)


def _fold_str(node: ast.AST | None) -> str | None:
    """Constant-fold string expressions ("mat" + "mul", f"{'mat'}mul", "".join([...]))."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold_str(node.left), _fold_str(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and (folded := _fold_str(v.value)) is not None:
                parts.append(folded)
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep = _fold_str(node.func.value)
        items = [_fold_str(e) for e in node.args[0].elts]
        folded_items = [i for i in items if i is not None]
        if sep is not None and len(folded_items) == len(items):
            return sep.join(folded_items)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        base = _fold_str(node.value)
        s = node.slice
        bounds: list[int | None] = []
        for b in (s.lower, s.upper, s.step):
            if b is None:
                bounds.append(None)
            elif isinstance(b, ast.Constant) and isinstance(b.value, int):
                bounds.append(b.value)
        if base is not None and len(bounds) == 3:  # every bound absent or a literal int
            return base[slice(bounds[0], bounds[1], bounds[2])]
    return None


def _is_main_guard(node: ast.If) -> bool:
    """`if __name__ == "__main__":` exactly (either side): its body never runs under the scorer.
    Any other test on `__name__` (`!=`, `in`) guards code that does run there."""
    t = node.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
        return False
    sides = (t.left, t.comparators[0])
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and \
        any(isinstance(b, ast.Constant) and b.value == "__main__" for b in sides)


def main_guard_nodes(tree: ast.Module) -> set[ast.AST]:
    """Every node inside the body of a top-level `if __name__ == "__main__":` (not its else)."""
    inside: set[ast.AST] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and _is_main_guard(stmt):
            for part in stmt.body:
                inside.update(ast.walk(part))
    return inside


def _sub_bodies(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        body = getattr(stmt, name, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            yield body
    for handler in getattr(stmt, "handlers", []) or []:
        yield handler.body
    for case in getattr(stmt, "cases", []) or []:
        yield case.body


def _walk_own(root: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions, lambdas or classes
    (those are analysed as functions of their own)."""
    stack: list[ast.AST] = []
    if isinstance(root, ast.Lambda):
        stack.append(root.body)
    elif isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef)):
        stack.extend(root.body)
        stack.extend(d for d in root.args.defaults + root.args.kw_defaults if d is not None)
    else:
        stack.extend(ast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    stack.extend(d for d in child.args.defaults + child.args.kw_defaults if d is not None)
                    stack.extend(child.decorator_list)
                continue
            stack.append(child)


def _walk_module_level(tree: ast.Module) -> Iterator[ast.AST]:
    """Module and class-body code (including decorators and default arguments), skipping
    function bodies, lambdas and the `if __name__ == "__main__"` block."""
    stack: list[ast.AST] = []
    for s in tree.body:
        # The main block's else runs at import; its body never does.
        stack.extend(s.orelse if isinstance(s, ast.If) and _is_main_guard(s) else [s])
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(node.decorator_list)
            stack.extend(d for d in node.args.defaults + node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.Lambda):
            continue
        for child in ast.iter_child_nodes(node):
            stack.append(child)


def _own_lambdas(fn: ast.AST) -> Iterator[ast.Lambda]:
    for node in _walk_own(fn):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Lambda):
                yield child


def _host_only_nodes(fn: ast.AST) -> set[ast.AST]:
    """Nodes of branches that run only when one of the function's own arguments is not on a GPU
    (`if not x.is_cuda: return torch_version(x)`): dead code when scored on a GPU, so a CPU
    fallback there is style, not a library call. Scored on CPU such a branch does run, and the
    runtime library-call monitor reports it. The tested tensor must be an argument not rebound
    before the test (nor in a loop around it), so the kernel cannot point the test at a CPU
    tensor of its own."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    a = fn.args
    params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} - {"self", "cls"}
    own = list(_walk_own(fn))
    same_device = {id(node.targets[0]) for node in own if _keeps_device(node)}
    stores: dict[str, list[int]] = {}
    for node in own:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in same_device:
            stores.setdefault(node.id, []).append(node.lineno)
    in_loop = {sub for node in own if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) for sub in ast.walk(node)}

    def off_gpu(test: ast.AST, inputs: set[str]) -> bool | None:
        """True: the test holds only off the GPU; False: only on it; None: neither."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = off_gpu(test.operand, inputs)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            return True if all(off_gpu(v, inputs) is True for v in test.values) else None
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id in inputs:
            return {"is_cuda": False, "is_cpu": True}.get(test.attr)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right, op = test.left, test.comparators[0], test.ops[0]
            if isinstance(left, ast.Constant):
                left, right = right, left
            on_device_type = (isinstance(left, ast.Attribute) and left.attr == "type"
                              and isinstance(left.value, ast.Attribute) and left.value.attr == "device"
                              and isinstance(left.value.value, ast.Name) and left.value.value.id in inputs)
            if on_device_type and isinstance(right, ast.Constant) and right.value in ("cpu", "cuda") \
                    and isinstance(op, (ast.Eq, ast.NotEq)):
                return (right.value == "cpu") == isinstance(op, ast.Eq)
        return None

    skip: set[ast.AST] = set()
    for node in [fn, *own]:  # _walk_own yields no nested function, so every block here is fn's own
        for block in ("body", "orelse", "finalbody"):
            stmts = getattr(node, block, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                if not isinstance(stmt, ast.If) or stmt in in_loop:
                    continue
                unbound = {n for n in params if all(line > stmt.lineno for line in stores.get(n, []))}
                side = off_gpu(stmt.test, unbound)
                host = stmt.body if side is True else stmt.orelse if side is False else []
                if side is False and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                    host = host + stmts[i + 1:]  # `if x.is_cuda: return launch(x)` then the CPU path
                for h in host:
                    skip.update(ast.walk(h))
    return skip


_DEVICE_KEEPING_METHODS = frozenset({"contiguous", "view", "reshape", "flatten", "transpose", "permute",
                                     "squeeze", "unsqueeze", "expand", "detach", "float", "clone", "view_as"})


def _keeps_device(node: ast.AST) -> TypeGuard[ast.Assign]:
    """`x = x.contiguous()` and the like: x stays on its device."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr in _DEVICE_KEEPING_METHODS
            and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == node.targets[0].id)


def _handler_nodes(fn: ast.AST) -> set[ast.AST]:
    """Every node inside an except handler or finally block of this function."""
    inside: set[ast.AST] = set()
    for node in _walk_own(fn):
        if isinstance(node, ast.Try) or (hasattr(ast, "TryStar") and isinstance(node, ast.TryStar)):
            blocks = [h.body for h in node.handlers] + [node.finalbody]
            for block in blocks:
                for stmt in block:
                    for sub in ast.walk(stmt):
                        inside.add(sub)
    return inside


def _flatten_targets(target: ast.AST) -> Iterator[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _flatten_targets(elt)
    else:
        yield target


def _strip_cpp_comments(text: str) -> str:
    # Keep newlines so line numbers in the evidence stay right.
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)
