"""AST analysis of a solution's source, run by the judge before the kernel is ever imported.

What it judges and how (docs/HACKS.md has the full rationale):

* Names are resolved, not matched: every ``import``/``from ... import ... as`` and every plain
  ``alias = torch.matmul`` assignment is followed, and ``getattr(mod, "mat" + "mul")`` is
  constant-folded. A non-constant ``getattr`` on a torch module is itself evidence.
* Only code that can run at forward time is judged for library compute: ``forward``/``__call__``
  of every class in the file and, transitively, every local function or method they reference
  (by name, ``self.name`` or ``Class.name``), plus lambdas and nested functions wherever they are
  written (they are deferred code). ``__init__`` may compute (initialisation is not the task),
  but may not *store* a compute op for later (``self.act = torch.relu``).
* ``@triton.jit`` bodies are device code: they are scanned for precision downcasts and nothing
  else. CUDA C++ strings (``load_inline`` sources) are scanned for ATen/cuBLAS/cuDNN calls.
* Integrity patterns (threads, patching, introspection) are judged everywhere in the file: a
  monkeypatch at import time is as harmful as one in forward.
* kernel.py is a dialect a machine can check: computed attribute names, the interpreter's tables
  (module table, frames, gc, builtins), code built from strings, ctypes, descriptor plumbing and
  planted modules are refused as ``obfuscated-code``, each with its fix.

Modules: ``rules`` (tables), ``analyzer`` (names, reachability, the run), ``compute``
(library calls, precision), ``integrity`` (threads, patching, introspection, streams), ``dialect``
(obfuscated-code), ``native``
(C++ strings, native tampering), ``astutil`` (walks and folding).
"""

from scorer.checks.static.analyzer import analyze_source, forward_library_ops, is_denied_name

__all__ = ["analyze_source", "forward_library_ops", "is_denied_name"]
