"""AST analysis of a solution's source (filled in by the anti-hack catalog work)."""

from __future__ import annotations

from scorer.catalog import Finding
from scorer.suites import LibraryPolicy


def analyze_source(source: str, filename: str, policy: LibraryPolicy) -> list[Finding]:
    return []
