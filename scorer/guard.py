"""In-process runtime guard armed in the kernel worker (filled in by the anti-hack catalog work)."""

from __future__ import annotations

from pathlib import Path

from scorer.catalog import Finding


class RuntimeGuard:
    def __init__(self, kernel_path: Path) -> None:
        self.kernel_path = Path(kernel_path)

    def arm(self) -> None:
        """Call right before the kernel module is imported."""

    def check(self, phase: str) -> list[Finding]:
        """Call after each phase (load, correctness, timing); returns new findings."""
        return []
