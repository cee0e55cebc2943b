"""Library compute in forward-time code (baseline-library-call, try-fallback) and precision downcasts."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from scorer.checks.static.astutil import (
    _fold_str,
    _Func,
    _handler_nodes,
    _only_shape_metadata,
    _walk_module_level,
    _walk_own,
    sized_locals,
)
from scorer.checks.static.rules import (
    _FUNCTIONAL_GLUE,
    _HALF_METHODS,
    _HALF_NAMES,
    _NAME_CALLERS,
    _NUMPY_COMPUTE,
    _OTHER_COMPUTE_PREFIXES,
    _OTHER_DENIED,
    _OTHER_GLUE,
    _TENSOR_COMPUTE_METHODS,
    _TENSOR_METHOD_VALUES,
    _TORCH_DENY_OVERRIDES,
    _TORCH_GLUE,
    _TORCH_GLUE_PREFIXES,
    _TORCH_OPS_DENIED,
    _callable_or_unknown,
    _is_dtype_like,
    _policy_verdict,
)
from scorer.checks.static.state import AnalyzerState


class ComputeScan(AnalyzerState):
    """baseline-library-call, try-fallback and precision-downgrade (mixed into the analyzer)."""

    # --- baseline-library-call / try-fallback -----------------------------------------------------

    def is_denied(self, name: str) -> bool:
        verdict = _policy_verdict(name, self.policy)
        if verdict is not None:
            return verdict
        if name.startswith("triton.") or name.startswith("tl."):
            return False
        if name.startswith("torch."):
            if any(name.startswith(p) for p in _TORCH_DENY_OVERRIDES):
                return True
            if any(name.startswith(p) for p in _TORCH_OPS_DENIED):
                return True
            if name.startswith("torch.ops."):
                return False
            if any(name.startswith(p) or name == p.rstrip(".") for p in _TORCH_GLUE_PREFIXES):
                return False
            parts = name.split(".")
            if name.startswith("torch.nn.functional."):
                return parts[-1] not in _FUNCTIONAL_GLUE
            if name.startswith("torch.Tensor.") or name.startswith("torch.tensor."):
                return parts[-1] in _TENSOR_COMPUTE_METHODS
            if len(parts) == 2:
                if parts[1] in _TORCH_GLUE or parts[1][0].isupper() and parts[1] != "Tensor" and parts[1].endswith("Tensor"):
                    return False
                # dtypes and constants are not calls; judged only when called (see scan_compute)
                return True
            if name.startswith("torch.nn.") and len(parts) == 3:
                return parts[2][:1].isupper()  # nn.Linear, nn.Conv2d, nn.Softmax ... (modules)
            return True
        if name.startswith("numpy."):
            return name.split(".")[-1] in _NUMPY_COMPUTE or any(name.startswith(p) for p in _OTHER_COMPUTE_PREFIXES)
        if name in _OTHER_GLUE:
            return False
        return name in _OTHER_DENIED or any(name.startswith(p) for p in _OTHER_COMPUTE_PREFIXES)

    def denied_ref(self, node: ast.AST) -> str | None:
        """The denied op an expression names (a call's callee or a bare reference), if any."""
        name = self.resolve(node)
        if name and self.is_denied(name) and not _is_dtype_like(name) and _callable_or_unknown(name):
            return name
        return None

    def is_reference_model(self, node: ast.AST) -> bool:
        """`Model` that is not a class of this file: the task's reference, however imported."""
        if isinstance(node, ast.Name) and node.id == "Model":
            return "Model" not in self.mod.classes
        if isinstance(node, ast.Attribute) and node.attr == "Model":
            name = self.resolve(node)
            return name is None or not name.startswith(("torch.", "triton."))
        return False

    def own_attribute(self, node: ast.AST) -> bool:
        """`self.name` where `name` is an attribute this file gives its own objects (assigned on
        self, or defined in a local class body): what the object holds, not a tensor method of the
        same name (`self.inner = inner_dim` is an int, not `Tensor.inner`). nn compute modules held
        in attributes are judged by their own rule."""
        return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls") and node.attr in self.mod.own_attrs
                and node.attr not in self.mod.nn_attrs)

    def scan_compute(self, fn: _Func, via: str) -> None:
        handler_nodes = _handler_nodes(fn.node)
        host_only = self.host_only(fn.node)
        sizes = sized_locals(fn.node)
        for sub in _walk_own(fn.node):
            if sub in host_only:
                continue
            hit: str | None = None
            measured = False  # a torch op the run-time work share judges (scorer/checks/work.py)
            node: ast.AST = sub
            if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load) \
                    and self.is_reference_model(sub):
                hit = "Model (the task's reference)"
            elif isinstance(sub, ast.Call):
                callee = sub.func
                hit = self.denied_ref(callee)
                measured = _measured_at_run_time(hit) and _policy_verdict(hit or "", self.policy) is not True
                if hit and hit.startswith("numpy.") and _only_shape_metadata(sub, sizes):
                    hit = None  # np.prod(x.shape): host arithmetic on sizes, not the task's data
                if hit is None and isinstance(callee, ast.Attribute) and self.resolve(callee) is None:
                    method = callee.attr
                    receiver_attr = callee.value.attr if isinstance(callee.value, ast.Attribute) else None
                    measured = True
                    if isinstance(callee.value, ast.Name) and callee.value.id == "self" \
                            and method in self.mod.nn_attrs:
                        hit = f"self.{method}(...) ({self.mod.nn_attrs[method][0]})"
                    elif self.own_attribute(callee):
                        pass  # the object's own attribute or method, whatever its name
                    elif (method in _TENSOR_COMPUTE_METHODS
                          and _policy_verdict(f"torch.Tensor.{method}", self.policy) is not False):
                        hit = f"<tensor>.{method}()"
                    elif method in ("forward", "__call__", "_call_impl") and receiver_attr in self.mod.nn_attrs:
                        hit = f"self.{receiver_attr}.{method}() ({self.mod.nn_attrs[receiver_attr][0]})"
                    elif _policy_verdict(f"torch.Tensor.{method}", self.policy) is True:
                        hit = f"<tensor>.{method}()"
                        measured = False  # the suite denies it by name
                if hit is None:
                    hit = self.name_caller_hit(sub)
                    measured = hit is not None
                if hit is None and isinstance(callee, ast.Name) and callee.id == "getattr" and len(sub.args) >= 2:
                    base = self.resolve(sub.args[0])
                    attr = _fold_str(sub.args[1])
                    if base and base.startswith("torch") and attr is None:
                        hit = f"getattr({base}, <computed name>)"
                    elif base is None and attr in _TENSOR_COMPUTE_METHODS:
                        hit = f"getattr(<tensor>, {attr!r})"
                        measured = True
            elif isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load):
                parent = self.parents.get(sub)
                if isinstance(parent, ast.Call) and parent.func is sub:
                    continue  # judged as a call above
                if isinstance(parent, ast.Attribute):
                    continue  # only the outermost dotted name is judged
                hit = self.denied_ref(sub)
                measured = _measured_at_run_time(hit) and _policy_verdict(hit or "", self.policy) is not True
                if hit is None and isinstance(sub, ast.Attribute) and sub.attr in _TENSOR_METHOD_VALUES \
                        and self.resolve(sub) is None and not self.own_attribute(sub):
                    hit = f"<tensor>.{sub.attr} (bound compute method)"
                    measured = True
                if hit is None and isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                        and sub.value.id == "self" and sub.attr in self.mod.nn_attrs:
                    hit = f"self.{sub.attr} ({self.mod.nn_attrs[sub.attr][0]})"
                    measured = True
            elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
                hit, measured = "@ (matmul operator)", True
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.MatMult):
                hit, measured = "@= (matmul operator)", True
            if hit is None:
                continue
            if sub in handler_nodes:
                self.add("try-fallback", node, hit,
                         f"library/reference compute in an except/finally path of {fn.qualname}; a "
                         f"failing kernel must fail, not fall back")
            elif not measured:
                self.add("baseline-library-call", node, hit,
                         f"library compute at forward time (reached via {via}); write it as a kernel")
            else:
                self.library_ops.append(f"{self.file}:{getattr(node, 'lineno', 0)}: {hit} (reached via {via})")
        # calling a local copy of the reference Model class
        for sub in _walk_own(fn.node):
            if isinstance(sub, ast.Name) and sub.id == "Model" and "Model" in self.mod.classes \
                    and fn.cls != "Model":
                pattern = "try-fallback" if sub in handler_nodes else "baseline-library-call"
                self.add(pattern, sub, "Model", f"uses the reference Model class at forward time (via {via})")

    def scan_stored_ops(self, root: ast.AST, where: str, top_level_only: bool = False) -> None:
        """Initialisation code may call compute ops, but a compute op stored as a value (alias in a
        dict, default argument, attribute) is run later by forward, outside our reachability."""
        nodes: Iterable[ast.AST]
        if top_level_only:
            nodes = _walk_module_level(self.tree)
        else:
            nodes = _walk_own(root)
        for sub in nodes:
            if isinstance(sub, ast.Call) and (named := self.name_caller_hit(sub)):
                self.add("baseline-library-call", sub, named,
                         f"compute method wrapped as a callable in {where}, where forward can call it later")
                continue
            if not (isinstance(sub, (ast.Attribute, ast.Name)) and isinstance(sub.ctx, ast.Load)):
                continue
            parent = self.parents.get(sub)
            if isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Call) and parent.func is sub):
                continue
            if isinstance(parent, ast.Assign) and top_level_only and all(isinstance(t, ast.Name) for t in parent.targets) \
                    and not isinstance(self.parents.get(parent), ast.ClassDef):
                # A plain module-level alias: followed by name resolution instead. In a class body the
                # name is an attribute forward reaches as `self.act`, which resolution does not follow.
                continue
            if isinstance(parent, (ast.ImportFrom, ast.Import)):
                continue
            if self.in_decorator(sub):
                name = self.resolve(sub) or ""
                if not name.startswith(("torch.compile", "torch.jit", "torch._dynamo")):
                    continue
            hit = self.denied_ref(sub)
            if hit and not self.resolve_is_module_class(hit):
                owner = self.parents.get(parent) if isinstance(parent, ast.Assign) else None
                here = f"class {owner.name}" if isinstance(owner, ast.ClassDef) else where
                self.add("baseline-library-call", sub, hit,
                         f"compute op stored as a value in {here}, where forward can call it later")

    def name_caller_hit(self, call: ast.Call) -> str | None:
        """`operator.methodcaller("sigmoid")`: a compute method reached through its name string."""
        caller = self.resolve(call.func)
        if caller not in _NAME_CALLERS or not call.args:
            return None
        named = _fold_str(call.args[0])
        if named is not None and named.split(".")[0] in _TENSOR_COMPUTE_METHODS:
            return f"{caller}({named!r})"
        return None

    def in_decorator(self, node: ast.AST) -> bool:
        cur = node
        while cur in self.parents:
            parent = self.parents[cur]
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return cur in parent.decorator_list
            cur = parent
        return False

    @staticmethod
    def resolve_is_module_class(name: str) -> bool:
        # nn.Linear referenced as a type (isinstance checks, annotations) is not a stored op.
        last = name.split(".")[-1]
        return name.startswith("torch.nn.") and last[:1].isupper() and not name.startswith("torch.nn.functional")

    def scan_class_bases(self) -> None:
        for cls in self.mod.classes.values():
            hooks = [s.name for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and s.name in _SUBCLASS_HOOKS]
            if hooks and any(_is_tensor_class(self.resolve(b)) for b in cls.bases):
                # Its Python runs inside torch's own calls, where the function mode is popped and
                # their ATen ops are the call's (a red-team swish computed in one, behind `clone`).
                self.add("baseline-library-call", cls, f"class {cls.name}(torch.Tensor).{hooks[0]}",
                         "a tensor subclass whose hook runs inside torch's calls, out of the library "
                         "monitor's sight; write the kernel")
            for base in cls.bases:
                name = self.resolve(base)
                if isinstance(base, ast.Name) and base.id == "Model" and "Model" not in self.mod.classes:
                    self.add("baseline-library-call", base, f"class {cls.name}(Model)",
                             "inherits the task's reference Model")
                elif name and name.startswith("torch.nn.") and self.is_denied(name):
                    self.add("baseline-library-call", base, f"class {cls.name}({name})",
                             "inherits a torch.nn compute module")

    def scan_torch_op_overrides(self) -> None:
        """An implementation registered for torch's own ops from Python (`Library("aten", "IMPL")`,
        `torch.library.impl("aten::...")`): the monitor judges torch's ops by their names, and a
        glue op's name then runs the task (a red-team add+RMSNorm behind `view_as_real`)."""
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call) or self.resolve(node.func) not in _LIBRARY_REGISTRARS:
                continue
            target = _fold_str(node.args[0]) if node.args else None
            if target is not None and target.split("::")[0].split(".")[0] in _TORCH_OWN_NAMESPACES:
                self.add("baseline-library-call", node, f"{self.resolve(node.func)}({target!r})",
                         "registers an implementation of torch's own ops; define an op of your own namespace")

    # --- precision ---------------------------------------------------------------------------------

    def compared_only(self, node: ast.AST) -> bool:
        """`x.dtype == torch.float16`, `x.dtype in (torch.float16, ...)`: a dtype test computes nothing."""
        parent = self.parents.get(node)
        while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, ast.Compare)

    def half_use(self, sub: ast.AST) -> str | None:
        if isinstance(sub, ast.Attribute) and sub.attr in _HALF_NAMES and not self.compared_only(sub):
            name = self.resolve(sub) or ""
            if name.startswith(("torch.", "triton.", "numpy.")):
                return name
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                and sub.func.attr in _HALF_METHODS and not sub.args and self.resolve(sub.func) is None:
            return f".{sub.func.attr}()"
        elif (isinstance(sub, ast.Constant) and isinstance(sub.value, str)
              and sub.value in ("fp16", "bf16", "float16", "bfloat16", "fp8")):
            parent = self.parents.get(sub)
            if isinstance(parent, ast.keyword) or isinstance(parent, ast.Call):
                return repr(sub.value)
        return None

    def dtype_dispatch_branches(self, root: ast.AST) -> set[ast.AST]:
        """Nodes in the half-precision arms of a dispatch (`if DTYPE == 0: ... elif DTYPE == 1:
        .to(tl.float16)`, `elif x.dtype == torch.bfloat16:`) that also has an arm without half
        precision: the arm a float32 task takes. Such arms serve half-precision inputs."""
        skip: set[ast.AST] = set()
        for node in _walk_own(root):
            if not isinstance(node, ast.If) or not _is_dispatch_test(node.test):
                continue
            parent = self.parents.get(node)
            if isinstance(parent, ast.If) and parent.orelse == [node]:
                continue  # handled from the head of its chain
            arms: list[list[ast.stmt]] = []
            cur: ast.AST | list[ast.stmt] = node
            while isinstance(cur, ast.If) and _is_dispatch_test(cur.test):
                arms.append(cur.body)
                cur = cur.orelse[0] if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) else cur.orelse
                if isinstance(cur, list):
                    if cur:
                        arms.append(cur)
                    break
            nodes = [[n for stmt in arm for n in ast.walk(stmt)] for arm in arms]
            half = [any(self.half_use(n) for n in arm) for arm in nodes]
            if len(arms) > 1 and not all(half):
                for arm, is_half in zip(nodes, half, strict=True):
                    if is_half:
                        skip.update(arm)
        return skip

    def scan_precision(self, root: ast.AST, jit: bool) -> None:
        if not self.check_precision:
            return
        dispatched = self.dtype_dispatch_branches(root)
        for sub in _walk_own(root):
            what = None if sub in dispatched else self.half_use(sub)
            if what:
                self.add("precision-downgrade", sub, what,
                         "reduced-precision type in " + ("a Triton kernel" if jit else "forward-time code")
                         + "; flagged for audit, the dynamic error check decides", severity="flag")


def _is_dispatch_test(test: ast.AST) -> bool:
    """`NAME == const`, `x.dtype == torch.float16`, `x.dtype in (...)`: a choice among fixed cases."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In, ast.Is))):
        return False
    return isinstance(test.left, (ast.Name, ast.Attribute)) and all(
        isinstance(c, (ast.Constant, ast.Attribute, ast.Tuple, ast.List)) for c in test.comparators)


# torch names whose work the run-time monitor measures (a TorchFunctionMode sees the call and the
# shapes); whether they are the task's work is decided by the measured share, not by the name.
# Compilers, custom-op and graph machinery, raw ATen entry points and other libraries are judged
# here: the monitor cannot see the work they do. So is DLPack's export, a C function no mode meets:
# what numpy (or any consumer) computes on the data it hands out is out of every monitor's sight
# (a red-team swish ran numpy's operators on it, 2026-12-08); `Tensor.__dlpack__` is counted at run
# time (dynamic.HOST_EXPORTS). And vmap: under it the monitor sees each op at one example's shape,
# so a whole batch's work counted as one row's (a red-team softmax, 2026-12-08).
_NOT_MEASURED = ("torch.compile", "torch.jit", "torch._dynamo", "torch._inductor", "torch.cuda.", "torch.ops.",
                 "torch.export", "torch.fx", "torch._C", "torch.backends.", "torch._scaled_mm", "torch.sparse",
                 "torch.utils.dlpack.to_dlpack", "torch.to_dlpack", "torch.vmap", "torch.func.", "torch._functorch",
                 # Higher-order ops run their branches' ops where no mode of the monitor counts them
                 # (a red-team softmax inside torch.cond, 2026-12-08).
                 "torch.cond", "torch.while_loop", "torch._higher_order_ops", "torch.associative_scan")


_SUBCLASS_HOOKS = frozenset({"__torch_function__", "__torch_dispatch__"})
_LIBRARY_REGISTRARS = frozenset({"torch.library.Library", "torch.library.impl", "torch.library.register_kernel",
                                 "torch.library.register_fake", "torch.library.register_autocast",
                                 "torch.library.register_torch_dispatch", "torch.library.register_vmap",
                                 "torch.library._impl", "torch.library.fallthrough_kernel"})
_TORCH_OWN_NAMESPACES = frozenset({"aten", "prim", "prims", "quantized", "_c10d_functional", "c10d"})


def _is_tensor_class(name: str | None) -> bool:
    return name in ("torch.Tensor", "torch._tensor.Tensor", "torch._C.TensorBase", "torch.nn.Parameter")


def _measured_at_run_time(name: str | None) -> bool:
    return name is not None and name.startswith("torch.") and not name.startswith(_NOT_MEASURED)
