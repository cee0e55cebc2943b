"""What the scans read from the analyzer they are mixed into (`analyzer._Analyzer`).

Each scan is a mixin whose methods use the analyzer's parsed file, resolver and findings; this
base names them once so that a scan is checked against them. It sets nothing at run time: the
analyzer sets the fields, and the methods are declared for the type checker only, so a scan's
call still reaches the analyzer's (or another scan's) definition.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scorer.checks.catalog import Severity
from scorer.checks.static.astutil import _Module
from scorer.tasks.suites import LibraryPolicy


class AnalyzerState:
    tree: ast.Module
    file: str  # the solution's file name, as findings quote it
    policy: LibraryPolicy
    check_precision: bool  # False when the task itself is half precision
    mod: _Module
    parents: dict[ast.AST, ast.AST]
    library_ops: list[str]

    if TYPE_CHECKING:
        def add(self, pattern: str, node: ast.AST, what: str, why: str, severity: Severity = "reject") -> None: ...

        def resolve(self, node: ast.AST | None) -> str | None: ...

        def host_only(self, fn: ast.AST) -> set[ast.AST]: ...

        def locally_defined(self, name: str) -> bool: ...

        def native_source_nodes(self) -> set[ast.AST]: ...

        def load_inline_calls(self) -> Iterator[tuple[ast.Call, list[ast.expr]]]: ...
