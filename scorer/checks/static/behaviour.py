"""Input-statistics sniffing and cache-residency tricks: patterns real hacks use that neither the
library rule nor the integrity scan sees."""

from __future__ import annotations

import ast
import re

from scorer.checks.static.astutil import _fold_str, _Func, _walk_own
from scorer.checks.static.state import AnalyzerState

# Statistics of an input's values: what a kernel reads to tell test data from timing data.
_STATISTICS = frozenset({"abs", "mean", "std", "var", "norm", "allclose", "isclose", "equal", "isnan", "isinf",
                         "isfinite", "nanmean", "std_mean", "var_mean", "median", "nanmedian", "quantile",
                         "linalg.norm", "linalg.vector_norm"})

# L2 residency across calls: access policy windows (persisting lines survive the flush), the
# persisting carve-out, managed-memory prefetch, and PTX cache-policy instructions.
_RESIDENCY = re.compile(
    r"accessPolicyWindow|AccessPolicyWindow|cudaAccessPropertyPersisting|CU_ACCESS_PROPERTY_PERSISTING"
    r"|cudaLimitPersistingL2CacheSize|CU_LIMIT_PERSISTING_L2_CACHE_SIZE|cudaCtxResetPersistingL2Cache"
    r"|\b(?:cuda|cu|hip)StreamSetAttribute\b|\b(?:cuda|hip)GraphKernelNodeSetAttribute\b|\bhitProp\b|\bhitRatio\b"
    r"|\b(?:cuda|cu|hip)MemPrefetchAsync\b|\b(?:cuda|cu|hip)MemAdvise\b"
    r"|prefetch\.global\.L2|cp\.async\.bulk\.prefetch|createpolicy\.fractional|applypriority\.global")


class BehaviourScan(AnalyzerState):
    """input-sniffing and cache-residency (mixed into the analyzer)."""

    def scan_sniffing(self, fn: _Func) -> None:
        """A branch on statistics of an input's values whose branch does more than raise."""
        node = fn.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        inputs = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs} - {"self", "cls"}
        if node.args.vararg:
            inputs.add(node.args.vararg.arg)
        if not inputs:
            return
        # Names bound to a statistic of an input (`looks_like_test = x.std() < 1.1`) carry it.
        derived: dict[str, str] = {}
        for _ in range(2):
            for sub in _walk_own(node):
                if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
                    stat = self._input_statistic(sub.value, inputs) or _names_in(sub.value, derived)
                    if stat:
                        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                        for t in targets:
                            for n in ast.walk(t):
                                if isinstance(n, ast.Name):
                                    derived[n.id] = stat
        for sub in _walk_own(node):
            if isinstance(sub, (ast.If, ast.While, ast.IfExp)):
                stat = self._input_statistic(sub.test, inputs) or _names_in(sub.test, derived)
                if stat is None:
                    continue
                if isinstance(sub, ast.If) and all(_only_raises(b) for b in (sub.body, sub.orelse) if b):
                    continue  # input validation: a kernel may refuse inputs it cannot handle
                self.add("input-sniffing", sub, f"branch on {stat}",
                         f"forward's path depends on what the input's values look like (in {fn.qualname}); "
                         f"compute the same way for every input")

    def _input_statistic(self, test: ast.AST, inputs: set[str]) -> str | None:
        for sub in ast.walk(test):
            if not isinstance(sub, ast.Call):
                continue
            func = sub.func
            name = self.resolve(func) or ""
            stat = None
            if name.startswith("torch.") and name[len("torch."):] in _STATISTICS:
                stat, data = name, [*sub.args, *(k.value for k in sub.keywords)]
            elif isinstance(func, ast.Attribute) and func.attr in _STATISTICS and not name:
                stat, data = f".{func.attr}()", [func.value]
            else:
                continue
            if any(isinstance(n, ast.Name) and n.id in inputs for d in data for n in ast.walk(d)):
                return f"{stat} of an input"
        return None

    def scan_residency(self) -> None:
        """Names and strings (C++/PTX sources, cuda-python calls) that keep data in L2 across calls."""
        seen: set[str] = set()
        for node in ast.walk(self.tree):
            text = None
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            elif isinstance(node, ast.BinOp):
                text = _fold_str(node)
            elif isinstance(node, ast.Attribute):
                text = node.attr
            elif isinstance(node, ast.Name):
                text = node.id
            if not text:
                continue
            hits = [m.group(0) for m in _RESIDENCY.finditer(text)]
            new = [h for h in dict.fromkeys(hits) if h not in seen]
            if new:
                seen.update(new)
                self.add("cache-residency", node, ", ".join(new),
                         "keeps data resident in L2 across timed calls (the scorer flushes L2 between them)")


def _names_in(expr: ast.AST, derived: dict[str, str]) -> str | None:
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id in derived:
            return f"{derived[n.id]} (through '{n.id}')"
    return None


def _only_raises(body: list[ast.stmt]) -> bool:
    return bool(body) and all(isinstance(s, (ast.Raise, ast.Pass, ast.Expr)) and not (
        isinstance(s, ast.Expr) and not isinstance(s.value, ast.Constant)) for s in body) and any(
        isinstance(s, ast.Raise) for s in body)
