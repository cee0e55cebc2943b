"""Native sources (load_inline strings) and native-tampering tokens in any string."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from scorer.checks.static.astutil import _fold_str, _strip_cpp_comments
from scorer.checks.static.rules import (
    _C_LIKE,
    _CPP_DISPATCH_BYPASS,
    _CPP_LIBRARY_CALL,
    _CPP_MARKERS,
    _CPP_SIDE_STREAM,
    _CPP_STREAM_JOIN,
    _CPP_THREADS,
    _NATIVE_CLOCK_NAMES,
    _NATIVE_TAMPER,
)
from scorer.checks.static.state import AnalyzerState


class NativeScan(AnalyzerState):
    """C++ library calls, threads and streams, and native tampering tokens (mixed into the analyzer)."""

    # --- CUDA C++ --------------------------------------------------------------------------------

    def scan_cpp_strings(self) -> None:
        self.scan_native_tampering()
        for sub in ast.walk(self.tree):
            if not (isinstance(sub, ast.Constant) and isinstance(sub.value, str) and len(sub.value) > 20):
                continue
            if not _CPP_MARKERS.search(sub.value):
                continue
            text = _strip_cpp_comments(sub.value)
            for m in _CPP_THREADS.finditer(text):
                line = sub.lineno + text.count("\n", 0, m.start())
                self.add("thread-injection", ast.Constant(value=None, lineno=line), f"C++ {m.group(0).strip()}",
                         "host threads or callbacks run work outside the timed region")
            side = _CPP_SIDE_STREAM.search(text)
            if side and not _CPP_STREAM_JOIN.search(text):
                line = sub.lineno + text.count("\n", 0, side.start())
                self.add("stream-injection", ast.Constant(value=None, lineno=line), f"C++ {side.group(0).strip()}",
                         "launches on its own stream and never waits for it")
            for m in _CPP_LIBRARY_CALL.finditer(text):
                line = sub.lineno + text.count("\n", 0, m.start())
                snippet = m.group(0).strip()
                if re.match(r"(?:at|torch)::_(?:\w+)", snippet) and not re.match(r"(?:at|torch)::_scaled_mm", snippet):
                    continue  # private helpers like at::_ops are too broad to judge by name
                pattern = "baseline-library-call"
                key_node = ast.Constant(value=None, lineno=line)
                self.add(pattern, key_node, f"C++ {snippet}",
                         "library compute (ATen/cuBLAS/cuDNN) inside an extension; write the kernel")
            for m in _CPP_DISPATCH_BYPASS.finditer(text):
                line = sub.lineno + text.count("\n", 0, m.start())
                self.add("baseline-library-call", ast.Constant(value=None, lineno=line), f"C++ {m.group(0).strip()}",
                         "ATen reached past the dispatcher, where the library's work is counted; write the kernel")


    def load_inline_calls(self) -> Iterator[tuple[ast.Call, list[ast.expr]]]:
        """Each load_inline/load_cpp_inline call, with the expressions it is given as sources."""
        for call in (node for node in ast.walk(self.tree) if isinstance(node, ast.Call)):
            if (self.resolve(call.func) or "").rsplit(".", 1)[-1] in ("load_inline", "load_cpp_inline"):
                yield call, list(call.args[1:3]) + [k.value for k in call.keywords if k.arg in ("cpp_sources", "cuda_sources")]

    def native_source_nodes(self) -> set[ast.AST]:
        """Expressions passed as load_inline/load sources (directly or through a module-level name)."""
        assigned: dict[str, list[ast.AST]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append(node.value)
        out: set[ast.AST] = set()
        for _call, args in self.load_inline_calls():
            for a in args:
                for v in [a] + assigned.get(a.id, []) if isinstance(a, ast.Name) else [a]:
                    out.update(e for e in ast.walk(v) if isinstance(e, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)))
        return out

    def scan_native_tampering(self) -> None:
        native = self.native_source_nodes()
        for node in ast.walk(self.tree):
            text: str | None
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            elif isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call)) and \
                    not isinstance(self.parents.get(node), (ast.BinOp, ast.JoinedStr)):
                text = _fold_str(node)  # "ml_" + "meth": the pieces alone name nothing
                if text is None or isinstance(node, ast.Call) and text == "":
                    continue
            else:
                continue
            c_like = node in native or bool(_C_LIKE.search(text))
            code = _strip_cpp_comments(text) if c_like else text
            checks = list(_NATIVE_TAMPER)
            if c_like:
                checks.append((_NATIVE_CLOCK_NAMES, "timer-patching",
                               "native code that names the scorer's clock (to look it up and rewrite it)"))
            for regex, pattern, why in checks:  # one finding per string and kind, naming every token
                hits = list(regex.finditer(code))
                if hits:
                    line = getattr(node, "lineno", 0) + code.count("\n", 0, hits[0].start())
                    tokens = ", ".join(dict.fromkeys(m.group(0) for m in hits))
                    self.add(pattern, ast.Constant(value=None, lineno=line), f"native source naming {tokens}", why)
